package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// widthFixture is one session of three turns: one keyed in wide
// characters, one with an ASCII key, one with a key longer than the
// TURN column; two of its events differ in a wide-keyed field.
const widthFixture = `{"eventId":"ev-w1","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{"sessionId":"s-w","turnId":"ターン-1","agentId":"ag"},"input":{"text":"ask"},"internalState":{"confidence":0.5,"emotionalVector":{"喜":0.1}},"tags":[]}
{"eventId":"ev-w2","timestamp":"2026-05-08T10:00:05Z","type":"user_input","context":{"sessionId":"s-w","turnId":"t-2","agentId":"ag"},"input":{"text":"ask"},"internalState":{"confidence":0.75,"emotionalVector":{"喜":0.9}},"tags":[]}
{"eventId":"ev-w3","timestamp":"2026-05-08T10:00:09Z","type":"user_input","context":{"sessionId":"s-w","turnId":"turn-with-a-key-longer-than-the-column","agentId":"ag"},"input":{"text":"ask"},"tags":[]}
`

func widthCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	if _, stderr, code := c.run(widthFixture, "ingest"); code != 0 || !strings.Contains(stderr, "ingested 3,") {
		t.Fatalf("ingest: code %d, %s", code, stderr)
	}
	return c
}

// columnOf is the display column of the n-th "|" on line (-1: none).
func columnOf(line string, n int) int {
	at := 0
	for i, part := range strings.SplitAfter(line, "|") {
		if i == n {
			return at + ansi.StringWidth(part) - 1
		}
		at += ansi.StringWidth(part)
	}
	return -1
}

// The session's columns line up by display width: the row of the turn
// "ターン-1" (two columns a character) starts its EVENTS column and its
// axis where the others do. The long key is cut to 28 columns, or printed
// whole with --wide.
func TestSessionWideCharacters(t *testing.T) {
	c := widthCLI(t)
	for _, args := range [][]string{{"session", "s-w"}, {"session", "--wide", "s-w"}} {
		out, stderr, code := c.run("", args...)
		if code != 0 {
			t.Fatalf("%v: code %d, %s", args, code, stderr)
		}
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "|") {
				rows = append(rows, l)
			}
		}
		if len(rows) != 4 || !strings.Contains(rows[0], "TURN") || !strings.Contains(rows[1], "ターン-1") {
			t.Fatalf("%v: rows %q", args, rows)
		}
		events := strings.Index(rows[0], "EVENTS")
		for _, r := range rows {
			if got, want := columnOf(r, 0), columnOf(rows[0], 0); got != want {
				t.Errorf("%v: the axis of %q starts at column %d, the header's at %d\n%s", args, r, got, want, out)
			}
		}
		for _, r := range rows[1:] {
			// The header is ASCII: its byte offset is its column.
			if cell := ansi.Cut(r, events, events+1); cell != "1" {
				t.Errorf("%v: column %d of %q is %q, want the EVENTS count 1\n%s", args, events, r, cell, out)
			}
		}
		long := "turn-with-a-key-longer-than-the-column"
		if wide := args[1] == "--wide"; strings.Contains(out, long) != wide || strings.Contains(out, long[:27]+"…") == wide {
			t.Errorf("%v: the long key whole: %v, want %v\n%s", args, strings.Contains(out, long), wide, out)
		}
	}
}

// The fields of a diff line up by display width: the value after the
// path "internalState.emotionalVector.喜" starts where the others' do.
func TestDiffWideCharacters(t *testing.T) {
	c := widthCLI(t)
	out, stderr, code := c.run("", "diff", "ev-w1", "ev-w2")
	if code != 0 {
		t.Fatalf("diff: code %d, %s", code, stderr)
	}
	re := regexp.MustCompile(`^[~+=-] \S+ +`)
	cols := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		if p := re.FindString(l); p != "" && strings.Contains(l, "→") {
			cols[strings.Fields(p)[1]] = ansi.StringWidth(p)
		}
	}
	wide, narrow := cols["internalState.emotionalVector.喜"], cols["internalState.confidence"]
	if wide == 0 || wide != narrow {
		t.Errorf("values start at columns %v, want one column\n%s", cols, out)
	}
	if !strings.Contains(out, "~ internalState.emotionalVector.喜  0.1 → 0.9") {
		t.Errorf("the wide path is padded wrongly:\n%s", out)
	}
}
