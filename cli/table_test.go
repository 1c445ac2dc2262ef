package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// columnAt is the display column at which cell begins in line, or -1.
func columnAt(line, cell string) int {
	i := strings.Index(line, cell)
	if i < 0 {
		return -1
	}
	return ansi.StringWidth(line[:i])
}

// Columns align by display width: East Asian wide characters and emoji
// take two columns; the cut last column fits the width.
func TestTableAlignsWideCharacters(t *testing.T) {
	rows := [][]string{
		{"AGENT", "TURN", "SUMMARY"},
		{"agent-ascii", "t1", "plain text that goes on and on and on and on and on and on"},
		{"エージェント", "t2", strings.Repeat("日本語", 20)},
		{"🤖bot🚀", "t3", strings.Repeat("👩‍💻 emoji ", 10)},
		{"한국어", "t4", "short"},
	}
	var b bytes.Buffer
	if err := writeTable(&b, rows, 50, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	turnCol, sumCol := columnAt(lines[0], "TURN"), columnAt(lines[0], "SUMMARY")
	for i, l := range lines {
		if i > 0 && (columnAt(l, rows[i][1]) != turnCol || columnAt(l, cut(rows[i][2], 50-sumCol)) != sumCol) {
			t.Errorf("row %d misaligned (TURN at %d, SUMMARY at %d):\n%s", i, turnCol, sumCol, b.String())
		}
		if w := ansi.StringWidth(l); w > 50 {
			t.Errorf("row %d is %d columns wide, want at most 50: %q", i, w, l)
		}
	}
	if !strings.HasSuffix(lines[2], "…") || !strings.HasSuffix(lines[3], "…") {
		t.Errorf("long summaries not cut with an ellipsis:\n%s", b.String())
	}
	// Width 0 (--wide): the last column whole.
	b.Reset()
	if err := writeTable(&b, rows, 0, false); err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if !strings.Contains(b.String(), row[2]) {
			t.Errorf("--wide cut row %d:\n%s", i, b.String())
		}
	}
	// A cut that would split a wide character leaves it out whole.
	if got := cut("日本語", 4); got != "日…" {
		t.Errorf("cut(日本語, 4) = %q", got)
	}
}

// The read commands take --wide: the summary column whole instead of cut
// to the terminal's width; both ways its column lines up under its header.
func TestQueryTablesWide(t *testing.T) {
	c := newCLI(t)
	c.env["COLUMNS"] = "100"
	var ev map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(demoLines(1))), &ev); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("日本語のテキスト🚀 ", 8)
	ev["input"].(map[string]any)["text"] = text
	line, _ := json.Marshal(ev)
	if _, stderr, code := c.run(string(line), "ingest", "--summary-len", "500"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, _, _ := c.run("", "turns", "--json")
	key, _ := jsonDocs(t, out)[0]["turn_key"].(string)
	for _, wide := range []bool{false, true} {
		args := []string{"turn", key}
		if wide {
			args = append(args, "--wide")
		}
		out, stderr, code := c.run("", args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 2 {
			t.Fatalf("%v: code %d, stderr %s\n%s", args, code, stderr, out)
		}
		sum := columnAt(lines[0], "SUMMARY")
		if got := columnAt(lines[1], "日本語"); got != sum {
			t.Errorf("%v: summary at column %d, header at %d:\n%s", args, got, sum, out)
		}
		whole := strings.Contains(lines[1], strings.TrimSpace(text))
		if fits := ansi.StringWidth(lines[1]) <= 100; wide == fits || wide != whole {
			t.Errorf("%v: %d columns, summary whole %v:\n%s", args, ansi.StringWidth(lines[1]), whole, out)
		}
	}
}
