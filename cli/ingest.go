package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"engram/ingest"
	"engram/ingest/publish"
	"engram/ingest/source"
	"engram/model"
)

type ingestOpts struct {
	common
	dryRun, trace bool
	summaryLen    int
	workers       int
	batch         int
	batchWait     time.Duration
}

func ingestFlags(e *env) (*flag.FlagSet, *ingestOpts) {
	o := &ingestOpts{}
	fs := newFlagSet("ingest", e)
	o.common.bind(fs)
	fs.BoolVar(&o.dryRun, "dry-run", false, "validate and report; write nothing")
	fs.BoolVar(&o.trace, "trace", false, "print each event's stage trace (stage, duration, outcome) as it completes")
	fs.IntVar(&o.summaryLen, "summary-len", model.DefaultSummaryLen, "characters of input.text kept in the index summary")
	fs.IntVar(&o.workers, "workers", 0, "events processed at once (default 64 per CPU with the directory archive, 4 per CPU with S3)")
	fs.IntVar(&o.batch, "batch", 1024, "index documents per write (at most)")
	fs.DurationVar(&o.batchWait, "batch-wait", 20*time.Millisecond, "longest an event waits for its index batch to fill while the index is free (5× as long when events come fast)")
	return fs, o
}

func decodeOptions() model.DecodeOptions {
	return model.DecodeOptions{
		Now: time.Now,
		NewID: func() string {
			id, err := uuid.NewV7()
			if err != nil {
				return uuid.NewString()
			}
			return id.String()
		},
	}
}

func runIngest(ctx context.Context, e *env, args []string) error {
	fs, o := ingestFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	if err := checkInputs(files); err != nil {
		return err
	}
	data := dataDir(conf.Data, e.getenv)
	ingestGC()
	var cfg ingest.Config
	var rejects *publish.Rejects
	var archive ingest.ArchiveReader
	var st *backends
	if o.dryRun {
		cfg.Decode = decodeOptions()
		if cfg.Embedder, err = newEmbedder(conf); err != nil {
			return err
		}
	} else {
		st, err = openBackends(ctx, conf, e)
		if err != nil {
			return err
		}
		defer st.Close()
		cfg, archive = st.pipeline(), st.archive
		rejects = publish.NewRejects(rejectsPath(data, time.Now()))
		defer rejects.Close()
	}
	cfg.DryRun, cfg.Workers, cfg.BatchSize, cfg.BatchWait, cfg.SummaryLen = o.dryRun, o.workers, o.batch, o.batchWait, o.summaryLen
	cfg.Tenant = conf.Tenant
	rep := newReporter(e, o.trace, rejects)
	rep.redact = conf.redact
	rep.inputs = newInputs(files)
	cfg.Observer, cfg.Transient = rep, transient
	if st != nil {
		cfg.Observer = st.observe(rep)
	}
	p, err := ingest.New(cfg)
	if err != nil {
		return err
	}
	if err := recoverPending(ctx, e, p, cfg.Journal, archive); err != nil {
		return err
	}
	items := make(chan ingest.Item, 1024)
	readErr := make(chan error, 1)
	go func() {
		defer close(items)
		readErr <- readFiles(ctx, e, files, items, rep)
	}()
	stopProgress := rep.startProgress(ctx)
	sum := p.Run(ctx, items, rep.done)
	stopProgress()
	err = <-readErr
	rep.summary(sum, data, o.dryRun)
	if ctx.Err() != nil {
		rep.unread()
	}
	if err != nil && ctx.Err() == nil {
		return err
	}
	if sum.Rejected+sum.Failed+sum.Canceled > 0 || ctx.Err() != nil {
		return exitError{1}
	}
	return nil
}

// readFiles feeds every file to items, counting bytes for the progress bar.
func readFiles(ctx context.Context, e *env, files []string, items chan<- ingest.Item, rep *reporter) error {
	for i, name := range files {
		r, size, err := openInput(e, name)
		if err != nil {
			return err
		}
		rep.addTotal(size)
		in := rep.inputs[i]
		// Closing the file on cancellation ends a read waiting on a pipe
		// or device that sends nothing.
		stop := func() bool { return true }
		if c, ok := r.(io.Closer); ok && r != e.stdin {
			stop = context.AfterFunc(ctx, func() { _ = c.Close() })
		}
		err = source.Read(ctx, &countingReader{r: r, n: &rep.bytesRead, own: &in.read}, displayName(name), items)
		in.done.Store(err == nil && ctx.Err() == nil)
		if c, ok := r.(io.Closer); ok && r != e.stdin && stop() {
			_ = c.Close()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkInputs makes sure every named file can be read before anything is
// ingested: a mistyped name among several should not leave a run half done.
// Only regular files are opened: opening and closing a named pipe would
// end its writer (SIGPIPE) and lose what it wrote, so pipes and devices
// are only looked at (stat) and read as streams by the run.
func checkInputs(files []string) error {
	var errs []string
	for _, name := range files {
		if name == "-" {
			continue
		}
		if err := checkInput(name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("nothing ingested: %s", strings.Join(errs, "; "))
	}
	return nil
}

func checkInput(name string) error {
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory", name)
	case !st.Mode().IsRegular():
		return nil
	}
	f, err := os.Open(name)
	if err == nil {
		_ = f.Close()
	}
	return err
}

// rejectsPath names the rejects file of a run starting at now: by its
// time, for people, and by its process and a random part, so that runs
// starting in the same millisecond (from one host or several sharing the
// directory) never append to one file.
func rejectsPath(data string, now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("%s-%d-%s.jsonl", now.UTC().Format("20060102T150405.000Z"), os.Getpid(), hex.EncodeToString(b[:]))
	return filepath.Join(data, "rejects", name)
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

func openInput(e *env, name string) (io.Reader, int64, error) {
	if name == "-" {
		return e.stdin, 0, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	if st.IsDir() {
		_ = f.Close()
		return nil, 0, fmt.Errorf("%s is a directory", name)
	}
	return f, st.Size(), nil
}

// recoverPending indexes the events an earlier run archived but could not
// index, before anything new.
func recoverPending(ctx context.Context, e *env, p *ingest.Pipeline, j *ingest.Journal, ar ingest.ArchiveReader) error {
	if j == nil {
		return nil
	}
	sum, err := p.Recover(ctx, j, ar)
	if err != nil {
		return fmt.Errorf("recovering %s: %w", j.Path(), err)
	}
	if sum.Total() > 0 {
		fmt.Fprintf(e.stderr, "recovered %d pending events from %s (%d still pending)\n", sum.Ingested+sum.Duplicates, safeLine(j.Path()), sum.Failed)
	}
	n, err := p.Announce(ctx)
	reportAnnounced(e, n)
	return err
}

// announceHeld publishes what an earlier run left held in st's outbox.
func announceHeld(ctx context.Context, e *env, st *backends) error {
	n, err := st.outbox.Announce(ctx, st.index, func(as []ingest.Announcement) error { return st.publisher.Publish(ctx, as) })
	reportAnnounced(e, n)
	return err
}

func reportAnnounced(e *env, n int) {
	if n > 0 {
		fmt.Fprintf(e.stderr, "announced %d events indexed by an earlier run whose notifications were held\n", n)
	}
}
