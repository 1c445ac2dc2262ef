package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"engram/backend"
	"engram/model"
)

// keysArchive is an in-memory archive of n valid events, listed in key
// order; failGet makes the reads of some keys fail as a network would.
type keysArchive struct {
	bodies  map[string][]byte
	keys    []string
	failGet func(key string) bool
}

func newKeysArchive(t *testing.T, n int) *keysArchive {
	a := &keysArchive{bodies: map[string][]byte{}}
	for i := range n {
		id, ts := fmt.Sprintf("ev-%04d", i), "2026-05-08T10:00:00Z"
		key, err := model.ArchiveKey(id, ts)
		if err != nil {
			t.Fatal(err)
		}
		a.bodies[key] = fmt.Appendf(nil, `{"eventId":%q,"timestamp":%q,"type":"user_input","context":{"sessionId":"s"},"input":{"text":"t","embedding":[0.1]},"importanceScore":0.5,"tags":[]}`, id, ts)
		a.keys = append(a.keys, key)
	}
	sort.Strings(a.keys)
	return a
}

func (a *keysArchive) Get(_ context.Context, key string, _ int64) (*Object, error) {
	if a.failGet != nil && a.failGet(key) {
		return nil, errors.New("connection reset")
	}
	b, ok := a.bodies[key]
	if !ok {
		return nil, backend.ErrNotFound
	}
	return &Object{Key: key, Body: b, Size: int64(len(b))}, nil
}

func (a *keysArchive) List(ctx context.Context, prefix string, fn func(string, int64) error) error {
	for _, k := range a.keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(k, prefix) {
			if err := fn(k, int64(len(a.bodies[k]))); err != nil {
				return err
			}
		}
	}
	return nil
}

// memIndex is an in-memory index; failWrite makes some documents fail.
type memIndex struct {
	mu        sync.Mutex
	docs      map[string]*model.IndexDoc
	failWrite func(id string) bool
}

func newMemIndex() *memIndex { return &memIndex{docs: map[string]*model.IndexDoc{}} }

func (m *memIndex) Write(_ context.Context, docs []*model.IndexDoc) []IndexResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := make([]IndexResult, len(docs))
	for i, d := range docs {
		switch _, ok := m.docs[d.EventID]; {
		case m.failWrite != nil && m.failWrite(d.EventID):
			res[i].Err = errors.New("bulk rejected")
		case !ok:
			m.docs[d.EventID], res[i].Created = d, true
		}
	}
	return res
}

func (m *memIndex) holds(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.docs[id]
	return ok, nil
}

func (m *memIndex) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.docs)
}

func (m *memIndex) Name() string     { return "mem" }
func (m *memIndex) Describe() string { return "mem" }
func (m *memIndex) Close() error     { return nil }

// reindexInto is the configuration of a run of a into ix under id, with
// batches of 10, whose notices are appended to notices.
func reindexInto(a *keysArchive, ix *memIndex, id, checkpoint string, notices *[]string) ReindexConfig {
	return ReindexConfig{
		Archive: a, Index: ix, From: "events/", Checkpoint: checkpoint,
		IndexID: id, Holds: ix.holds, BatchSize: 10, Workers: 4,
		Notice: func(msg string) { *notices = append(*notices, msg) },
	}
}

// interrupted runs a reindex of a into ix that is cancelled, as by Ctrl-C,
// once it has handled 30 objects, and checks that it left a checkpoint.
func interrupted(t *testing.T, a *keysArchive, ix *memIndex, checkpoint string) ReindexSummary {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var notices []string
	cfg := reindexInto(a, ix, "mem A", checkpoint, &notices)
	cfg.Progress = func(s ReindexSummary) {
		if s.Objects >= 30 {
			cancel()
		}
	}
	sum, err := Reindex(ctx, cfg)
	if !errors.Is(err, context.Canceled) || sum.CheckpointAfter != a.keys[29] {
		t.Fatalf("interrupted run: err %v, checkpoint after %q, want %q", err, sum.CheckpointAfter, a.keys[29])
	}
	if _, err := os.Stat(checkpoint); err != nil {
		t.Fatalf("no checkpoint left: %v", err)
	}
	return sum
}

// TestReindexCheckpointBelongsToItsIndex: a checkpoint left by an
// interrupted run is resumed only into the index it was written for, and
// only while that index still holds what it vouches for; in every case
// the second run leaves every archived event indexed.
func TestReindexCheckpointBelongsToItsIndex(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second func(first *memIndex, cfg *ReindexConfig) *memIndex // the index of the second run
		notice string                                              // "" when it resumes
	}{
		{"same index resumes", func(first *memIndex, _ *ReindexConfig) *memIndex { return first }, ""},
		{"index deleted and recreated", func(*memIndex, *ReindexConfig) *memIndex { return newMemIndex() },
			`does not match this index (the index does not hold "ev-0000", indexed before it); starting over`},
		{"index lost its latest events", func(first *memIndex, _ *ReindexConfig) *memIndex {
			delete(first.docs, "ev-0029")
			return first
		}, `the index does not hold "ev-0029"`},
		{"another index", func(first *memIndex, cfg *ReindexConfig) *memIndex {
			cfg.IndexID = "mem B"
			return first
		}, `does not match this index (it was written for "mem A"); starting over`},
		{"index that cannot be asked", func(first *memIndex, cfg *ReindexConfig) *memIndex {
			cfg.Holds = nil
			return first
		}, "cannot be asked"},
		{"restart", func(first *memIndex, cfg *ReindexConfig) *memIndex {
			cfg.Restart = true
			return first
		}, "ignoring checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, first := newKeysArchive(t, 100), newMemIndex()
			checkpoint := filepath.Join(t.TempDir(), "reindex.checkpoint")
			interrupted(t, a, first, checkpoint)
			var notices []string
			cfg := reindexInto(a, nil, "mem A", checkpoint, &notices)
			ix := tc.second(first, &cfg)
			cfg.Index = ix
			if cfg.Holds != nil {
				cfg.Holds = ix.holds
			}
			sum, err := Reindex(context.Background(), cfg)
			if err != nil || ix.count() != 100 {
				t.Fatalf("second run: err %v, %d documents, want 100; %+v", err, ix.count(), sum)
			}
			notice := strings.Join(notices, "\n")
			if tc.notice == "" {
				if sum.ResumedAfter != a.keys[29] || sum.Objects != 70 || !strings.Contains(notice, "resuming after "+a.keys[29]) {
					t.Fatalf("did not resume after %s: %+v, notices %q", a.keys[29], sum, notice)
				}
			} else if sum.ResumedAfter != "" || sum.Objects != 100 || !strings.Contains(notice, tc.notice) {
				t.Fatalf("did not start over saying %q: %+v, notices %q", tc.notice, sum, notice)
			}
			if _, err := os.Stat(checkpoint); !os.IsNotExist(err) || sum.CheckpointAfter != "" {
				t.Fatalf("a finished run left its checkpoint (%v, %q)", err, sum.CheckpointAfter)
			}
		})
	}
}

// TestReindexFailureHoldsCheckpoint: once an object could not be indexed
// for a reason that may pass (an index write or an archive read failed),
// later batches must not move the checkpoint past it, or a resume would
// skip it.
func TestReindexFailureHoldsCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(a *keysArchive, ix *memIndex, on *bool)
	}{
		{"index write", func(_ *keysArchive, ix *memIndex, on *bool) {
			ix.failWrite = func(id string) bool { return *on && id == "ev-0015" }
		}},
		{"archive read", func(a *keysArchive, _ *memIndex, on *bool) {
			a.failGet = func(key string) bool { return *on && strings.HasSuffix(key, "/ev-0015.json") }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ix := newKeysArchive(t, 100), newMemIndex()
			checkpoint := filepath.Join(t.TempDir(), "reindex.checkpoint")
			on := true
			tc.fail(a, ix, &on)
			var notices []string
			sum, err := Reindex(context.Background(), reindexInto(a, ix, "mem A", checkpoint, &notices))
			if err != nil || sum.Bad+sum.Failed != 1 || sum.CheckpointAfter != a.keys[9] {
				t.Fatalf("first run: err %v, %+v; want 1 failure and the checkpoint after %s", err, sum, a.keys[9])
			}
			on = false
			sum, err = Reindex(context.Background(), reindexInto(a, ix, "mem A", checkpoint, &notices))
			if err != nil || sum.ResumedAfter != a.keys[9] || sum.Created != 1 || ix.count() != 100 {
				t.Fatalf("second run: err %v, %+v, %d documents; want it to resume after %s and index the one left", err, sum, ix.count(), a.keys[9])
			}
		})
	}
}

// TestReindexBadObjectMovesCheckpoint: an object that can never be indexed
// (not a valid event) does not hold the checkpoint back, since a re-run
// would find it just as bad.
func TestReindexBadObjectMovesCheckpoint(t *testing.T) {
	a, ix := newKeysArchive(t, 20), newMemIndex()
	a.bodies[a.keys[5]] = []byte("not json")
	checkpoint := filepath.Join(t.TempDir(), "reindex.checkpoint")
	var notices []string
	sum, err := Reindex(context.Background(), reindexInto(a, ix, "mem A", checkpoint, &notices))
	if err != nil || sum.Bad != 1 || sum.CheckpointAfter != "" || ix.count() != 19 {
		t.Fatalf("err %v, %+v, %d documents", err, sum, ix.count())
	}
}

// TestReindexOldCheckpointStartsOver: a checkpoint in the format before
// it named its index (one key) is not trusted.
func TestReindexOldCheckpointStartsOver(t *testing.T) {
	a, ix := newKeysArchive(t, 20), newMemIndex()
	checkpoint := filepath.Join(t.TempDir(), "reindex.checkpoint")
	if err := os.WriteFile(checkpoint, []byte(a.keys[15]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notices []string
	sum, err := Reindex(context.Background(), reindexInto(a, ix, "mem A", checkpoint, &notices))
	if err != nil || sum.Objects != 20 || ix.count() != 20 || len(notices) != 1 || !strings.Contains(notices[0], "starting over") {
		t.Fatalf("err %v, %+v, %d documents, notices %q", err, sum, ix.count(), notices)
	}
}

// TestReindexHoldsError: a checkpoint that cannot be checked because the
// index does not answer stops the run rather than being guessed at.
func TestReindexHoldsError(t *testing.T) {
	a, ix := newKeysArchive(t, 100), newMemIndex()
	checkpoint := filepath.Join(t.TempDir(), "reindex.checkpoint")
	interrupted(t, a, ix, checkpoint)
	var notices []string
	cfg := reindexInto(a, ix, "mem A", checkpoint, &notices)
	cfg.Holds = func(context.Context, string) (bool, error) { return false, errors.New("connection refused") }
	sum, err := Reindex(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || sum.Objects != 0 || sum.CheckpointAfter != a.keys[29] {
		t.Fatalf("err %v, %+v", err, sum)
	}
}

// TestReindexOnBatch: OnBatch hears of every batch once it is done, with
// its keys, its counts (a failed read among them, and its error) and the
// times of its reads and of its index write, in order.
func TestReindexOnBatch(t *testing.T) {
	a := newKeysArchive(t, 25)
	a.failGet = func(key string) bool { return key == a.keys[12] }
	var notices []string
	cfg := reindexInto(a, newMemIndex(), "mem", "", &notices)
	var got []ReindexBatch
	cfg.OnBatch = func(b ReindexBatch) { got = append(got, b) }
	if _, err := Reindex(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d batches, want 3 (25 objects in tens)", len(got))
	}
	for i, b := range got {
		want := min(10, 25-10*i)
		if b.Objects != want || b.FirstKey != a.keys[10*i] || b.LastKey != a.keys[10*i+want-1] {
			t.Errorf("batch %d: %d objects %s..%s, want %d %s..%s", i, b.Objects, b.FirstKey, b.LastKey, want, a.keys[10*i], a.keys[10*i+want-1])
		}
		if b.Read <= 0 || b.WriteAt.Before(b.Start.Add(b.Read)) || b.Write <= 0 || !b.AnnounceAt.IsZero() {
			t.Errorf("batch %d times: start %v read %v, write at %v for %v, announce at %v", i, b.Start, b.Read, b.WriteAt, b.Write, b.AnnounceAt)
		}
	}
	if b := got[1]; b.Bad != 1 || b.Created != 9 || b.Err == nil || !strings.Contains(b.Err.Error(), "connection reset") {
		t.Errorf("batch with the failed read: %+v", b)
	}
	if got[0].Err != nil || got[0].Created != 10 {
		t.Errorf("first batch: %+v", got[0])
	}
}

type idPublisher struct{ ids []string }

func (p *idPublisher) Publish(_ context.Context, as []Announcement) error {
	for _, a := range as {
		p.ids = append(p.ids, a.Enriched.EventID)
	}
	return nil
}

func (p *idPublisher) Close() error { return nil }

// TestReindexAnnounceExisting: a rebuild that did not announce leaves
// documents a later --announce run finds existing and skips; with
// AnnounceExisting they are announced, and released from the outbox.
func TestReindexAnnounceExisting(t *testing.T) {
	a, ix := newKeysArchive(t, 25), newMemIndex()
	var notices []string
	if _, err := Reindex(context.Background(), reindexInto(a, ix, "mem", "", &notices)); err != nil {
		t.Fatal(err)
	}
	for _, existing := range []bool{false, true} {
		pub := &idPublisher{}
		cfg := reindexInto(a, ix, "mem", "", &notices)
		cfg.Publisher, cfg.Outbox = pub, OpenOutbox(filepath.Join(t.TempDir(), "outbox"))
		cfg.AnnounceExisting = existing
		sum, err := Reindex(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if existing {
			want = 25
		}
		if sum.Existing != 25 || sum.Announced != want || len(pub.ids) != want || sum.Unannounced != 0 {
			t.Errorf("AnnounceExisting %v: %+v, published %d", existing, sum, len(pub.ids))
		}
		cfg.Outbox.Close()
		if held, err := HeldIDs(cfg.Outbox.Path()); err != nil || len(held) != 0 {
			t.Errorf("AnnounceExisting %v: outbox holds %d (%v)", existing, len(held), err)
		}
	}
}
