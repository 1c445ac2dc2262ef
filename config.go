package main

import (
	"flag"
	"os"
	"path/filepath"
)

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("engram "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses args, turning -h and bad flags into a usage error (the flag
// package has already said what was wrong).
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitError{0}
		}
		return errUsage
	}
	return nil
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
