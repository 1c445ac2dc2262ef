package cli

import (
	"context"
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
}

func ingestFlags(e *env) (*flag.FlagSet, *ingestOpts) {
	o := &ingestOpts{}
	fs := newFlagSet("ingest", e)
	o.common.bind(fs)
	fs.BoolVar(&o.dryRun, "dry-run", false, "validate and report; write nothing")
	fs.BoolVar(&o.trace, "trace", false, "print each event's stage trace (stage, duration, outcome) as it completes")
	fs.IntVar(&o.summaryLen, "summary-len", model.DefaultSummaryLen, "characters of input.text kept in the index summary")
	fs.IntVar(&o.workers, "workers", 0, "events processed at once (default 64 per CPU with the directory archive, 4 per CPU with S3)")
	fs.IntVar(&o.batch, "batch", 256, "index documents per write")
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
	cfg := ingest.Config{
		Decode: decodeOptions(), DryRun: o.dryRun,
		Workers: o.workers, BatchSize: o.batch, SummaryLen: o.summaryLen,
		Tenant: conf.get("tenant"),
	}
	data := dataDir(conf.get("data"), e.getenv)
	var rejects *publish.Rejects
	var archive ingest.ArchiveReader
	var st *backends
	if o.dryRun {
		if cfg.Embedder, err = newEmbedder(conf); err != nil {
			return err
		}
	} else {
		st, err = openBackends(ctx, conf, e)
		if err != nil {
			return err
		}
		defer st.Close()
		pc := st.pipeline()
		cfg.Archive, cfg.Index, cfg.Publisher, cfg.Embedder, cfg.Journal = pc.Archive, pc.Index, pc.Publisher, pc.Embedder, pc.Journal
		archive = st.archive
		rejects = publish.NewRejects(filepath.Join(data, "rejects", time.Now().UTC().Format("20060102T150405.000Z")+".jsonl"))
		defer rejects.Close()
	}
	rep := newReporter(e, o.trace, rejects)
	rep.redact = conf.redact
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
	for _, name := range files {
		r, size, err := openInput(e, name)
		if err != nil {
			return err
		}
		rep.addTotal(size)
		err = source.Read(ctx, &countingReader{r: r, n: &rep.bytesRead}, displayName(name), items)
		if c, ok := r.(io.Closer); ok && r != e.stdin {
			c.Close()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkInputs makes sure every named file can be read before anything is
// ingested: a mistyped name among several should not leave a run half done.
func checkInputs(files []string) error {
	var errs []string
	for _, name := range files {
		if name == "-" {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st, err := f.Stat()
		f.Close()
		if err == nil && st.IsDir() {
			err = fmt.Errorf("%s is a directory", name)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("nothing ingested: %s", strings.Join(errs, "; "))
	}
	return nil
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
		f.Close()
		return nil, 0, err
	}
	if st.IsDir() {
		f.Close()
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
	return nil
}
