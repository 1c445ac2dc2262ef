package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"engram/query"
	"engram/ui/overview"
	"engram/ui/stream"
)

// toOverview focuses the Overview (shift+tab from the stream: the last tab
// without a bus) and lets its first answer land.
func toOverview(t *testing.T, m *Model) {
	t.Helper()
	press(t, m, "shift+tab")
	if m.focus != viewOverview {
		t.Fatalf("focus %v, want the Overview", m.focus)
	}
}

// The Overview counts what the reader holds, by outcome: 30 events of
// which 10 are tool results, 1 failed (every seventh).
func TestOverviewCounts(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	s := m.overview.Stats()
	if s == nil || s.All.Count != 30 || s.By != query.ByOutcome {
		t.Fatalf("stats %v", s != nil)
	}
	want := map[string]int64{query.OutcomeUnknown: 20, query.OutcomeOK: 9, query.OutcomeFailed: 1}
	for g, name := range s.Groups {
		if s.Total[g].Count != want[name] {
			t.Errorf("%s: %d, want %d", name, s.Total[g].Count, want[name])
		}
	}
	scr := screen(m)
	mustContain(t, scr, "Overview", "split by outcome", "all", "unknown", "failed", "enter: open")
	// b splits by the next field; the groups follow.
	press(t, m, "b")
	if s := m.overview.Stats(); s.By != query.ByType || len(s.Groups) != 3 {
		t.Fatalf("after b: by %s groups %v", s.By, s.Groups)
	}
}

// Enter on a bucket and a group opens the stream filtered to exactly the
// documents the Overview counted there.
func TestOverviewOpensBucketInStream(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	press(t, m, "b", "b") // by agent
	s := m.overview.Stats()
	if s.By != query.ByAgent {
		t.Fatalf("by %s", s.By)
	}
	press(t, m, "down") // the first group
	g := s.Groups[0]
	var want int64
	for _, b := range s.Buckets {
		if b.All.Count > 0 { // the selection starts on the newest busy bucket
			want = b.Groups[0].Count
		}
	}
	press(t, m, "enter")
	if m.focus != viewStream {
		t.Fatalf("focus %v after enter, want the stream", m.focus)
	}
	f := m.stream.Filter()
	if !strings.Contains(f, "agent:"+g) || !strings.Contains(f, "since:") || !strings.Contains(f, "until:") {
		t.Fatalf("stream filter %q", f)
	}
	if got := int64(m.stream.Rows().Len()); got != want || want == 0 {
		t.Fatalf("stream shows %d rows for %q, the Overview counted %d", got, f, want)
	}
}

// A filter applied in the Overview filters it and, on enter, the stream.
func TestOverviewFollowsTheFilter(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	press(t, m, "/")
	typeText(t, m, "agent:coder")
	press(t, m, "enter")
	if s := m.overview.Stats(); s == nil || s.All.Count != 9 || m.overview.Filter() != "agent:coder" {
		t.Fatalf("filtered overview: %+v filter %q", s.All, m.overview.Filter())
	}
	mustContain(t, screen(m), "/agent:coder")
}

func TestOverviewGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r, a := goldenWorld()
			m := newTestModel(t, testDeps(r, a), testOpts(t), size[0], size[1])
			toOverview(t, m)
			press(t, m, "down", "down")
			golden.RequireEqual(t, []byte(ansi.Strip(m.View().Content)))
		})
	}
}

// A hidden Overview asks nothing: its follow stops when it loses the
// focus, so the stream's frames pay nothing for it; shown again it loads.
func TestOverviewHiddenCostsNothing(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	calls := func() int { r.mu.Lock(); defer r.mu.Unlock(); return r.calls["Stats"] }
	if calls() != 1 {
		t.Fatalf("%d Stats calls on opening", calls())
	}
	press(t, m, "tab") // to Topics or round to the stream
	for m.focus != viewStream {
		press(t, m, "tab")
	}
	addEvents(r, a, 30, 6)
	send(t, m, stream.TickMsg{})
	m.overview.Update(overview.Tick())
	if calls() != 1 {
		t.Fatalf("%d Stats calls while hidden, want none after the first", calls())
	}
	toOverview(t, m)
	if calls() != 2 || m.overview.Stats().All.Count != 36 {
		t.Fatalf("shown again: %d calls, %d documents", calls(), m.overview.Stats().All.Count)
	}
}

// c compares the selected bucket with the one before it: each measure's
// change with its verdict; the first bucket has none before it.
func TestOverviewComparesBuckets(t *testing.T) {
	r, a := world(120, testNow.Add(-30*time.Minute)) // 11:30:00-11:31:59, a minute of 60 each
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 40)
	toOverview(t, m)
	press(t, m, "+", "+", "right", "c") // the last hour by minute; from 11:30 (kept from the day view) to 11:31
	s := m.overview.Stats()
	if s.Every != time.Minute {
		t.Fatalf("every %s", s.Every)
	}
	scr := screen(m)
	mustContain(t, scr, "vs the bucket before: ", "latency p95 ")
	mustNotContain(t, scr, "too small")
	press(t, m, "left")
	mustContain(t, screen(m), "vs the bucket before: too small to compare: A has 0 events, under 20")
	press(t, m, "home")
	mustContain(t, screen(m), "c: no bucket before this one")
	press(t, m, "c")
	mustNotContain(t, screen(m), "bucket before")
}

// TestOverviewCompareGolden: c at 80×24, the minute 11:31 against 11:30,
// sixty events each: the measures' changes and their verdicts.
func TestOverviewCompareGolden(t *testing.T) {
	r, a := world(120, testNow.Add(-30*time.Minute))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	toOverview(t, m)
	press(t, m, "+", "+", "right", "c")
	scr := screen(m)
	mustContain(t, scr, "vs the bucket before: ")
	mustNotContain(t, scr, "too small")
	golden.RequireEqual(t, []byte(ansi.Strip(m.View().Content)))
}

// TestFlowOverviewBucketToStream drives a real program (teatest): the
// Overview opens on the day by outcome, b b splits it by agent, ↓ selects
// the first group and enter opens the stream filtered to the bucket and
// that agent, listing exactly the documents the Overview counted.
func TestFlowOverviewBucketToStream(t *testing.T) {
	r, a := world(30, testBase)
	tm, p := flow(t, testDeps(r, a))
	waitScreen(t, p, "the stream", has("30 docs", "Overview"))
	keys(tm, "shift+tab")
	waitScreen(t, p, "the Overview by outcome", has("split by outcome", "all", "unknown"))
	keys(tm, "b")
	waitScreen(t, p, "by type", has("split by type"))
	keys(tm, "b")
	waitScreen(t, p, "by agent", has("split by agent", "planner"))
	keys(tm, "down")
	waitScreen(t, p, "the first group selected", has("· planner: 12 events"))
	keys(tm, "enter")
	waitScreen(t, p, "the stream filtered to the bucket and agent", has("since:2026-05-08T10:00:00Z", "row 1 of 12 loaded")) // planner has 12 of the 30
}

// When even the tabs alone do not fit, the title goes before they are
// cut, so as much of them as can be is shown.
func TestHeaderDropsTheTitleBeforeATab(t *testing.T) {
	r, a := world(10, testBase)
	d := testDeps(r, a)
	d.Recorder = PipelineRecorder{}
	m := newTestModel(t, d, testOpts(t), 69, 24)
	press(t, m, "down", "enter", "S")
	if m.focus != viewSimilar {
		t.Fatalf("focus %v", m.focus)
	}
	head := strings.SplitN(screen(m), "\n", 2)[0]
	if strings.Contains(head, "engram") || !strings.Contains(head, "Overview  Simil") {
		t.Fatalf("header: %q", head)
	}
}

// A filter asks the Overview at once, and one the index refuses puts it
// back on the stream's expression.
func TestOverviewFilterRefusedRevertsIt(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	press(t, m, "/")
	typeText(t, m, "agent:coder")
	press(t, m, "enter")
	if m.overview.Filter() != "agent:coder" || m.overview.Stats().All.Count != 9 {
		t.Fatalf("overview filter %q", m.overview.Filter())
	}
	press(t, m, "/", "ctrl+u")
	typeText(t, m, "tenant:acme") // the language takes it, this reader refuses it
	press(t, m, "enter")
	if m.overview.Filter() != "agent:coder" || m.stream.Shown() != "agent:coder" || m.filter.applied != "agent:coder" {
		t.Fatalf("after a refused filter: overview %q, stream %q", m.overview.Filter(), m.stream.Shown())
	}
}

// Esc in the stream a bucket opened goes back to the Overview, the filter
// as it was before (a drill-down comes back up); a filter changed in the
// stream since is the user's, and esc clears it as usual.
func TestOverviewBucketEscComesBack(t *testing.T) {
	r, a := world(30, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	press(t, m, "/")
	typeText(t, m, "agent:coder")
	press(t, m, "enter", "enter")
	if m.focus != viewStream || !strings.Contains(m.stream.Filter(), "since:") {
		t.Fatalf("enter: focus %v, filter %q", m.focus, m.stream.Filter())
	}
	mustContain(t, screen(m), "esc back to the Overview")
	press(t, m, "esc")
	if m.focus != viewOverview || m.filter.applied != "agent:coder" || m.stream.Filter() != "agent:coder" || m.overview.Filter() != "agent:coder" {
		t.Fatalf("esc: focus %v, filter %q, stream %q, overview %q", m.focus, m.filter.applied, m.stream.Filter(), m.overview.Filter())
	}
	press(t, m, "enter", "/", "ctrl+u")
	typeText(t, m, "agent:critic")
	press(t, m, "enter", "esc")
	if m.focus != viewStream || m.filter.applied != "" {
		t.Fatalf("esc after a filter of the user's: focus %v, filter %q", m.focus, m.filter.applied)
	}
}

// Events older than the widest range leave the Overview empty: there it
// no longer offers - (which would do nothing) but says where they are,
// and - at the limit says it is the limit rather than nothing.
func TestOverviewEmptyAtTheWidestRange(t *testing.T) {
	r, a := world(30, testNow.Add(-60*24*time.Hour))
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	mustContain(t, screen(m), "no events in the last 1d: - zooms out")
	press(t, m, "-", "-")
	scr := screen(m)
	mustContain(t, scr, "no events in the last 28d (the widest range): the stream's G and :time reach older ones", "+ zoom in")
	mustNotContain(t, scr, "- zooms out", "- zoom out")
	press(t, m, "-")
	mustContain(t, screen(m), "already the widest range, the last 28d")
	press(t, m, "+", "+", "+", "+", "+")
	mustContain(t, screen(m), "already the narrowest range, the last 1h")
}

// A bucket of one event says "1 event", not "1 events".
func TestOverviewBucketOfOneEvent(t *testing.T) {
	r, a := world(1, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	toOverview(t, m)
	press(t, m, "end", "left", "left", "left") // the event's bucket, two hours back
	s := screen(m)
	mustContain(t, s, "10:00–10:30: 1 event, 0 failed")
	mustNotContain(t, s, "1 events")
}
