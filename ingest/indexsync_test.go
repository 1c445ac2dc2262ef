package ingest_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"engram/backend/sqliteindex"
	"engram/ingest"
	"engram/model"
)

// syncingIndex is the SQLite index with deferred syncs, counting what it
// created and what was covered by a Sync, or failing Sync with err.
type syncingIndex struct {
	*sqliteindex.DB
	mu      sync.Mutex
	err     error
	created int // documents created by returned writes
	durable int // created when the last successful Sync began
	syncs   int
}

func (x *syncingIndex) count(rs []ingest.IndexResult) []ingest.IndexResult {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range rs {
		if r.Err == nil && r.Created {
			x.created++
		}
	}
	return rs
}

func (x *syncingIndex) Write(ctx context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	return x.count(x.DB.Write(ctx, docs))
}

// WriteEncoded is the write the pipeline makes of the DB, an Encoder.
func (x *syncingIndex) WriteEncoded(ctx context.Context, e ingest.Encoded) []ingest.IndexResult {
	return x.count(x.DB.WriteEncoded(ctx, e))
}

func (x *syncingIndex) Sync(ctx context.Context) error {
	x.mu.Lock()
	created, err := x.created, x.err
	x.mu.Unlock()
	if err != nil {
		return err
	}
	if err := x.DB.Sync(ctx); err != nil {
		return err
	}
	x.mu.Lock()
	x.durable, x.syncs = max(x.durable, created), x.syncs+1
	x.mu.Unlock()
	return nil
}

func (x *syncingIndex) covered() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.durable
}

// orderedPublisher fails the test when it is given more events than the
// index had made durable.
type orderedPublisher struct {
	recorder
	t  *testing.T
	ix *syncingIndex
	n  int
}

func (p *orderedPublisher) Publish(ctx context.Context, as []ingest.Announcement) error {
	p.n += len(as)
	if d := p.ix.covered(); p.n > d {
		p.t.Errorf("%d events announced, only %d of them synced in the index", p.n, d)
	}
	return p.recorder.Publish(ctx, as)
}

func deferredIndex(t *testing.T, s *stores) *syncingIndex {
	t.Helper()
	db, err := sqliteindex.Open(filepath.Join(s.dir, "deferred.db"), sqliteindex.Options{DeferSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &syncingIndex{DB: db}
}

// With an index whose commits become durable only by Sync, nothing is
// announced or reported ingested before the Sync that covers it.
func TestIndexSyncedBeforeAnnounced(t *testing.T) {
	s := newStores(t)
	ix := deferredIndex(t, s)
	cfg := s.config()
	pub := &orderedPublisher{t: t, ix: ix}
	cfg.Index, cfg.Publisher, cfg.BatchSize = ix, pub, 16
	cfg.Outbox = ingest.OpenOutbox(filepath.Join(s.dir, "outbox.jsonl"))
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var reported, early int
	sum := p.Run(context.Background(), feed(generate(500, "sync-")...), func(tr *ingest.Trace) {
		if tr.Outcome == ingest.OutcomeIngested {
			if reported++; reported > ix.covered() {
				early++
			}
		}
	})
	if sum.Ingested != 500 {
		t.Fatalf("summary %+v, want 500 ingested", sum)
	}
	if early > 0 {
		t.Errorf("%d events reported ingested before an index sync covered them", early)
	}
	if ix.syncs == 0 || ix.covered() != 500 {
		t.Errorf("%d syncs covered %d documents, want all 500", ix.syncs, ix.covered())
	}
	if got := len(pub.ids()); got != 500 {
		t.Errorf("%d events announced, want 500", got)
	}
}

// A failed index sync fails the events it should have made durable: they
// are journalled, not announced, and their notifications stay held, so the
// next run announces them once it finds them in the index.
func TestIndexSyncFailureKeepsNotificationsHeld(t *testing.T) {
	s := newStores(t)
	ix := deferredIndex(t, s)
	ix.err = errors.New("disk on fire")
	cfg := s.config()
	pub := &recorder{}
	outbox := filepath.Join(s.dir, "outbox.jsonl")
	journal := ingest.OpenJournal(filepath.Join(s.dir, "pending.jsonl"))
	cfg.Index, cfg.Publisher, cfg.BatchSize, cfg.Journal = ix, pub, 16, journal
	cfg.Outbox = ingest.OpenOutbox(outbox)
	p, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum := p.Run(context.Background(), feed(generate(100, "nosync-")...), nil)
	cfg.Outbox.Close()
	if sum.Failed != 100 {
		t.Fatalf("summary %+v, want 100 failed", sum)
	}
	if n := len(pub.ids()); n != 0 {
		t.Errorf("%d events announced without a durable index", n)
	}
	pending, err := journal.Load()
	if err != nil || len(pending) != 100 {
		t.Fatalf("journal holds %d events (%v), want 100", len(pending), err)
	}
	held, err := ingest.HeldIDs(outbox)
	if err != nil || len(held) != 100 {
		t.Fatalf("outbox holds %d events (%v), want 100", len(held), err)
	}
	ix.err = nil
	up := &recorder{}
	cfg.Publisher, cfg.Outbox = up, ingest.OpenOutbox(outbox)
	p, err = ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Announce(context.Background()); err != nil || n != 100 {
		t.Fatalf("the next run announced %d (%v), want 100", n, err)
	}
}
