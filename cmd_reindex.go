package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"engram/ingest"
	"engram/query/verify"
)

type reindexOpts struct {
	common
	since, until string
}

func reindexFlags(e *env) (*flag.FlagSet, *reindexOpts) {
	o := &reindexOpts{}
	fs := newFlagSet("reindex", e)
	o.common.bind(fs)
	fs.StringVar(&o.since, "since", "", "first day to rebuild, YYYY-MM-DD (UTC)")
	fs.StringVar(&o.until, "until", "", "last day to rebuild, YYYY-MM-DD (UTC)")
	return fs, o
}

// runReindex rebuilds the index from the archive.
func runReindex(ctx context.Context, e *env, args []string) error {
	fs, o := reindexFlags(e)
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	since, err := parseDay("since", o.since)
	if err != nil {
		return err
	}
	until, err := parseDay("until", o.until)
	if err != nil {
		return err
	}
	st, err := openBackends(ctx, conf, e)
	if err != nil {
		return err
	}
	defer st.Close()
	from, to := verify.KeyRange(since, until)
	rep := newReporter(e, false, nil)
	sum, err := ingest.Reindex(ctx, ingest.ReindexConfig{
		Archive: st.archive, Index: st.index, From: from, To: to,
		Checkpoint: filepath.Join(st.data, "reindex."+checkpointName(from, to)+".checkpoint"),
		Progress: func(s ingest.ReindexSummary) {
			rep.line(fmt.Sprintf("reindex: %d objects, %d created, %d already indexed", s.Objects, s.Created, s.Existing))
		},
	})
	rep.line("")
	if sum.ResumedAfter != "" {
		fmt.Fprintf(e.stderr, "resumed after %s\n", safeLine(sum.ResumedAfter))
	}
	for _, msg := range sum.Errors {
		fmt.Fprintln(e.stderr, safeLine(msg))
	}
	fmt.Fprintf(e.stderr, "reindex into %s: %d objects, %d created, %d already indexed, %d unreadable, %d failed in %s (%.0f objects/s)\n",
		safeLine(st.index.Describe()), sum.Objects, sum.Created, sum.Existing, sum.Bad, sum.Failed,
		sum.Elapsed.Round(time.Millisecond), float64(sum.Objects)/max(sum.Elapsed.Seconds(), 1e-9))
	if err != nil {
		return err
	}
	if sum.Bad+sum.Failed > 0 {
		return exitError{1}
	}
	return nil
}

// checkpointName keeps the checkpoints of different ranges apart.
func checkpointName(from, to string) string {
	day := func(k string) string {
		if len(k) >= len("events/2026/05/08") {
			return k[7:11] + k[12:14] + k[15:17]
		}
		return "all"
	}
	return day(from) + "-" + day(to)
}
