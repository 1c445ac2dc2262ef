package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

func runHelp(_ context.Context, e *env, args []string) error {
	if len(args) > 0 {
		for _, c := range commands() {
			if c.name == args[0] {
				fmt.Fprintf(e.stdout, "engram %s %s\n\n%s\n", c.name, c.args, c.summary)
				if c.flags != nil {
					printFlags(e.stdout, c.flags(e))
				}
				return nil
			}
		}
		fmt.Fprintf(e.stderr, "engram: no command %s; %s\n", quoteArg(args[0]), commandHint(args[0]))
		return errUsage
	}
	fmt.Fprint(e.stdout, "engram: a terminal inspector for the experience streams of AI agents.\n\nUsage:\n  engram COMMAND [flags] [args]\n\nCommands:\n")
	cs := commands()
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(e.stdout, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(e.stdout, "\nRun 'engram help COMMAND' for a command's flags.\n")
	return nil
}

// printFlags describes a command's flags: its own first, then the config
// file's, then the settings' grouped by area, in the settings table's
// order.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	settings := map[string]setting{}
	var areas []string
	for _, s := range settingsTable {
		if s.flag != "" {
			settings[s.flag] = s
			if a := settingArea(s.key); !slices.Contains(areas, a) {
				areas = append(areas, a)
			}
		}
	}
	const own, file = "Flags", "Config file"
	groups := map[string][]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		switch _, ok := settings[f.Name]; {
		case ok:
		case f.Name == "config" || f.Name == "profile":
			groups[file] = append(groups[file], f)
		default:
			groups[own] = append(groups[own], f)
		}
	})
	for _, s := range settingsTable {
		if f := fs.Lookup(s.flag); s.flag != "" && f != nil {
			groups[settingArea(s.key)] = append(groups[settingArea(s.key)], f)
		}
	}
	for _, g := range append([]string{own, file}, areas...) {
		if len(groups[g]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, f := range groups[g] {
			printFlag(w, f, settings[f.Name])
		}
	}
}

// printFlag prints one flag as the flag package does, with the type a
// setting's field holds.
func printFlag(w io.Writer, f *flag.Flag, s setting) {
	typ, usage := flag.UnquoteUsage(f)
	if s.to != nil && !s.isBool() {
		switch s.to.(type) {
		case *[]string:
			typ = "list"
		case *int:
			typ = "int"
		case *time.Duration:
			typ = "duration"
		case *searchWindow:
			typ = "N|all"
		default:
			typ = "string"
		}
	}
	line := "  --" + f.Name
	if typ != "" {
		line += " " + typ
	}
	switch f.DefValue {
	case "", "0", "false", "0s":
	default:
		usage += " (default " + f.DefValue + ")"
	}
	fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
}

// settingArea is the heading of a setting's flag in help, by its key.
func settingArea(key string) string {
	prefix, _, _ := strings.Cut(key, ".")
	switch prefix {
	case "s3":
		return "S3 archive (--archive s3)"
	case "opensearch":
		return "OpenSearch index (--index opensearch)"
	case "kafka":
		return "Kafka"
	case "worker":
		return "Worker health server"
	case "embedder":
		return "Embedder"
	case "otel":
		return "Tracing (OpenTelemetry)"
	case "ui", "trace":
		return "Inspector"
	case "recall":
		return "Recall"
	}
	return "Stores"
}

// commandHint follows a command name that names no command: the nearest
// one, else where the list is.
func commandHint(name string) string {
	if n := nearestCommand(name); n != "" {
		return "did you mean " + n + "?"
	}
	return "run 'engram help'"
}

// nearestCommand is the command name nearest to name: the only one it
// begins, else the one fewest edits away (a swap of neighbours counting
// one: serach is search), if within a third of its length; or "".
func nearestCommand(name string) string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	var prefixed []string
	for _, n := range names {
		if len(name) >= 2 && strings.HasPrefix(n, name) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", max(1, len(name)/3)+1
	for _, n := range names {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
