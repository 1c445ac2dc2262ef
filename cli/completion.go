package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// runCompletion prints a completion script for bash, zsh or fish: the
// commands, and each command's flags, from the command table itself.
func runCompletion(_ context.Context, e *env, args []string) error {
	gen := map[string]func(io.Writer, []compCommand){"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}
	if len(args) != 1 || gen[args[0]] == nil {
		fmt.Fprintln(e.stderr, "usage: engram completion bash|zsh|fish\n\n"+
			"  bash: source <(engram completion bash)\n"+
			"  zsh:  engram completion zsh > \"${fpath[1]}/_engram\"\n"+
			"  fish: engram completion fish > ~/.config/fish/completions/engram.fish")
		return errUsage
	}
	gen[args[0]](e.stdout, compCommands(e))
	return nil
}

// compCommand is a command as a completion script needs it.
type compCommand struct {
	name, summary string
	flags         []*flag.Flag
}

func compCommands(e *env) []compCommand {
	var out []compCommand
	for _, c := range commands() {
		cc := compCommand{name: c.name, summary: c.summary}
		if c.flags != nil {
			c.flags(e).VisitAll(func(f *flag.Flag) { cc.flags = append(cc.flags, f) })
		}
		out = append(out, cc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func flagNames(c compCommand) string {
	var names []string
	for _, f := range c.flags {
		names = append(names, "--"+f.Name)
	}
	return strings.Join(names, " ")
}

func bashCompletion(w io.Writer, cs []compCommand) {
	var names []string
	fmt.Fprint(w, "# bash completion for engram: source <(engram completion bash)\n_engram() {\n")
	fmt.Fprint(w, "  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n  case $cmd in\n")
	for _, c := range cs {
		names = append(names, c.name)
		fmt.Fprintf(w, "    %s) opts=%q ;;\n", c.name, flagNames(c))
	}
	ui := cs[0] // the inspector's flags when the first word is one
	for _, c := range cs {
		if c.name == "ui" {
			ui = c
		}
	}
	fmt.Fprintf(w, "    *) opts=%q ;;\n  esac\n", flagNames(ui))
	fmt.Fprintf(w, "  if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(names, " "))
	fmt.Fprint(w, "  elif [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\ncomplete -F _engram engram\n")
}

func zshCompletion(w io.Writer, cs []compCommand) {
	fmt.Fprint(w, "#compdef engram\n# zsh completion for engram: engram completion zsh > \"${fpath[1]}/_engram\"\n_engram() {\n  local -a cmds\n  cmds=(\n")
	for _, c := range cs {
		fmt.Fprintf(w, "    %s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, "  )\n  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then\n    _describe command cmds\n    return\n  fi\n  case $words[2] in\n")
	for _, c := range cs {
		fmt.Fprintf(w, "    %s) _arguments", c.name)
		for _, f := range c.flags {
			fmt.Fprintf(w, " %s", zshQuote("--"+f.Name+"["+zshBracket(f.Usage)+"]"))
		}
		fmt.Fprint(w, " '*:file:_files' ;;\n")
	}
	fmt.Fprint(w, "    *) _files ;;\n  esac\n}\n_engram \"$@\"\n")
}

func fishCompletion(w io.Writer, cs []compCommand) {
	fmt.Fprint(w, "# fish completion for engram: engram completion fish > ~/.config/fish/completions/engram.fish\n")
	for _, c := range cs {
		fmt.Fprintf(w, "complete -c engram -n __fish_use_subcommand -f -a %s -d %s\n", fishQuote(c.name), fishQuote(firstSentence(c.summary)))
		for _, f := range c.flags {
			fmt.Fprintf(w, "complete -c engram -n %s -l %s -d %s\n", fishQuote("__fish_seen_subcommand_from "+c.name), f.Name, fishQuote(firstSentence(f.Usage)))
		}
	}
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// zshBracket keeps a description inside _arguments' [...]: ] and : end it.
func zshBracket(s string) string {
	return strings.NewReplacer("]", ")", "[", "(", ":", " ").Replace(firstSentence(s))
}

// firstSentence is a usage text up to its first ";" or "(": enough for a
// completion menu.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
