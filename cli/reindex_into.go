package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"engram/backend/osindex"
	"engram/ingest"
	"engram/model"
)

// catchUpLag is how far before the start of an upgrade the catch-up
// listings begin: archive keys are dated by the events' own timestamps, so
// an event written during the upgrade but stamped a little earlier (an
// agent's clock, a queue's delay) lies before the start's day. Older
// stragglers are not caught up; the count check before the swap notices
// them.
const catchUpLag = time.Hour

// beforeCatchUp, when set (by tests), runs between the history pass and
// the catch-up: where the deployment's writes of the meantime land.
var beforeCatchUp func()

// runReindexInto is engram reindex --into NAME [--swap-alias ALIAS]: the
// upgrade without downtime of an OpenSearch index written without engram's
// extensions, step 3 of docs/deployment.md, "Upgrading a deployment the
// source system wrote": NAME built like the configured index from the
// archive, caught up, the alias moved once NAME holds at least as many
// documents, caught up again; the old index kept.
func runReindexInto(ctx context.Context, e *env, conf *resolved, o *reindexOpts, st *backends, from, to string) error {
	src, ok := st.index.(*osindex.Index)
	if !ok {
		return fmt.Errorf("reindex --into builds a new OpenSearch index: set --index opensearch (the index now is %s)", st.index.Describe())
	}
	start := time.Now()
	if o.swapAlias != "" { // a name that can never be swapped fails now, not after the rebuild
		if _, err := src.AliasIndices(ctx, o.swapAlias); err != nil {
			return errors.New(conf.redact(err.Error()))
		}
	}
	// Before anything is read: the notifications of the events written
	// from now on are the catch-up's.
	indexed := startIndexedCatchUp(ctx, e, conf)
	if _, err := src.CreateLike(ctx, o.into); err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	dim := st.embedder.Dimension()
	cfg := osConfig(conf, dim, e)
	cfg.Index = o.into
	dst, err := osindex.Open(ctx, cfg)
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	defer dst.Close()

	rep := newReporter(e, false, nil)
	// keys, when set, are the archive keys of a catch-up from
	// memory.indexed: indexed without listing or checkpoint.
	pass := func(what, from string, restart bool, keys ...string) (ingest.ReindexSummary, error) {
		rc := ingest.ReindexConfig{
			Archive: st.archive, Index: dst, From: from, To: to,
			Checkpoint: filepath.Join(st.data, "reindex.into-"+safeName(o.into)+"."+checkpointName(from, to)+".checkpoint"),
			IndexID:    dst.Describe(), Holds: indexHolds(dst), Restart: restart,
			Notice: func(msg string) { fmt.Fprintln(e.stderr, "engram: "+safeLine(msg)) },
			Progress: func(s ingest.ReindexSummary) {
				rep.line(fmt.Sprintf("%s: %d objects, %d created, %d already indexed", what, s.Objects, s.Created, s.Existing))
			},
		}
		sum, err := st.reindex(ctx, rc, keys)
		rep.line("")
		for _, msg := range sum.Errors {
			fmt.Fprintln(e.stderr, safeLine(msg))
		}
		fmt.Fprintf(e.stderr, "%s into %s: %d objects, %d created, %d already indexed, %d unreadable, %d failed in %s\n",
			what, safeLine(dst.Describe()), sum.Objects, sum.Created, sum.Existing, sum.Bad, sum.Failed, sum.Elapsed.Round(time.Millisecond))
		if ctx.Err() != nil {
			return sum, reindexInterrupted(e, sum)
		}
		if err == nil && sum.Bad+sum.Failed > 0 {
			err = exitError{1}
		}
		return sum, err
	}
	if _, err := pass("reindex", from, o.restart); err != nil {
		return err
	}
	if beforeCatchUp != nil {
		beforeCatchUp()
	}
	// From the start's day (less the lag), unless the range ends before it.
	catchFrom := max(from, model.ArchivePrefix(start.Add(-catchUpLag)))
	catchUp := func(what string) error {
		if to != "" && catchFrom >= to {
			return nil // the range asked for ends before the upgrade began
		}
		if _, err := pass(what+catchFrom, catchFrom, true); err != nil {
			return err
		}
		return catchUpIndexed(ctx, e, indexed, what, pass)
	}
	if err := catchUp("catch-up from "); err != nil {
		return err
	}
	if o.swapAlias == "" {
		fmt.Fprintf(e.stderr, "engram: %s is ready; move readers to it with --swap-alias ALIAS, or point them at it (--opensearch-index %s)\n", o.into, o.into)
		return nil
	}
	if err := checkBeforeSwap(ctx, src, dst); err != nil {
		return err
	}
	old, err := src.SwapAlias(ctx, o.swapAlias, o.into)
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	was, kept := "did not exist", src.Name()
	if len(old) > 0 {
		was, kept = "named "+strings.Join(old, ", "), strings.Join(old, ", ")
	}
	fmt.Fprintf(e.stderr, "engram: alias %s now names %s alone (it %s), moved in one _aliases request; %s is kept: delete it once nothing reads or writes it\n",
		o.swapAlias, o.into, was, kept)
	// Events written to the old index between the catch-up and the swap.
	return catchUp("catch-up after the swap from ")
}

// checkBeforeSwap refuses to move readers to an index that holds fewer
// documents than the one they read now: every document of the old index
// was archived before it was indexed, so a shortfall means events the
// rebuild did not reach (unreadable objects, or a straggler older than the
// catch-up's start).
func checkBeforeSwap(ctx context.Context, src, dst *osindex.Index) error {
	if err := dst.Refresh(ctx); err != nil {
		return err
	}
	nOld, err := src.Count(ctx)
	if err != nil {
		return err
	}
	nNew, err := dst.Count(ctx)
	if err != nil {
		return err
	}
	if nNew < nOld {
		return fmt.Errorf("not swapping: %s holds %d documents, %s %d: %d of the old index's documents are not in the new one (run engram verify against each, or reindex with --since)",
			dst.Name(), nNew, src.Name(), nOld, nOld-nNew)
	}
	return nil
}

// safeName keeps an index name usable in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

// catchUpIndexed indexes the events memory.indexed announced since the
// last read (nothing when Kafka is not configured): those the listing
// from the start's day does not reach, stamped before it.
func catchUpIndexed(ctx context.Context, e *env, c *indexedCatchUp, what string,
	pass func(what, from string, restart bool, keys ...string) (ingest.ReindexSummary, error)) error {
	if c == nil {
		return nil
	}
	where := c.where()
	keys, notes, bad, err := c.keys(ctx)
	if err != nil {
		return fmt.Errorf("%s%s: %w", what, where, err)
	}
	fmt.Fprintf(e.stderr, "engram: %s%s: %d notifications, %d archive keys", what, safeLine(where), notes, len(keys))
	if bad > 0 {
		fmt.Fprintf(e.stderr, " (%d named no archive key)", bad)
	}
	fmt.Fprintln(e.stderr)
	if len(keys) == 0 {
		return nil
	}
	_, err = pass(what+where, "", true, keys...)
	return err
}
