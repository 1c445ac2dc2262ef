package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"engram/ingest"
	"engram/model"
)

// encodingIndex is the SQLite index (an Encoder) counting how the
// pipeline writes to it; the first encoded writes fail transiently, as
// many as failFirst.
type encodingIndex struct {
	*syncingIndex
	mu                      sync.Mutex
	encodes, encoded, plain int
	plainDocs               int
	failFirst               int
}

type transientErr struct{}

func (transientErr) Error() string   { return "index unavailable (test)" }
func (transientErr) Transient() bool { return true }

func (x *encodingIndex) Encode(docs []*model.IndexDoc) ingest.Encoded {
	x.mu.Lock()
	x.encodes++
	x.mu.Unlock()
	return x.DB.Encode(docs)
}

func (x *encodingIndex) WriteEncoded(ctx context.Context, e ingest.Encoded) []ingest.IndexResult {
	x.mu.Lock()
	x.encoded++
	fail := x.failFirst > 0
	x.failFirst--
	x.mu.Unlock()
	if fail {
		res := make([]ingest.IndexResult, len(e.Docs()))
		for i := range res {
			res[i].Err = transientErr{}
		}
		return res
	}
	return x.syncingIndex.WriteEncoded(ctx, e)
}

func (x *encodingIndex) Write(ctx context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	x.mu.Lock()
	x.plain++
	x.plainDocs += len(docs)
	x.mu.Unlock()
	return x.syncingIndex.Write(ctx, docs)
}

// TestEncodedWrites: an index that is an Encoder gets every batch encoded
// ahead and written as encoded; a transient failure of that write is
// retried with a plain Write of the documents, and nothing is lost or
// written twice.
func TestEncodedWrites(t *testing.T) {
	for _, failFirst := range []int{0, 1} {
		s := newStores(t)
		ix := &encodingIndex{syncingIndex: &syncingIndex{DB: s.index}, failFirst: failFirst}
		cfg := s.config()
		cfg.Index, cfg.BatchSize = ix, 256
		cfg.Retry = ingest.RetryPolicy{Initial: time.Millisecond, Max: time.Millisecond}
		p, err := ingest.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const n = 700
		sum := p.Run(context.Background(), feed(generate(n, "enc-")...), nil)
		if sum.Ingested != n || sum.Failed != 0 {
			t.Fatalf("failFirst %d: %+v", failFirst, sum)
		}
		count, err := s.index.Count(context.Background())
		if err != nil || count != n {
			t.Fatalf("failFirst %d: %d documents indexed (%v), want %d", failFirst, count, err, n)
		}
		if ix.encodes == 0 || ix.encoded != ix.encodes {
			t.Errorf("failFirst %d: %d batches encoded, %d encoded writes: every batch should be written as encoded", failFirst, ix.encodes, ix.encoded)
		}
		if ix.plain != failFirst {
			t.Errorf("failFirst %d: %d plain writes, want one per failed encoded write", failFirst, ix.plain)
		}
		if failFirst > 0 && (ix.plainDocs == 0 || ix.plainDocs > 256) {
			t.Errorf("the retry wrote %d documents, want the failed batch's", ix.plainDocs)
		}
	}
}

// batchSizes is the SQLite index recording the size of each write.
type batchSizes struct {
	*syncingIndex
	mu    sync.Mutex
	sizes []int
}

func (x *batchSizes) WriteEncoded(ctx context.Context, e ingest.Encoded) []ingest.IndexResult {
	x.mu.Lock()
	x.sizes = append(x.sizes, len(e.Docs()))
	x.mu.Unlock()
	return x.syncingIndex.WriteEncoded(ctx, e)
}

// TestFloodBatches: events that come one at a time leave in a batch each
// after BatchWait; events that come fast (200 over a second) fill one batch
// for FloodWait.
func TestFloodBatches(t *testing.T) {
	run := func(wait, flood, gap time.Duration, n int) []int {
		s := newStores(t)
		ix := &batchSizes{syncingIndex: &syncingIndex{DB: s.index}}
		cfg := s.config()
		cfg.Index, cfg.BatchWait, cfg.FloodWait = ix, wait, flood
		p, err := ingest.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		items := make(chan ingest.Item)
		go func() {
			defer close(items)
			for i, in := range generate(n, "flood-") {
				items <- ingest.Item{Src: ingest.Source{File: "test", Line: i + 1}, Data: in}
				time.Sleep(gap)
			}
			// The input stays open a while: a batch must leave by the clock.
			time.Sleep(flood + 300*time.Millisecond)
		}()
		if sum := p.Run(context.Background(), items, nil); sum.Ingested != n {
			t.Fatalf("gap %v: %+v", gap, sum)
		}
		return ix.sizes
	}
	if sizes := run(20*time.Millisecond, time.Second, 300*time.Millisecond, 3); len(sizes) != 3 {
		t.Errorf("a trickle of 3 events was written in batches of %v, want one each", sizes)
	}
	if sizes := run(200*time.Millisecond, 3*time.Second, 5*time.Millisecond, 200); len(sizes) != 1 {
		t.Errorf("a flood of 200 events was written in batches of %v, want one, filled for FloodWait", sizes)
	}
}
