package ui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/ingest"
	"engram/ui/uikit"
)

// joined is the screen as one line of words: text wrapped over lines
// reads as it would unwrapped.
func joined(s string) string { return strings.Join(strings.Fields(s), " ") }

// Text is wrapped, not cut: the waterfall's errors, the filter error's
// list of fields, the detail's facts, the header's follow state.
func TestLongTextWrapsInsteadOfCut(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	mustContain(t, joined(screen(m)), "● following")
	send(t, m, uikit.PipeMsg{Run: 1, Trace: failedTrace("write events/2026/05/08/ev-b.json: no space left on device (the archive volume is full)")})
	press(t, m, "shift+tab", "shift+tab") // the Overview, then the pipeline
	mustContain(t, joined(screen(m)), "no space left on device (the archive volume is full)")

	press(t, m, "tab", "tab", "/") // the Overview, then the stream
	typeText(t, m, "colour:red")
	want := m.c.Deps.CheckFilter("colour:red").Error()
	last := want[strings.LastIndex(want, " ")+1:]
	mustContain(t, joined(screen(m)), "known fields:", last)

	press(t, m, "esc", "enter") // the newest: an outcome with a latency
	mustContain(t, joined(screen(m)), "latency", "imp")

	for _, w := range []int{70, 60} {
		m := newTestModel(t, testDeps(r, a), testOpts(t), w, 24)
		if head := strings.Split(screen(m), "\n")[0]; !strings.Contains(head, "following") {
			t.Fatalf("%d columns: the header lost the follow state: %q", w, head)
		}
	}
}

func failedTrace(why string) *ingest.Trace {
	t := fixedTrace(1, "ev-b", ingest.StageArchive)
	t.Stages[ingest.StageArchive].Err = errors.New(why)
	t.Err = t.Stages[ingest.StageArchive].Err
	return t
}

// The follow error names the file in full and goes once the file is there
// and its lines are ingested.
func TestFollowErrorClearsWhenTheFileComes(t *testing.T) {
	r, a := world(0, testBase)
	d := testDeps(r, a)
	d.Recorder = recorderFor(r, a)
	o := testOpts(t)
	file := filepath.Join(t.TempDir(), "a-rather-long-directory-name", "agent-events-of-today.jsonl")
	o.Follow = []string{file}
	m := newTestModel(t, d, o, 80, 24)
	send(t, m, followTickMsg{})
	mustContain(t, joined(screen(m)), "agent-events-of-today.jsonl")
	mustContain(t, joined(screen(m)), "no such file or directory")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := testEvent(0, testBase).ArchiveJSON()
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	send(t, m, followTickMsg{})
	if n, _ := r.Count(m.c.Ctx); n != 1 {
		t.Fatalf("%d docs once the file came, want 1", n)
	}
	mustNotContain(t, screen(m), "following /")
}
