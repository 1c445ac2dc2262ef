package ingest_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend"
	"engram/backend/dirarchive"
	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/ingest/gen"
	"engram/ingest/publish"
	"engram/model"
)

// stores is a real embedded deployment in a temporary directory.
type stores struct {
	dir     string
	archive *dirarchive.Store
	index   *sqliteindex.DB
	topics  *publish.Topics
}

func newStores(t testing.TB) *stores {
	t.Helper()
	return newStoresIn(t, t.TempDir())
}

func newStoresIn(t testing.TB, dir string) *stores {
	t.Helper()
	a, err := dirarchive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sqliteindex.Open(filepath.Join(dir, "index.db"), sqliteindex.Options{DeferSync: true})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := publish.OpenTopics(filepath.Join(dir, "topics"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close(); tp.Close() })
	return &stores{dir, a, ix, tp}
}

func (s *stores) config() ingest.Config {
	return ingest.Config{Archive: s.archive, Index: s.index, Publisher: s.topics, Embedder: embed.Stub{}}
}

// feed sends each input as an item and closes the channel.
func feed(inputs ...[]byte) <-chan ingest.Item {
	ch := make(chan ingest.Item, len(inputs))
	for i, in := range inputs {
		ch <- ingest.Item{Src: ingest.Source{File: "test", Line: i + 1}, Data: in}
	}
	close(ch)
	return ch
}

func generate(n int, prefix string) [][]byte {
	g := gen.New(gen.Config{Seed: 7, Prefix: prefix})
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}

// orderObserver checks, per event, that stages start only after the stage
// before them ended: archive → index → publish in particular.
type orderObserver struct {
	mu       sync.Mutex
	ended    map[uint64]map[ingest.Stage]time.Time
	problems []string
}

func (o *orderObserver) Stage(ev ingest.StageEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended == nil {
		o.ended = map[uint64]map[ingest.Stage]time.Time{}
	}
	m := o.ended[ev.Seq]
	if m == nil {
		m = map[ingest.Stage]time.Time{}
		o.ended[ev.Seq] = m
	}
	switch ev.Status {
	case ingest.StatusRunning:
		if ev.Stage > 0 {
			if _, ok := m[ev.Stage-1]; !ok {
				o.problems = append(o.problems, ev.EventID+": "+ev.Stage.String()+" started before "+(ev.Stage-1).String()+" ended")
			}
		}
	case ingest.StatusDone, ingest.StatusFailed:
		m[ev.Stage] = time.Now()
	}
}

func (o *orderObserver) Done(*ingest.Trace) {}

func TestPipelineManyEventsRace(t *testing.T) {
	s := newStores(t)
	const n = 2000
	obs := &orderObserver{}
	cfg := s.config()
	cfg.Observer, cfg.Workers, cfg.BatchSize = obs, 16, 64
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var traces []*ingest.Trace
	sum := p.Run(context.Background(), feed(generate(n, "race-")...), func(tr *ingest.Trace) { traces = append(traces, tr) })
	if sum.Ingested != n || sum.Total() != n {
		t.Fatalf("summary %+v, want %d ingested", sum, n)
	}
	if len(obs.problems) > 0 {
		t.Fatalf("stage order violated: %v", obs.problems[:min(5, len(obs.problems))])
	}
	if c, _ := s.index.Count(context.Background()); c != n {
		t.Fatalf("index holds %d documents, want %d", c, n)
	}
	files := 0
	if err := s.archive.List(context.Background(), "events/", func(string, int64) error { files++; return nil }); err != nil {
		t.Fatal(err)
	}
	if files != n {
		t.Fatalf("archive holds %d objects, want %d", files, n)
	}
	for _, topic := range []string{model.TopicEnriched, model.TopicIndexed} {
		if got := countLines(t, filepath.Join(s.dir, "topics", topic+".jsonl")); got != n {
			t.Errorf("%s has %d lines, want %d", topic, got, n)
		}
	}
	for _, tr := range traces {
		for st := ingest.StageReceive; st < ingest.NumStages; st++ {
			if tr.Stages[st].Status != ingest.StatusDone {
				t.Fatalf("%s: stage %s is %s", tr.EventID, st, tr.Stages[st].Status)
			}
		}
	}
}

func countLines(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
	}
	return n
}

func TestDuplicateAndConflict(t *testing.T) {
	s := newStores(t)
	ev := generate(1, "dup-")[0]
	run := func(in []byte) (ingest.Summary, *ingest.Trace) {
		p, _ := ingest.New(s.config())
		var last *ingest.Trace
		sum := p.Run(context.Background(), feed(in), func(tr *ingest.Trace) { last = tr })
		return sum, last
	}
	if sum, _ := run(ev); sum.Ingested != 1 {
		t.Fatalf("first ingest: %+v", sum)
	}
	key := mustKey(t, ev)
	before, err := s.archive.Get(context.Background(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := run(ev); sum.Duplicates != 1 || sum.Rejected+sum.Failed != 0 {
		t.Fatalf("identical re-ingest: %+v, want one duplicate", sum)
	}
	changed := []byte(strings.Replace(string(ev), `"turnId":"`, `"turnId":"other-`, 1))
	sum, tr := run(changed)
	if sum.Rejected != 1 || !ingest.IsConflict(tr.Err) {
		t.Fatalf("conflicting re-ingest: %+v err=%v, want a conflict", sum, tr.Err)
	}
	if len(tr.Problems) != 1 || tr.Problems[0].Path != "eventId" {
		t.Fatalf("conflict problems %v, want one at eventId", tr.Problems)
	}
	after, _ := s.archive.Get(context.Background(), key, 0)
	if string(after.Body) != string(before.Body) {
		t.Fatal("archived object changed after a conflicting ingest")
	}
	if c, _ := s.index.Count(context.Background()); c != 1 {
		t.Fatalf("index holds %d documents, want 1", c)
	}
	if got := countLines(t, filepath.Join(s.dir, "topics", model.TopicIndexed+".jsonl")); got != 1 {
		t.Fatalf("memory.indexed has %d lines, want 1 (no second notification)", got)
	}
}

func mustKey(t *testing.T, raw []byte) string {
	ev, err := model.Decode(raw, model.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := model.ArchiveKey(ev.EventID, ev.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// failingArchive refuses every third event, to show a failed archive write
// is never followed by an index write.
type failingArchive struct {
	ingest.Archive
	mu sync.Mutex
	n  int
}

func (f *failingArchive) Put(ctx context.Context, key string, body []byte) (bool, error) {
	f.mu.Lock()
	f.n++
	fail := f.n%3 == 0
	f.mu.Unlock()
	if fail {
		return false, errors.New("disk full")
	}
	return f.Archive.Put(ctx, key, body)
}

func TestArchiveFailureIsNeverIndexed(t *testing.T) {
	s := newStores(t)
	cfg := s.config()
	cfg.Archive = &failingArchive{Archive: s.archive}
	p, _ := ingest.New(cfg)
	var failed []string
	sum := p.Run(context.Background(), feed(generate(30, "fail-")...), func(tr *ingest.Trace) {
		if tr.Outcome == ingest.OutcomeFailed {
			failed = append(failed, tr.EventID)
			if tr.Stages[ingest.StageIndex].Status != ingest.StatusSkipped {
				t.Errorf("%s: index stage %s after a failed archive", tr.EventID, tr.Stages[ingest.StageIndex].Status)
			}
		}
	})
	if sum.Failed != 10 || sum.Ingested != 20 {
		t.Fatalf("summary %+v, want 10 failed and 20 ingested", sum)
	}
	for _, id := range failed {
		if _, err := s.index.Get(context.Background(), id); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("%s was indexed although its archive write failed (err=%v)", id, err)
		}
	}
}

func TestCancelStopsCleanly(t *testing.T) {
	s := newStores(t)
	ctx, cancel := context.WithCancel(context.Background())
	items := make(chan ingest.Item)
	go func() {
		defer close(items)
		// Ten more inputs arrive after the cancel, as they would from a
		// reader that has not stopped yet: each must end as canceled.
		for i, in := range generate(210, "cancel-") {
			if i == 200 {
				cancel()
			}
			items <- ingest.Item{Src: ingest.Source{File: "t", Line: i + 1}, Data: in}
		}
	}()
	p, _ := ingest.New(s.config())
	var ingested []string
	sum := p.Run(ctx, items, func(tr *ingest.Trace) {
		if tr.Outcome == ingest.OutcomeIngested {
			ingested = append(ingested, tr.EventID)
			if tr.Src.Line > 200 {
				t.Errorf("line %d, read after the cancel, was ingested", tr.Src.Line)
			}
		}
	})
	if sum.Ingested+sum.Canceled != 210 || sum.Total() != 210 || sum.Ingested == 0 || sum.Canceled < 10 {
		t.Fatalf("summary %+v after cancel at 200 of 210", sum)
	}
	if c, _ := s.index.Count(context.Background()); int(c) != sum.Ingested {
		t.Fatalf("index holds %d, summary says %d ingested", c, sum.Ingested)
	}
	for _, id := range ingested {
		if _, err := s.index.Get(context.Background(), id); err != nil {
			t.Fatalf("%s reported ingested but not indexed: %v", id, err)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	p, err := ingest.New(ingest.Config{Embedder: embed.Stub{}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	sum := p.Run(context.Background(), feed(append(generate(5, "dry-"), []byte(`{"eventId":"x"}`))...), nil)
	if sum.Valid != 5 || sum.Rejected != 1 {
		t.Fatalf("dry run summary %+v", sum)
	}
}

func TestTenantScopedRunRejectsOtherTenants(t *testing.T) {
	s := newStores(t)
	cfg := s.config()
	cfg.Tenant = "acme"
	p, _ := ingest.New(cfg)
	var rejected []*ingest.Trace
	sum := p.Run(context.Background(), feed(generate(30, "tenant-")...), func(tr *ingest.Trace) {
		if tr.Outcome == ingest.OutcomeRejected {
			rejected = append(rejected, tr)
		}
	})
	if sum.Ingested == 0 || sum.Rejected == 0 || sum.Ingested+sum.Rejected != 30 {
		t.Fatalf("summary %+v: want a mix of acme (ingested) and globex (rejected)", sum)
	}
	for _, tr := range rejected {
		if len(tr.Problems) != 1 || tr.Problems[0].Path != "context.tenantId" || !strings.Contains(tr.Problems[0].Reason, `"globex" is not "acme"`) {
			t.Fatalf("problems %v", tr.Problems)
		}
	}
}
