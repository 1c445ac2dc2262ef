package ui

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"engram/backend/dirarchive"
	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/query"
	"engram/ui/uikit"
)

// probe runs the inspector in a real program (teatest) and keeps the last
// frame it drew, colours stripped, for the flows to wait on: the renderer's
// output is a diff of cells, in which a word need not appear in one piece.
type probe struct {
	*Model
	mu    sync.Mutex
	last  string
	focus viewID // the view the last frame drew
}

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

func (p *probe) View() tea.View {
	v := p.Model.View()
	p.mu.Lock()
	p.last = ansi.Strip(v.Content)
	p.focus = p.Model.focus
	p.mu.Unlock()
	return v
}

// focused is the view the last frame drew.
func (p *probe) focused() viewID {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.focus
}

func (p *probe) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// flow starts the program; the tail polls every 20ms.
func flow(t *testing.T, d uikit.Deps) (*teatest.TestModel, *probe) {
	t.Helper()
	o := testOpts(t)
	o.Poll = 20 * time.Millisecond
	p := &probe{Model: New(d, o)}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, p
}

// waitScreen waits until the drawn frame satisfies ok, and otherwise
// fails saying what it waited for and showing the last frame.
func waitScreen(t *testing.T, p *probe, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(p.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not drawn within 10s; last frame:\n%s", what, p.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func has(subs ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range subs {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	}
}

// selectedLine is the row marked by the selection gutter.
func selectedLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "›") {
			return l
		}
	}
	return ""
}

func keys(tm *teatest.TestModel, ks ...string) {
	for _, k := range ks {
		tm.Send(keyMsg(k))
	}
}

// realStore is the embedded deployment in a temporary directory: the
// directory archive, the SQLite index and the SQLite query reader.
type realStore struct {
	archive *dirarchive.Store
	index   *sqliteindex.DB
	reader  *sqliteindex.Reader
}

func openReal(t *testing.T) *realStore {
	t.Helper()
	dir := t.TempDir()
	a, err := dirarchive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sqliteindex.Open(filepath.Join(dir, "index.db"), sqliteindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sqliteindex.OpenReader(filepath.Join(dir, "index.db"), query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); ix.Close() })
	return &realStore{a, ix, r}
}

func (s *realStore) config() ingest.Config {
	return ingest.Config{Archive: s.archive, Index: s.index, Embedder: embed.Stub{}, BatchWait: time.Millisecond}
}

func (s *realStore) deps() uikit.Deps {
	d := testDeps(s.reader, nil)
	d.Archive = s.archive
	d.Recorder = PipelineRecorder{Config: s.config()}
	return d
}

// ingest indexes events of the test world, as another process would.
func (s *realStore) ingest(t *testing.T, from, n int) {
	t.Helper()
	p, err := ingest.New(s.config())
	if err != nil {
		t.Fatal(err)
	}
	items := make(chan ingest.Item, n)
	for i := from; i < from+n; i++ {
		b, _ := testEvent(i, testBase).ArchiveJSON()
		items <- ingest.Item{Data: b}
	}
	close(items)
	if sum := p.Run(context.Background(), items, nil); sum.Ingested != n {
		t.Fatalf("ingested %d of %d", sum.Ingested, n)
	}
}

// heldReader holds the stream's first load (the unfiltered rows) until
// release is closed.
type heldReader struct {
	uikit.Reader
	release chan struct{}
}

func (r heldReader) Recent(ctx context.Context, expr string, after query.Cursor, limit int) (query.Page, error) {
	if expr == "" {
		<-r.release
	}
	return r.Reader.Recent(ctx, expr, after, limit)
}

// TestFlowFilterBeforeFirstLoad: a filter entered before the stream's
// first rows have come still follows the tail once they do (their answer
// is moot, but it carries where the tail starts).
func TestFlowFilterBeforeFirstLoad(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 12)
	d := s.deps()
	held := heldReader{Reader: d.Reader, release: make(chan struct{})}
	d.Reader = held
	tm, p := flow(t, d)
	keys(tm, "/")
	tm.Type("agent:critic")
	keys(tm, "enter")
	waitScreen(t, p, "filtered", has("filter: agent:critic", "row 1 of 3 loaded"))
	close(held.release)
	s.ingest(t, 12, 12)
	waitScreen(t, p, "tail filtered", has("row 1 of 6 loaded"))
}

// TestFlowRecordThenStreamThenArchive: record an event → it appears in the
// stream, selected → Enter shows its archive.
func TestFlowRecordThenStreamThenArchive(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 5)
	tm, p := flow(t, s.deps())
	waitScreen(t, p, "stream", has("5 docs"))
	keys(tm, "R")
	waitScreen(t, p, "form", has("Record a test event"))
	tm.Type("flow-session")
	keys(tm, "down", "down", "down", "down")
	tm.Type("recorded by the flow test")
	keys(tm, "ctrl+s")
	waitScreen(t, p, "trace", has("✓ index", "ingested in"))
	keys(tm, "esc")
	waitScreen(t, p, "stream", has("6 docs", "recorded by the flow test"))
	if sel := selectedLine(p.screen()); !strings.Contains(sel, "recorded by the flow test") {
		t.Fatalf("the selected row is %q, not the recorded event", sel)
	}
	keys(tm, "enter")
	waitScreen(t, p, "archive", has("✓ archive", `"eventId": "new-001"`))
	mustContain(t, p.screen(), `"sessionId": "flow-session"`)
}

// TestFlowPauseCountsResumeShows: while paused, events indexed by someone
// else are counted, not shown; resuming shows them.
func TestFlowPauseCountsResumeShows(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 5)
	tm, p := flow(t, s.deps())
	waitScreen(t, p, "stream", has("● following", "5 docs"))
	keys(tm, "space")
	waitScreen(t, p, "paused", has("‖ paused"))
	s.ingest(t, 5, 3)
	waitScreen(t, p, "counted", has("paused · 3 new"))
	mustNotContain(t, p.screen(), "step 1 of turn 2")
	keys(tm, "space")
	waitScreen(t, p, "shown", has("● following", "step 1 of turn 2", "8 docs"))
}

// TestFlowFilter: only matching rows stay, including new ones.
func TestFlowFilter(t *testing.T) {
	s := openReal(t)
	s.ingest(t, 0, 12)
	tm, p := flow(t, s.deps())
	waitScreen(t, p, "stream", has("12 docs"))
	keys(tm, "/")
	tm.Type("agent:critic")
	keys(tm, "enter")
	waitScreen(t, p, "filtered", has("filter: agent:critic", "row 1 of 3 loaded"))
	s.ingest(t, 12, 12)
	waitScreen(t, p, "tail filtered", has("row 1 of 6 loaded"))
	for _, l := range strings.Split(rowsOf(p.screen()), "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, "critic") {
			t.Fatalf("row of another agent under agent:critic: %q", l)
		}
	}
}
