package systest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// cliBadCase is one wrong use of a newer command (stats, diff, session,
// recall) and what engram must answer: the exit status (1 for a bad
// value or an unknown id, 2 for a usage error: wrong arguments, an
// unknown flag, a bad expression) and a piece of the error's first line.
type cliBadCase struct {
	args []string // {data} is the data directory
	code int
	want string
	// lines is how many lines stderr may have: 1 unless the form is
	// another's (a bad expression is shown with a caret under it).
	lines int
}

// The ids the demo data set (engram demo --turns 20) holds.
const (
	demoEvent   = "agent-b-000020-out"
	demoEvent2  = "agent-c-000019-out"
	demoTurn    = "turn-000020"
	demoSession = "session-003"
)

var cliBadCases = []cliBadCase{
	// stats: every bad flag value is one line naming the flag, exit 1.
	{args: []string{"stats", "--since", "bogus"}, code: 1, want: `stats: --since "bogus": expected a duration`},
	{args: []string{"stats", "--since", "1e400h"}, code: 1, want: `stats: --since "1e400h"`},
	{args: []string{"stats", "--since", ""}, code: 1, want: `stats: --since`},
	{args: []string{"stats", "--since", "0001-01-01", "--until", "2026-05-09"}, code: 1, want: `stats: --since "0001-01-01": want a time after 0001-01-01T00:00:00Z`},
	{args: []string{"stats", "--compare", "0001-01-01/2026-05-09"}, code: 1, want: `stats: --compare "0001-01-01/2026-05-09": want times after`},
	{args: []string{"stats", "--until", "bogus"}, code: 1, want: `stats: --until "bogus"`},
	{args: []string{"stats", "--until", "2026-13-45"}, code: 1, want: `stats: --until "2026-13-45"`},
	{args: []string{"stats", "--every", "0"}, code: 1, want: "stats: --every 0: want a duration above zero"},
	{args: []string{"stats", "--every", "0s"}, code: 1, want: "stats: --every 0s: want a duration above zero"},
	{args: []string{"stats", "--every", "-1h"}, code: 1, want: "stats: --every -1h: want a duration above zero"},
	{args: []string{"stats", "--every", "bogus"}, code: 1, want: `stats: --every "bogus"`},
	{args: []string{"stats", "--every", "1s", "--since", "30d"}, code: 1, want: "stats: --every 1s cuts the range into 2592000 buckets, over 2000: choose a wider --every or a shorter range"},
	{args: []string{"stats", "--since", "100000d"}, code: 1, want: "stats: the default bucket 1w cuts the range into"},
	{args: []string{"stats", "--by", "bogus"}, code: 1, want: `stats: --by "bogus": want one of`},
	{args: []string{"stats", "--by", ""}, code: 0},
	{args: []string{"stats", "--top", "0"}, code: 1, want: "stats: --top 0: want 1 or more"},
	{args: []string{"stats", "--top", "-3"}, code: 1, want: "stats: --top -3: want 1 or more"},
	{args: []string{"stats", "--top", "abc"}, code: 2, want: `engram: stats: invalid value "abc" for flag --top: parse error; run 'engram help stats'`},
	{args: []string{"stats", "--compare", "bogus"}, code: 1, want: `stats: --compare "bogus": want previous, FROM/TO or (with --by) A,B`},
	{args: []string{"stats", "--compare", "2026-01-01/"}, code: 1, want: `stats: --compare "2026-01-01/": want FROM/TO`},
	{args: []string{"stats", "--compare", "/2026-01-01"}, code: 1, want: `stats: --compare "/2026-01-01": want FROM/TO`},
	{args: []string{"stats", "--compare", "bogus/48h"}, code: 1, want: `stats: --compare "bogus/48h"`},
	{args: []string{"stats", "--compare", "A,B"}, code: 1, want: `stats: --compare "A,B": two values compare groups of --by`},
	{args: []string{"stats", "--by", "agent", "--compare", "A"}, code: 1, want: `stats: --compare "A"`},
	{args: []string{"stats", "--compare", "2026-05-09/2026-05-08"}, code: 1, want: `stats: --compare "2026-05-09/2026-05-08": the range is empty`},
	{args: []string{"stats", "--compare", "1h/1h"}, code: 1, want: `stats: --compare "1h/1h": the range is empty`},
	{args: []string{"stats", "--by", "agent", "--compare", "a,b,c"}, code: 1, want: `stats: --compare "a,b,c": want two values A,B of --by agent`},
	{args: []string{"stats", "--by", "agent", "--compare", ","}, code: 1, want: `stats: --compare ",": want two values A,B of --by agent`},
	{args: []string{"stats", "--by", "agent", "--compare", "a,"}, code: 1, want: `stats: --compare "a,": want two values`},
	{args: []string{"stats", "--by", "outcome", "--compare", "ok,bogus"}, code: 1, want: `stats: --compare "ok,bogus": outcome "bogus": want ok or failed`},
	{args: []string{"stats", "--by", "type", "--compare", "foo,outcome"}, code: 1, want: `stats: --compare "foo,outcome": unknown type "foo"`},
	{args: []string{"stats", "--by", "agent", "--compare", "agent-a,agent-b"}, code: 0},
	{args: []string{"stats", "--since", "2026-05-09", "--until", "2026-05-08"}, code: 1, want: "stats: the range is empty (since 2026-05-09T00:00:00Z is not before until 2026-05-08T00:00:00Z)"},
	{args: []string{"stats", "--since", "2026-05-08", "--until", "2026-05-08"}, code: 1, want: "stats: the range is empty"},
	{args: []string{"stats", "--nosuch"}, code: 2, want: "engram: stats: flag provided but not defined: --nosuch; run 'engram help stats'"},
	{args: []string{"stats", "type:("}, code: 2, want: `invalid expression: column 6: unknown type "("`, lines: 3},
	{args: []string{"stats", "foo:bar"}, code: 2, want: `invalid expression: column 1: unknown field "foo"`, lines: 3},
	{args: []string{"stats", "source:daemon"}, code: 2, want: `invalid expression: column 8: unknown source "daemon"`, lines: 3},
	{args: []string{"stats", `"unclosed`}, code: 2, want: "invalid expression: column 1", lines: 3},
	{args: []string{"stats", "importance>=x"}, code: 2, want: "invalid expression: column", lines: 3},

	// diff: wrong arguments are the usage line, exit 2; an unknown id is
	// named with the index, exit 1 (both when both are unknown).
	{args: []string{"diff"}, code: 2, want: "usage: engram diff"},
	{args: []string{"diff", demoEvent}, code: 2, want: "usage: engram diff"},
	{args: []string{"diff", demoEvent, demoEvent2, "x"}, code: 2, want: "usage: engram diff"},
	{args: []string{"diff", "--turn", demoTurn}, code: 2, want: "usage: engram diff"},
	{args: []string{"diff", "--turn", demoTurn, demoTurn, "x"}, code: 2, want: "usage: engram diff"},
	{args: []string{"diff", "--nosuch", demoEvent, demoEvent2}, code: 2, want: "engram: diff: flag provided but not defined: --nosuch"},
	{args: []string{"diff", "nosuch", demoEvent}, code: 1, want: `no event "nosuch" in sqlite`},
	{args: []string{"diff", demoEvent, "nosuch"}, code: 1, want: `no event "nosuch" in sqlite`},
	{args: []string{"diff", "nosuch-1", "nosuch-2"}, code: 1, want: `no event "nosuch-1" in sqlite {data}/index.db; no event "nosuch-2"`},
	{args: []string{"diff", "", demoEvent}, code: 1, want: `no event "" in sqlite`},
	{args: []string{"diff", "\x1b[31mred", demoEvent}, code: 1, want: `no event "\x1b[31mred"`},
	{args: []string{"diff", "--turn", "nosuch", demoTurn}, code: 1, want: `no turn "nosuch" in sqlite`},
	{args: []string{"diff", "--turn", "a", "b"}, code: 1, want: `no turn "a" in sqlite {data}/index.db; no turn "b"`},
	{args: []string{"diff", "--turn", demoEvent, "nosuch"}, code: 1, want: `no turn "nosuch"`},

	// session.
	{args: []string{"session"}, code: 2, want: "usage: engram session"},
	{args: []string{"session", demoSession, "x"}, code: 2, want: "usage: engram session"},
	{args: []string{"session", "nosuch"}, code: 1, want: `no session "nosuch" in sqlite`},
	{args: []string{"session", ""}, code: 1, want: `no session "" in sqlite`},
	{args: []string{"session", `a"b\`}, code: 1, want: `no session "a\"b\\" in sqlite`},
	{args: []string{"session", "--limit", "abc", demoSession}, code: 2, want: `engram: session: invalid value "abc" for flag --limit`},

	// recall.
	{args: []string{"recall"}, code: 2, want: "usage: engram recall [flags] TEXT [EXPR]"},
	{args: []string{"recall", ""}, code: 2, want: "usage: engram recall"},
	{args: []string{"recall", "  "}, code: 2, want: "usage: engram recall"},
	{args: []string{"recall", "vector", "type:("}, code: 2, want: `invalid expression: column 6: unknown type "("`, lines: 3},
	{args: []string{"recall", "vector", "source:daemon"}, code: 2, want: `unknown source "daemon"`, lines: 3},
	{args: []string{"recall", "--explain", "nosuch", "vector"}, code: 1, want: `--explain: no event "nosuch" in sqlite`},
	{args: []string{"recall", "--explain", "", "vector"}, code: 0},
	{args: []string{"recall", "--weights", "bogus", "vector"}, code: 1, want: `(flag --weights): weight "bogus": want factor=number`},
	{args: []string{"recall", "--weights", "text=-1", "vector"}, code: 1, want: `(flag --weights): weight "text=-1": want a number of 0 or more`},
	{args: []string{"recall", "--weights", "text=NaN", "vector"}, code: 1, want: `weight "text=NaN": want a number of 0 or more`},
	{args: []string{"recall", "--weights", "text=0", "vector"}, code: 1, want: "give at least one factor a weight above 0"},
	{args: []string{"recall", "--weights", "nosuch=1", "vector"}, code: 1, want: `unknown factor "nosuch"`},
	{args: []string{"recall", "--weights", "text=1,text=2", "vector"}, code: 1, want: `weight "text=2": text is given twice`},
	{args: []string{"recall", "--weights", "text=1e308,similarity=1e308", "vector"}, code: 1, want: "their sum overflows"},
	{args: []string{"recall", "--formula", "bogus", "vector"}, code: 1, want: `recall.formula = "bogus" (flag --formula): want hybrid, salience`},
	{args: []string{"recall", "--half-life", "0", "vector"}, code: 1, want: "(flag --half-life): want a duration above zero"},
	{args: []string{"recall", "--half-life", "-1h", "vector"}, code: 1, want: "(flag --half-life): want a duration above zero"},
	{args: []string{"recall", "--recall-window", "0", "vector"}, code: 1, want: "(flag --recall-window): want a positive whole number"},
	{args: []string{"recall", "--recall-window", "-5", "vector"}, code: 1, want: "(flag --recall-window)"},
	{args: []string{"recall", "--embedder", "http", "vector"}, code: 1, want: "embedder http: no endpoint (embedder.endpoint, --embedder-endpoint)"},
	{args: []string{"recall", "--embedder", "bogus", "vector"}, code: 1, want: `embedder.kind = "bogus" (flag --embedder): want stub, hashed, http`},
	{args: []string{"recall", "--limit", "abc", "vector"}, code: 2, want: `engram: recall: invalid value "abc" for flag --limit`},
	{args: []string{"recall", "--weights"}, code: 2, want: "engram: recall: flag needs an argument: --weights"},
}

// TestBadInputNewCommands runs each case against the real binary on a
// demo data set and checks the exit status, that the error is the first
// line of stderr and names what was wrong, that stdout is empty, and that
// the data directory is exactly as it was (nothing written).
func TestBadInputNewCommands(t *testing.T) {
	bin := engramBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(bin, "demo", "--data", data, "--turns", "20").CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	// The ids the table names are there.
	for _, args := range [][]string{{"show", demoEvent}, {"show", demoEvent2}, {"turn", demoTurn}, {"session", demoSession}} {
		if out, err := exec.Command(bin, append(args, "--data", data)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, tail(out))
		}
	}
	before := dataListing(t, data)
	for _, c := range cliBadCases {
		args := make([]string, 0, len(c.args)+2)
		for _, a := range c.args {
			args = append(args, strings.ReplaceAll(a, "{data}", data))
		}
		args = append(args[:1], append([]string{"--data", data}, args[1:]...)...)
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			checkBadRun(t, bin, args, c.code, strings.ReplaceAll(c.want, "{data}", data), c.lines)
			if after := dataListing(t, data); after != before {
				t.Fatalf("the data directory changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

// checkBadRun runs the binary and checks a bad-input answer.
func checkBadRun(t *testing.T, bin string, args []string, code int, want string, lines int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	got := cmd.ProcessState.ExitCode()
	if code == 0 {
		if got != 0 {
			t.Fatalf("exit %d, want 0:\n%s", got, tail(stderr.Bytes()))
		}
		return
	}
	errText := strings.TrimRight(stderr.String(), "\n")
	first, _, _ := strings.Cut(errText, "\n")
	if got != code || !strings.Contains(first, want) {
		t.Fatalf("exit %d, first line of stderr %q; want exit %d and %q", got, first, code, want)
	}
	if lines == 0 {
		lines = 1
	}
	if n := strings.Count(errText, "\n") + 1; lines > 0 && n != lines {
		t.Errorf("stderr has %d lines, want %d:\n%s", n, lines, errText)
	}
	if strings.ContainsRune(stderr.String(), 0x1b) {
		t.Errorf("stderr holds a raw escape: %q", stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout is not empty: %q", stdout.String())
	}
}

// dataListing is a digest of every file under dir: its path, mode, size
// and content (SQLite's -shm, a reader's shared-memory index of the WAL,
// by name and size only: every reader touches it).
func dataListing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v %d", rel, info.Mode(), info.Size())
		if d.Type().IsRegular() && !strings.HasSuffix(p, "-shm") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:8]) + " " + info.ModTime().String()
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return fmt.Sprintf("%d entries %x", len(lines), sum[:8])
}

// TestBadInputNewCommandsNoData: on a data directory that does not exist,
// or exists and is empty, each newer command says there is no index there
// (exit 1) and creates nothing.
func TestBadInputNewCommandsNoData(t *testing.T) {
	bin := engramBinary(t)
	for _, kind := range []string{"missing", "empty"} {
		data := filepath.Join(t.TempDir(), "data")
		if kind == "empty" {
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{
			{"stats"}, {"stats", "--by", "agent", "--compare", "previous"},
			{"diff", "a", "b"}, {"diff", "--turn", "a", "b"},
			{"session", "s"}, {"recall", "vector"}, {"recall", "--explain", "x", "vector"},
		} {
			full := append([]string{args[0], "--data", data}, args[1:]...)
			t.Run(kind+" "+strings.Join(args, " "), func(t *testing.T) {
				checkBadRun(t, bin, full, 1, "no index at "+data+"/index.db (run 'engram ingest' first, or pass --data)", 1)
				entries, err := os.ReadDir(data)
				switch {
				case kind == "missing" && !os.IsNotExist(err):
					t.Errorf("%s was created (%v)", data, err)
				case kind == "empty" && (err != nil || len(entries) > 0):
					t.Errorf("%s: %d entries written (%v)", data, len(entries), err)
				}
			})
		}
	}
}

// TestNewCommandsOnReadOnlyMedia: the newer read commands work on a data
// directory on read-only media, and a bad value there is the same one-line
// error as anywhere (not a write failing).
func TestNewCommandsOnReadOnlyMedia(t *testing.T) {
	bin := engramBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(bin, "demo", "--data", data, "--turns", "20").CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"stats", "--data", data, "--since", "2026-05-08", "--until", "2026-05-09", "--by", "agent"},
		{"stats", "--data", data, "--since", "2026-05-08", "--until", "2026-05-09", "--compare", "previous"},
		{"diff", "--data", data, demoEvent, demoEvent2},
		{"diff", "--data", data, "--turn", demoTurn, "turn-000019"},
		{"session", "--data", data, demoSession},
		{"recall", "--data", data, "--explain", demoEvent, "vector index sizing"},
	} {
		out, err := onReadOnlyMedia(t, bin, data, args...)
		if err != nil || strings.Contains(out, "read-only") || strings.Contains(out, "unable to open") {
			t.Errorf("%s on read-only media: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--data", data, "--every", "0"}, "engram: stats: --every 0: want a duration above zero"},
		{[]string{"session", "--data", data, "nosuch"}, `engram: no session "nosuch"`},
		{[]string{"recall", "--data", data, "--explain", "nosuch", "vector"}, `engram: --explain: no event "nosuch"`},
	} {
		out, err := onReadOnlyMedia(t, bin, data, c.args...)
		var ee *exec.ExitError
		if !errorsAs(err, &ee) || ee.ExitCode() != 1 || strings.TrimSpace(out) != strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]) || !strings.HasPrefix(out, c.want) {
			t.Errorf("%s on read-only media: %v\n%s\nwant exit 1 and one line %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	return errors.As(err, ee)
}

// TestBadInputNewShapes ingests each invalid fixture of the newer event
// shapes (model/testdata/shapes), one a line among good ones, through the
// real binary: exit 1, a FILE:LINE: report naming each problem's JSON
// path, every good line ingested; then the same file with --dry-run
// writes nothing.
func TestBadInputNewShapes(t *testing.T) {
	bin := engramBinary(t)
	want := map[string][]string{
		"invalid-source.json":             {`context.source: "daemon" is not one of session, ambient, system`},
		"invalid-content-link.json":       {"result.content[1].uri: required"},
		"invalid-content-shape.json":      {"result.content: expected an array of content blocks"},
		"invalid-signal.json":             {"payload.severity: required", "payload.affectedServices[1]: expected a non-empty string", "payload.correlationEmbedding[1]: not a finite number"},
		"invalid-casehub-confidence.json": {"confidence: 1.5 is outside [0, 1]"},
		"invalid-casehub-subthought.json": {"metadata.sub-thought-1-confidence: 1.2 is outside [0, 1]", "metadata.sub-thought-2-type: sub-thought 2 given, but sub-thought-count is 1"},
		"invalid-casehub-timestamp.json":  {"timestamp: expected an RFC 3339 string or a number"},
		// Built here: wrong types of the newer members.
		"isError not a boolean":        {"result.isError: expected a boolean"},
		"signal payload not an object": {"payload: expected an object"},
	}
	inline := map[string]string{
		"isError not a boolean":        `{"eventId":"bad-5","timestamp":"2026-05-08T10:00:00Z","type":"tool_result","context":{"sessionId":"s"},"input":{"text":"x"},"result":{"output":"o","isError":"yes"}}`,
		"signal payload not an object": `{"eventId":"bad-6","timestamp":"2026-05-08T10:00:00Z","type":"environmental_observation","subtype":"OperationalSignal","context":{"sessionId":"s"},"input":{"text":"x"},"payload":[1]}`,
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shapes.jsonl")
	var b bytes.Buffer
	lineOf := map[string]int{}
	line, good := 0, 0
	goods, err := filepath.Glob("../model/testdata/shapes/valid-*.json")
	if err != nil || len(goods) == 0 {
		t.Fatalf("no valid fixtures: %v", err)
	}
	emit := func(raw []byte) {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatal(err)
		}
		b.Write(c.Bytes())
		b.WriteByte('\n')
		line++
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		raw, ok := []byte(inline[name]), inline[name] != ""
		if !ok {
			if raw, err = os.ReadFile(filepath.Join("../model/testdata/shapes", name)); err != nil {
				t.Fatal(err)
			}
		}
		emit(raw)
		lineOf[name] = line
		if i < len(goods) {
			g, err := os.ReadFile(goods[i])
			if err != nil {
				t.Fatal(err)
			}
			emit(g)
			good++
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")

	// --dry-run first: the same report, nothing written.
	out, _ := exec.Command(bin, "ingest", "--dry-run", "--data", data, path).CombinedOutput()
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("ingest --dry-run wrote %s (%v)", data, err)
	}
	for _, dry := range []bool{true, false} {
		if !dry {
			cmd := exec.Command(bin, "ingest", "--data", data, path)
			out, _ = cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("ingest: exit %d, want 1:\n%s", code, tail(out))
			}
			if s := fmt.Sprintf("ingested %d, duplicates 0, rejected %d, failed 0", good, len(want)); !strings.Contains(string(out), s) {
				t.Errorf("summary: want %q in\n%s", s, tail(out))
			}
		}
		for _, name := range names {
			prefix := fmt.Sprintf("%s:%d: ", path, lineOf[name])
			for _, w := range want[name] {
				if !containsLine(string(out), prefix, w) {
					t.Errorf("dry-run %v: %s: no line %q…%q in\n%s", dry, name, prefix, w, tail(out))
				}
			}
		}
	}
}
