package ingest

import (
	"context"
	"slices"
	"time"
)

// ReindexKeys indexes the archived events of the given keys, as Reindex
// does the keys of a listing (idempotent, BatchSize at a time, Workers
// reads at once) but with no listing and no checkpoint: a catch-up from
// the notifications of the events written meanwhile, which name their
// keys. Duplicates are indexed once; From, To, Checkpoint and Restart of
// cfg are not used.
func ReindexKeys(ctx context.Context, cfg ReindexConfig, keys []string) (ReindexSummary, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 512
	}
	cfg.Checkpoint = ""
	start := time.Now()
	r := &reindexer{cfg: cfg}
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	var err error
	for len(keys) > 0 && err == nil {
		n := min(len(keys), cfg.BatchSize)
		err = r.batch(ctx, keys[:n])
		keys = keys[n:]
	}
	r.sum.Elapsed = time.Since(start)
	return r.sum, err
}
