package cli

import (
	"strings"
	"testing"
)

// TestFlagErrorsOneLine: a flag the flag package refuses is one line on
// stderr naming the command and the flag, exit 2 (it was the flag
// package's line followed by every flag, 160 lines); -h and --help print
// the command's help on stdout, exit 0.
func TestFlagErrorsOneLine(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--top", "abc"}, `engram: stats: invalid value "abc" for flag --top: parse error; run 'engram help stats'`},
		{[]string{"stats", "--nosuch"}, "engram: stats: flag provided but not defined: --nosuch; run 'engram help stats'"},
		{[]string{"session", "-limit=x", "s"}, `engram: session: invalid value "x" for flag --limit`},
		{[]string{"recall", "--weights"}, "engram: recall: flag needs an argument: --weights"},
		{[]string{"diff", "--all=maybe", "a", "b"}, `engram: diff: invalid boolean value "maybe" for --all: parse error`},
		{[]string{"search", "--limit", "1e3", "x"}, `engram: search: invalid value "1e3" for flag --limit`},
	} {
		out, stderr, code := c.run("", tc.args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line %q", tc.args, code, stderr, tc.want)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		out, stderr, code := c.run("", "stats", h)
		if code != 0 || stderr != "" || !strings.HasPrefix(out, "engram stats [flags] [EXPR]") || !strings.Contains(out, "--compare") {
			t.Errorf("stats %s: exit %d, stderr %q, stdout %.80q", h, code, stderr, out)
		}
	}
}
