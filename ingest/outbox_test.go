package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"engram/ingest"
	"engram/ingest/publish"
	"engram/model"
)

// recorder is a Publisher that keeps what it was given, or fails with err.
type recorder struct {
	mu       sync.Mutex
	err      error
	enriched []model.Enriched
	indexed  []model.Indexed
}

func (r *recorder) Publish(_ context.Context, as []ingest.Announcement) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	for _, a := range as {
		r.enriched = append(r.enriched, a.Enriched)
		r.indexed = append(r.indexed, a.Indexed)
	}
	return nil
}

func (r *recorder) Close() error { return nil }

// ids is the event ids announced, each counted.
func (r *recorder) ids() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]int{}
	for _, e := range r.enriched {
		m[e.EventID]++
	}
	return m
}

func runWith(t *testing.T, s *stores, pub ingest.Publisher, ob *ingest.Outbox, inputs [][]byte) ingest.Summary {
	t.Helper()
	cfg := s.config()
	cfg.Publisher, cfg.Outbox, cfg.BatchSize = pub, ob, 16
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p.Run(context.Background(), feed(inputs...), func(*ingest.Trace) {})
}

func announce(t *testing.T, s *stores, pub ingest.Publisher, ob *ingest.Outbox) int {
	t.Helper()
	cfg := s.config()
	cfg.Publisher, cfg.Outbox = pub, ob
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n, err := p.Announce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An event indexed whose notifications could not be published is announced
// by the next run, once, with the payload the first run would have sent.
func TestOutboxAnnouncesWhatAFailedPublishHeld(t *testing.T) {
	s := newStores(t)
	path := filepath.Join(s.dir, "outbox.jsonl")
	inputs := generate(100, "held-")
	down := &recorder{err: errors.New("broker down")}
	first := ingest.OpenOutbox(path)
	sum := runWith(t, s, down, first, inputs)
	first.Close() // the run ends: what it holds stays on disk
	if sum.Failed != 100 {
		t.Fatalf("first run %+v: want 100 failed (indexed, not announced)", sum)
	}
	if c, _ := s.index.Count(context.Background()); c != 100 {
		t.Fatalf("index holds %d, want 100", c)
	}
	up := &recorder{}
	if n := announce(t, s, up, ingest.OpenOutbox(path)); n != 100 {
		t.Fatalf("announced %d, want 100", n)
	}
	for id, c := range up.ids() {
		if c != 1 {
			t.Errorf("%s announced %d times", id, c)
		}
	}
	for i, e := range up.enriched {
		doc, err := s.index.Get(context.Background(), e.EventID)
		if err != nil {
			t.Fatal(err)
		}
		if e.ObjectStorageKey != doc.ObjectStorageKey || up.indexed[i].EventID != e.EventID || up.indexed[i].Index != s.index.Name() {
			t.Fatalf("announcement %d does not match its document: %+v / %+v", i, e, up.indexed[i])
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outbox still there after everything was announced: %v", err)
	}
	if n := announce(t, s, up, ingest.OpenOutbox(path)); n != 0 {
		t.Errorf("a second Announce made %d announcements, want 0", n)
	}
}

// A run that died between holding a batch and publishing it (the crash
// window of at-most-once) leaves the batch held; the next run announces the
// events the index holds and drops those it does not (never committed).
func TestOutboxAfterCrashAnnouncesOnlyIndexed(t *testing.T) {
	s := newStores(t)
	path := filepath.Join(s.dir, "outbox.jsonl")
	inputs := generate(40, "crash-")
	runWith(t, s, &recorder{}, nil, inputs[:20]) // indexed and announced without an outbox
	held := announcements(t, s, inputs)
	dead := ingest.OpenOutbox(path)
	if err := dead.Hold(held); err != nil { // and never released: the process died
		t.Fatal(err)
	}
	dead.Close()
	up := &recorder{}
	if n := announce(t, s, up, ingest.OpenOutbox(path)); n != 20 {
		t.Fatalf("announced %d, want the 20 indexed", n)
	}
	for id := range up.ids() {
		if !strings.HasPrefix(id, "crash-") {
			t.Fatalf("unexpected id %s", id)
		}
		if _, err := s.index.Get(context.Background(), id); err != nil {
			t.Errorf("announced %s, which the index does not hold: %v", id, err)
		}
	}
}

// announcements are the notifications of inputs, as the pipeline makes them.
func announcements(t *testing.T, s *stores, inputs [][]byte) []ingest.Announcement {
	t.Helper()
	var out []ingest.Announcement
	for _, raw := range inputs {
		ev, err := model.Decode(raw, model.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		out = append(out, ingest.Announcement{Enriched: model.NewEnriched(ev), Indexed: model.NewIndexed(ev, s.index.Name())})
	}
	return out
}

// A normal run leaves no outbox behind and announces every event once.
func TestOutboxEmptyAfterCleanRun(t *testing.T) {
	s := newStores(t)
	path := filepath.Join(s.dir, "outbox.jsonl")
	ob := ingest.OpenOutbox(path)
	up := &recorder{}
	sum := runWith(t, s, up, ob, generate(300, "clean-"))
	if sum.Ingested != 300 || len(up.ids()) != 300 {
		t.Fatalf("%+v, %d announced", sum, len(up.ids()))
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("outbox left after a clean run: %v", err)
	}
	// Re-ingesting the same events announces nothing: they were announced.
	again := &recorder{}
	runWith(t, s, again, ingest.OpenOutbox(path), generate(300, "clean-"))
	if n := len(again.ids()) + announce(t, s, again, ingest.OpenOutbox(path)); n != 0 {
		t.Errorf("re-ingest announced %d events again", n)
	}
}

// Processes sharing a data directory hold outbox files of their own: one
// emptying its file never drops another's, and Announce takes over only the
// files of processes that are gone.
func TestOutboxPerProcess(t *testing.T) {
	s := newStores(t)
	path := filepath.Join(s.dir, "outbox.jsonl")
	inputs := generate(10, "pp-")
	runWith(t, s, &recorder{}, nil, inputs)
	as := announcements(t, s, inputs)
	a, b := ingest.OpenOutbox(path), ingest.OpenOutbox(path)
	if err := a.Hold(as[:3]); err != nil {
		t.Fatal(err)
	}
	if err := b.Hold(as[3:]); err != nil {
		t.Fatal(err)
	}
	if a.Path() == b.Path() {
		t.Fatalf("two live outboxes share %s", a.Path())
	}
	if err := a.Release([]string{as[0].Enriched.EventID, as[1].Enriched.EventID, as[2].Enriched.EventID}); err != nil { // a empties its file
		t.Fatal(err)
	}
	up := &recorder{}
	if n := announce(t, s, up, ingest.OpenOutbox(path)); n != 0 {
		t.Fatalf("announced %d held by live processes", n)
	}
	b.Close() // b dies holding len(as)-3
	if n := announce(t, s, up, ingest.OpenOutbox(path)); n != len(as)-3 {
		t.Fatalf("announced %d of the %d b held", n, len(as)-3)
	}
	a.Close()
}

// On a full file system an append is whole lines or nothing: the topic file
// never holds a cut line, and once space is back the next append is a
// clean line of its own.
func TestAppendLinesOnFullDisk(t *testing.T) {
	dir := smallTmpfs(t, "16k")
	f, err := os.OpenFile(filepath.Join(dir, "topic.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := []byte(`{"eventId":"` + strings.Repeat("x", 1000) + `"}` + "\n")
	var full error
	for n := 0; n < 100 && full == nil; n++ {
		full = ingest.AppendLines(f, append(append([]byte{}, line...), line...), true)
	}
	if full == nil {
		t.Fatal("the 16 KiB file system never filled")
	}
	checkWholeLines(t, f.Name(), line)
	if err := f.Truncate(0); err != nil { // space freed
		t.Fatal(err)
	}
	if err := ingest.AppendLines(f, line, true); err != nil {
		t.Fatalf("after space was freed: %v", err)
	}
	checkWholeLines(t, f.Name(), line)
}

func checkWholeLines(t *testing.T, path string, line []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%len(line) != 0 || (len(b) > 0 && b[len(b)-1] != '\n') {
		t.Fatalf("%s is %d bytes: not whole %d-byte lines", path, len(b), len(line))
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" && !json.Valid([]byte(l)) {
			t.Fatalf("unparsable line %.40q", l)
		}
	}
}

// smallTmpfs mounts a tmpfs of size for the test: a real full disk.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatalf("mounting a tmpfs (needs root): %v: %s", err, out)
		}
		t.Skipf("mounting a tmpfs needs root (run as root, as CI does): %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// A crash can cut a write short (kill -9 in the middle of a batch's append
// left `…"eventId":"x` at the end of memory.indexed.jsonl, and the next run's
// first line fused with it): the torn line is cut off before appending.
func TestCutTornLine(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"a\nb\n", "a\nb\n"}, {"a\nb\npart", "a\nb\n"}, {"part", ""}, {"", ""},
		{strings.Repeat("x", 70000) + "\n" + strings.Repeat("y", 70000), strings.Repeat("x", 70000) + "\n"},
	} {
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, []byte(c.in), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := ingest.CutTornLine(f)
		f.Close()
		got, _ := os.ReadFile(path)
		if err != nil || string(got) != c.out || cut != int64(len(c.in)-len(c.out)) {
			t.Errorf("%.20q: got %.20q, cut %d, %v", c.in, got, cut, err)
		}
	}
}

// The topic files and the journal survive a torn last line: what comes
// after it is read.
func TestTornLinesDoNotSwallowTheNext(t *testing.T) {
	s := newStores(t)
	runWith(t, s, s.topics, nil, generate(5, "torn-"))
	s.topics.Close()
	topic := filepath.Join(s.dir, "topics", model.TopicIndexed+".jsonl")
	f, _ := os.OpenFile(topic, os.O_WRONLY|os.O_APPEND, 0)
	if _, err := f.WriteString(`{"eventId":"cut-in-the-mid`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tp, err := publish.OpenTopics(filepath.Join(s.dir, "topics"))
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	runWith(t, s, tp, nil, generate(10, "torn2-"))
	checkJSONLines(t, topic, 15)

	j := ingest.OpenJournal(filepath.Join(s.dir, "pending.jsonl"))
	if err := j.Add(ingest.PendingEvent{EventID: "a", Key: "events/a"}); err != nil {
		t.Fatal(err)
	}
	jf, _ := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if _, err := jf.WriteString(`{"eventId":"torn","objectSto`); err != nil {
		t.Fatal(err)
	}
	jf.Close()
	if err := j.Add(ingest.PendingEvent{EventID: "b", Key: "events/b"}); err != nil {
		t.Fatal(err)
	}
	ps, err := j.Load()
	if err != nil || len(ps) != 2 || ps[1].EventID != "b" {
		t.Fatalf("journal after a torn line: %+v, %v", ps, err)
	}
}

// An outbox file a dead process left holding announcements is not taken
// over by a new writer (which would empty it): the writer takes the next.
func TestOutboxLeavesAnOrphanToAnnounce(t *testing.T) {
	s := newStores(t)
	path := filepath.Join(s.dir, "outbox.jsonl")
	dead := ingest.OpenOutbox(path)
	if err := dead.Hold(announcements(t, s, generate(3, "orph-"))); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	live := ingest.OpenOutbox(path)
	if err := live.Hold(announcements(t, s, generate(2, "live-"))); err != nil {
		t.Fatal(err)
	}
	if live.Path() == path {
		t.Fatalf("a new outbox took %s, which a dead process left holding", path)
	}
	if err := live.Release([]string{"live-agent-a-000001-obs"}); err != nil {
		t.Fatal(err)
	}
	if ids, err := ingest.HeldIDs(path); err != nil || len(ids) < 3 {
		t.Fatalf("held after the live outbox emptied: %v, %v", ids, err)
	}
	live.Close()
}

func checkJSONLines(t *testing.T, path string, want int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("%s:%d is not JSON: %.60q", path, i+1, l)
		}
	}
	if len(lines) != want {
		t.Fatalf("%s has %d lines, want %d", path, len(lines), want)
	}
}

// While batches overlap something is always held and the file is never
// emptied: it is rewritten with only what is held once it grows past a
// few MiB, and stays a file this process holds.
func TestOutboxCompactsWhileBatchesOverlap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.jsonl")
	ob := ingest.OpenOutbox(path)
	defer ob.Close()
	batch := func(n int) ([]ingest.Announcement, []string) {
		as := make([]ingest.Announcement, 100)
		ids := make([]string, len(as))
		for i := range as {
			ids[i] = fmt.Sprintf("ev-%03d-%03d", n, i)
			as[i].Enriched = model.Enriched{EventID: ids[i], ObjectStorageKey: strings.Repeat("k", 400)}
		}
		return as, ids
	}
	var prev []string
	var largest int64
	for n := range 200 { // ~100,000 bytes a batch, 20 MB in all
		as, ids := batch(n)
		if err := ob.Hold(as); err != nil {
			t.Fatal(err)
		}
		if err := ob.Release(prev); err != nil {
			t.Fatalf("release of batch %d: %v", n-1, err)
		}
		prev = ids
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, st.Size())
	}
	if largest > 6<<20 {
		t.Errorf("the outbox grew to %d bytes with one batch held", largest)
	}
	held, err := ingest.HeldIDs(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != len(prev) {
		t.Errorf("outbox holds %d events, want the last batch's %d", len(held), len(prev))
	}
	for _, id := range prev {
		if !held[id] {
			t.Errorf("%s held but not in the file", id)
		}
	}
	other := ingest.OpenOutbox(path)
	if err := other.Hold([]ingest.Announcement{{}}); err != nil || other.Path() == path {
		t.Errorf("another process's outbox: %s (%v), want a file beside %s", other.Path(), err, path)
	}
	other.Close()
	if m, _ := filepath.Glob(path + ".compact"); len(m) != 0 {
		t.Errorf("compaction left %v", m)
	}
}
