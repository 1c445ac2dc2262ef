package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"engram/model"
)

// ReindexConfig says what to rebuild and how.
type ReindexConfig struct {
	Archive    ArchiveReader
	Index      Index
	From, To   string // archive-key range: from inclusive, to exclusive ("" no end)
	Checkpoint string // file remembering the last key done, to resume (optional)
	Workers    int    // concurrent archive reads (default 16)
	BatchSize  int    // documents per index write (default 512)
	SummaryLen int
	Progress   func(ReindexSummary)
}

// ReindexSummary counts a rebuild.
type ReindexSummary struct {
	Objects, Created, Existing, Bad, Failed int
	ResumedAfter                            string
	Elapsed                                 time.Duration
	Errors                                  []string // the first few, with their keys
}

// Reindex rebuilds the index from the archive, the truth layer. It is
// idempotent (an existing document is left as it is) and resumable: keys
// are taken in order, a batch at a time, and the checkpoint records the
// last key of each batch that was fully indexed.
func Reindex(ctx context.Context, cfg ReindexConfig) (ReindexSummary, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 512
	}
	start := time.Now()
	r := &reindexer{cfg: cfg}
	from := cfg.From
	if last := r.loadCheckpoint(); last != "" && last >= from && (cfg.To == "" || last < cfg.To) {
		r.sum.ResumedAfter, from = last, last+"\x00"
	}
	var keys []string
	err := cfg.Archive.List(ctx, ListPrefix(from, cfg.To), func(key string, _ int64) error {
		if key < from || (cfg.To != "" && key >= cfg.To) {
			return nil
		}
		keys = append(keys, key)
		if len(keys) < cfg.BatchSize {
			return nil
		}
		err := r.batch(ctx, keys)
		keys = keys[:0]
		return err
	})
	if err == nil && len(keys) > 0 {
		err = r.batch(ctx, keys)
	}
	if err == nil && r.sum.Failed == 0 {
		r.clearCheckpoint()
	}
	r.sum.Elapsed = time.Since(start)
	return r.sum, err
}

// ListPrefix is the longest listing prefix (ending at a /) that covers the
// archive keys from from (inclusive) to to (exclusive, "" no end).
func ListPrefix(from, to string) string {
	if to == "" || !strings.HasPrefix(from, "events/") {
		return "events/"
	}
	i := 0
	for i < len(from) && i < len(to) && from[i] == to[i] {
		i++
	}
	p := from[:i]
	if !strings.HasPrefix(p, "events/") {
		return "events/"
	}
	return p[:strings.LastIndex(p, "/")+1]
}

type reindexer struct {
	cfg ReindexConfig
	sum ReindexSummary
}

// batch reads keys' objects concurrently, indexes them in one write, and
// moves the checkpoint past them when nothing failed.
func (r *reindexer) batch(ctx context.Context, keys []string) error {
	docs := make([]*model.IndexDoc, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	next := make(chan int)
	for range r.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				docs[i], errs[i] = r.doc(ctx, keys[i])
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var batch []*model.IndexDoc
	var at []int
	for i, d := range docs {
		r.sum.Objects++
		if errs[i] != nil {
			r.sum.Bad++
			r.note(keys[i], errs[i])
			continue
		}
		batch, at = append(batch, d), append(at, i)
	}
	failed := false
	for j, res := range r.cfg.Index.Write(ctx, batch) {
		switch {
		case res.Err != nil:
			r.sum.Failed++
			failed = true
			r.note(keys[at[j]], res.Err)
		case res.Created:
			r.sum.Created++
		default:
			r.sum.Existing++
		}
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress(r.sum)
	}
	if failed {
		return nil // the checkpoint stays: a re-run retries this batch
	}
	return r.saveCheckpoint(keys[len(keys)-1])
}

// doc rebuilds an index document from an archived event.
func (r *reindexer) doc(ctx context.Context, key string) (*model.IndexDoc, error) {
	obj, err := r.cfg.Archive.Get(ctx, key, 0)
	if err != nil {
		return nil, err
	}
	ev, err := model.Decode(obj.Body, model.DecodeOptions{})
	if err != nil {
		return nil, fmt.Errorf("not a valid event: %w", err)
	}
	if want, err := model.ArchiveKey(ev.EventID, ev.Timestamp); err != nil || want != key {
		return nil, fmt.Errorf("key does not match the event's eventId and timestamp (%s)", model.Quote(want))
	}
	ev.ObjectStorageKey = key
	return model.NewIndexDoc(ev, r.cfg.SummaryLen), nil
}

func (r *reindexer) note(key string, err error) {
	if len(r.sum.Errors) < 20 {
		r.sum.Errors = append(r.sum.Errors, key+": "+err.Error())
	}
}

func (r *reindexer) loadCheckpoint() string {
	if r.cfg.Checkpoint == "" {
		return ""
	}
	b, err := os.ReadFile(r.cfg.Checkpoint)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r *reindexer) saveCheckpoint(key string) error {
	if r.cfg.Checkpoint == "" {
		return nil
	}
	tmp := r.cfg.Checkpoint + ".tmp"
	if err := os.WriteFile(tmp, []byte(key+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.cfg.Checkpoint)
}

func (r *reindexer) clearCheckpoint() {
	if r.cfg.Checkpoint != "" {
		if err := os.Remove(r.cfg.Checkpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.note(r.cfg.Checkpoint, err)
		}
	}
}
