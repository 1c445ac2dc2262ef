package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("engram "+name, flag.ContinueOnError)
	// parseArgs says what was wrong in one line, and -h prints engram help
	// NAME: not the flag package's own line followed by every flag.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// flagError is a flag the flag package refused: one line, exit 2.
type flagError struct{ cmd, msg string }

func (e flagError) Error() string {
	return fmt.Sprintf("%s: %s; run 'engram help %s'", e.cmd, e.msg, e.cmd)
}

func (e flagError) Is(target error) bool { return target == errUsage }

// helpRequest is -h or --help given to a command: exit 0 after its help.
type helpRequest struct{ cmd string }

func (h helpRequest) Error() string { return "help for " + h.cmd }

// parse parses args, turning -h and bad flags into a usage error (the flag
// package has already said what was wrong). Flags may come after the
// positional arguments too (engram ingest FILE --dry-run); "--" ends them.
func parse(fs *flag.FlagSet, args []string) error { return parseArgs(fs, args, false) }

// parseExpr is parse for commands whose positional arguments form a filter
// expression: there an argument with one dash that names no flag is a
// negated term (-tag:demo), not a mistake.
func parseExpr(fs *flag.FlagSet, args []string) error { return parseArgs(fs, args, true) }

// parseNone is parse for commands that take no positional arguments.
func parseNone(fs *flag.FlagSet, args []string, e *env) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "engram: unexpected argument %s; run 'engram help'\n", quoteArg(fs.Arg(0)))
		return errUsage
	}
	return nil
}

func parseArgs(fs *flag.FlagSet, args []string, exprs bool) error {
	var pos []string
	for i := 0; i < len(args); {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			i++
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil && exprs && !strings.HasPrefix(a, "--") && name != "h" && name != "help" {
			pos = append(pos, a)
			i++
			continue
		}
		n := 1 // the flag, and its value when given as the next argument
		if f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			n = 2
		}
		if err := fs.Parse(args[i : i+n]); err != nil {
			cmd := strings.TrimPrefix(fs.Name(), "engram ")
			if errors.Is(err, flag.ErrHelp) {
				return helpRequest{cmd}
			}
			return flagError{cmd, strings.Replace(err.Error(), " -"+name, " --"+name, 1)}
		}
		i += n
	}
	// Leave the positional arguments as fs.Args.
	return fs.Parse(append([]string{"--"}, pos...))
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// dataDir resolves the data directory: --data, else ENGRAM_DATA, else
// $XDG_DATA_HOME/engram, else ~/.local/share/engram.
func dataDir(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if d := getenv("ENGRAM_DATA"); d != "" {
		return d
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "engram")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "engram")
}
