package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/ingest/publish"
	"engram/model"
	"engram/query/verify"
)

type reindexOpts struct {
	common
	since, until string
	restart      bool
	announce     bool
	into         string // reindex_into.go
	swapAlias    string
}

func reindexFlags(e *env) (*flag.FlagSet, *reindexOpts) {
	o := &reindexOpts{}
	fs := newFlagSet("reindex", e)
	o.common.bind(fs)
	fs.StringVar(&o.since, "since", "", "first day to rebuild, YYYY-MM-DD (UTC)")
	fs.StringVar(&o.until, "until", "", "last day to rebuild, YYYY-MM-DD (UTC)")
	fs.BoolVar(&o.restart, "restart", false, "ignore the checkpoint of an interrupted run and rebuild the whole range (without it, a checkpoint is resumed only into the index it was written for, while that index still holds the events it vouches for)")
	fs.BoolVar(&o.announce, "announce", false, "publish the notifications (experience.enriched, memory.indexed) of every document of the range, created or already indexed, as ingest does (first those an earlier run left held; consumers may see an event twice). Default: on when the notifications are the data directory's topic files and they hold nothing")
	fs.StringVar(&o.into, "into", "", "OpenSearch: build this new index (engram's mapping, the configured index's k-NN settings) from the archive instead, then catch up on the events written meanwhile")
	fs.StringVar(&o.swapAlias, "swap-alias", "", "with --into: then move this alias onto the new index in one request (the old index is kept)")
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
	since, until, err := dayRange(e, o.since, o.until)
	if err != nil {
		return err
	}
	// A rebuild writes every archived event: a long ingest.
	ingestGC()
	if err := requireArchive(conf, e); err != nil { // the index may be missing: it is rebuilt
		return err
	}
	if o.swapAlias != "" && o.into == "" {
		fmt.Fprintln(e.stderr, "engram: --swap-alias moves an alias onto the index --into builds: give --into too")
		return errUsage
	}
	if o.into != "" && o.announce {
		fmt.Fprintln(e.stderr, "engram: --announce and --into: an upgrade announces nothing (the events were announced when first indexed)")
		return errUsage
	}
	st, err := openBackends(ctx, conf, e)
	if err != nil {
		return err
	}
	defer st.Close()
	from, to := verify.KeyRange(since, until)
	if o.into != "" {
		return runReindexInto(ctx, e, conf, o, st, from, to)
	}
	rep := newReporter(e, false, nil)
	cfg := reindexConfig(st, from, to, o.restart)
	if !flagSet(fs, "announce") && st.topicsEmpty() {
		o.announce = true
		fmt.Fprintln(e.stderr, "reindex: the topic files are empty, so nothing can have seen these events: announcing every document (--announce=false not to)")
	}
	if o.announce {
		if err := announceHeld(ctx, e, st); err != nil {
			return err
		}
		cfg.Publisher, cfg.Outbox = st.publisher, st.outbox
		cfg.AnnounceExisting = true
	}
	cfg.Notice = func(msg string) { fmt.Fprintln(e.stderr, "engram: "+safeLine(msg)) }
	cfg.Progress = func(s ingest.ReindexSummary) {
		rep.line(fmt.Sprintf("reindex: %d objects, %d created, %d already indexed", s.Objects, s.Created, s.Existing))
	}
	sum, err := st.reindex(ctx, cfg, nil)
	rep.line("")
	for _, msg := range sum.Errors {
		fmt.Fprintln(e.stderr, safeLine(msg))
	}
	fmt.Fprintf(e.stderr, "reindex into %s: %d objects, %d created, %d already indexed, %d unreadable, %d failed in %s (%.0f objects/s)\n",
		safeLine(st.index.Describe()), sum.Objects, sum.Created, sum.Existing, sum.Bad, sum.Failed,
		sum.Elapsed.Round(time.Millisecond), float64(sum.Objects)/max(sum.Elapsed.Seconds(), 1e-9))
	if o.announce {
		fmt.Fprintf(e.stderr, "reindex: %d documents announced, %d held for the next run\n", sum.Announced, sum.Unannounced)
	} else if n := sum.Created + sum.Existing; n > 0 {
		fmt.Fprintf(e.stderr, "reindex: the %d documents were not announced on %s, %s: 'engram reindex --announce' announces them (consumers may see an event twice); 'engram verify --no-topics' checks the rest when nothing consumes those topics\n",
			n, model.TopicEnriched, model.TopicIndexed)
	}
	// Any error or failure after Ctrl-C is the interruption's doing.
	if ctx.Err() != nil && (err != nil || sum.Bad+sum.Failed > 0) {
		return reindexInterrupted(e, sum)
	}
	if err != nil {
		return err
	}
	if sum.Bad+sum.Failed+sum.Unannounced > 0 {
		return exitError{1}
	}
	return nil
}

// reindexConfig is what runReindex asks of ingest.Reindex, bar reporting.
// The checkpoint names the index it belongs to and can ask it for the
// events it vouches for, so it is never resumed into another index or
// into this one deleted and recreated.
func reindexConfig(st *backends, from, to string, restart bool) ingest.ReindexConfig {
	return ingest.ReindexConfig{
		Archive: st.archive, Index: st.index, From: from, To: to,
		Checkpoint: filepath.Join(st.data, "reindex."+checkpointName(from, to)+".checkpoint"),
		IndexID:    st.index.Describe(),
		Holds:      indexHolds(st.index),
		Restart:    restart,
	}
}

// indexHolds reports whether ix has a document for an event id.
func indexHolds(ix indexStore) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, id string) (bool, error) {
		_, err := ix.Get(ctx, id)
		if errors.Is(err, backend.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// reindexInterrupted says how far an interrupted run got and what a re-run
// will do. The exit status is 1, as for an interrupted engram ingest: the
// signal was handled and the run ended cleanly, only short of its goal.
func reindexInterrupted(e *env, sum ingest.ReindexSummary) error {
	next := "run it again to resume after " + safeLine(sum.CheckpointAfter)
	if sum.CheckpointAfter == "" {
		next = "nothing was checkpointed; run it again to start over"
	}
	fmt.Fprintf(e.stderr, "engram: reindex interrupted after %d objects; %s\n", sum.Objects, next)
	return exitError{1}
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

// flagSet: the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// topicsEmpty: the notifications go to the data directory's topic files
// and none of them holds a message (lost with the index, or never
// written), so announcing cannot repeat anything a consumer saw.
func (b *backends) topicsEmpty() bool {
	if b.kafkaCfg != nil || b.publisher == nil {
		return false
	}
	for _, name := range []string{model.TopicEnriched, model.TopicIndexed} {
		if fi, err := os.Stat(publish.TopicPath(b.topicsDir, name)); err == nil && fi.Size() > 0 {
			return false
		}
	}
	return true
}
