package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"

	"engram/backend/kafka"
	"engram/ingest"
	"engram/model"
)

type produceOpts struct {
	common
	batch                   int
	format, subject, schema string
}

func produceFlags(e *env) (*flag.FlagSet, *produceOpts) {
	o := &produceOpts{}
	fs := newFlagSet("produce", e)
	o.common.bind(fs)
	fs.IntVar(&o.batch, "batch", 500, "events produced per request")
	fs.StringVar(&o.format, "format", "json", "how the events are written: json (as given) or avro (the schema registry's wire format; needs kafka.schema_registry_url)")
	fs.StringVar(&o.subject, "subject", "", "with --format avro: the registry subject the schema is registered (or found) under (default: TOPIC-value)")
	fs.StringVar(&o.schema, "schema", "", "with --format avro: an Avro schema file (default: engram's experience event schema, docs/kafka.md)")
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
	pr := &producer{c: c, batch: max(o.batch, 1), parts: map[int32]int{}, e: e}
	if pr.avro, err = avroEncoder(ctx, o, kcfg, conf); err != nil {
		return err
	}
	sum, err := pr.run(ctx, e, files, conf)
	as := ""
	if pr.avro != nil {
		as = fmt.Sprintf(" as Avro (subject %s, schema id %d)", safeLine(pr.avro.Subject), pr.avro.ID)
	}
	fmt.Fprintf(e.stderr, "produced %d to %s%s (%d partitions), rejected %d\n", pr.produced, safeLine(kcfg.Topics.Raw), as, len(pr.parts), sum.Rejected)
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
	avro   *kafka.AvroEncoder // nil: the events as given (JSON)
	e      *env

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
	if pr.avro != nil {
		v, err := pr.avro.Encode(data)
		if err != nil {
			pr.mu.Lock()
			pr.failed++
			fmt.Fprintf(pr.e.stderr, "engram produce: %s: not produced: %s\n", safeLine(t.EventID), safeLine(err.Error()))
			pr.mu.Unlock()
			return
		}
		rec.Value = v
	}
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

// avroEncoder registers (or finds) the schema under the subject when
// --format avro asks for the registry's wire format; nil for json.
func avroEncoder(ctx context.Context, o *produceOpts, kcfg kafka.Config, conf *resolved) (*kafka.AvroEncoder, error) {
	switch o.format {
	case "json":
		if o.subject != "" || o.schema != "" {
			return nil, errors.New("--subject and --schema go with --format avro")
		}
		return nil, nil
	case "avro":
	default:
		return nil, fmt.Errorf("--format %q: want json or avro", o.format)
	}
	schema := kafka.ExperienceEventSchema
	if o.schema != "" {
		b, err := os.ReadFile(o.schema)
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		schema = string(b)
	}
	subject := o.subject
	if subject == "" {
		subject = kcfg.Topics.Raw + "-value" // the registry's topic-name strategy
	}
	codec, err := kafka.NewAvroCodec(kcfg.Registry)
	if err != nil {
		return nil, errors.New(conf.redact(err.Error()))
	}
	enc, err := codec.Encoder(ctx, subject, schema)
	if err != nil {
		return nil, errors.New(conf.redact(err.Error()))
	}
	return enc, nil
}
