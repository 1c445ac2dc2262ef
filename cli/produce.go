package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"

	"engram/backend/kafka"
	"engram/ingest"
	"engram/model"
)

type produceOpts struct {
	common
	batch int
}

func produceFlags(e *env) (*flag.FlagSet, *produceOpts) {
	o := &produceOpts{}
	fs := newFlagSet("produce", e)
	o.common.bind(fs)
	fs.IntVar(&o.batch, "batch", 500, "events produced per request")
	return fs, o
}

// runProduce validates events as ingest does and produces the valid ones to
// the raw topic, for the deployment's workers to ingest.
func runProduce(ctx context.Context, e *env, args []string) error {
	fs, o := produceFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	conf, kcfg, err := resolveKafka(&o.common, fs, e, "produce")
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
	c, err := kafka.New(kcfg)
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	defer c.Close()
	if err := checkTopics(ctx, c, conf, kcfg.Topics.Raw); err != nil {
		return err
	}
	pr := &producer{c: c, batch: max(o.batch, 1), parts: map[int32]int{}}
	sum, err := pr.run(ctx, e, files, conf)
	fmt.Fprintf(e.stderr, "produced %d to %s (%d partitions), rejected %d\n", pr.produced, safeLine(kcfg.Topics.Raw), len(pr.parts), sum.Rejected)
	if err != nil {
		return err
	}
	if sum.Rejected+pr.failed > 0 || ctx.Err() != nil {
		return exitError{1}
	}
	return nil
}

// producer sends the events a dry-run pipeline found valid, in batches.
type producer struct {
	c      *kafka.Client
	batch  int
	mu     sync.Mutex
	recs   []kafka.RawRecord
	parts  map[int32]int
	failed int
	err    error

	produced int
}

func (pr *producer) run(ctx context.Context, e *env, files []string, conf *resolved) (ingest.Summary, error) {
	emb, err := newEmbedder(conf)
	if err != nil {
		return ingest.Summary{}, err
	}
	p, err := ingest.New(ingest.Config{Embedder: emb, Decode: decodeOptions(), DryRun: true, Tenant: conf.Tenant, Workers: 1})
	if err != nil {
		return ingest.Summary{}, err
	}
	rep := newReporter(e, false, nil)
	rep.inputs = newInputs(files)
	read := make(chan ingest.Item, 1024)
	items := make(chan ingest.Item, 1024)
	readErr := make(chan error, 1)
	go func() {
		defer close(read)
		readErr <- readFiles(ctx, e, files, read, rep)
	}()
	go func() { // the raw bytes travel with each item, to be produced as given
		defer close(items)
		for it := range read {
			it.Ref = it.Data
			items <- it
		}
	}()
	sum := p.Run(ctx, items, func(t *ingest.Trace) {
		rep.done(t)
		if t.Outcome == ingest.OutcomeValid {
			pr.add(ctx, t)
		}
	})
	pr.flush(ctx)
	if err := <-readErr; err != nil && ctx.Err() == nil {
		return sum, err
	}
	return sum, pr.err
}

// add queues the event of t (Workers: 1, so in input order), and sends a
// full batch.
func (pr *producer) add(ctx context.Context, t *ingest.Trace) {
	data, _ := t.Ref.([]byte)
	rec := kafka.RawRecord{Key: []byte(t.EventID), Value: data}
	if ev, err := model.Decode(data, decodeOptions()); err == nil {
		tr := kafka.TraceOf(ev)
		if tp := tr.Traceparent(); tp != "" {
			rec.Headers = append(rec.Headers, kafka.Header{Key: kafka.HeaderTraceparent, Value: []byte(tp)})
		}
	}
	pr.mu.Lock()
	pr.recs = append(pr.recs, rec)
	full := len(pr.recs) >= pr.batch
	pr.mu.Unlock()
	if full {
		pr.flush(ctx)
	}
}

func (pr *producer) flush(ctx context.Context) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if len(pr.recs) == 0 || pr.err != nil {
		return
	}
	out, err := pr.c.ProduceRaw(ctx, pr.recs)
	if err != nil {
		pr.failed += len(pr.recs)
		pr.err = err
	} else {
		pr.produced += len(out)
		for _, p := range out {
			pr.parts[p.Partition]++
		}
	}
	pr.recs = pr.recs[:0]
}
