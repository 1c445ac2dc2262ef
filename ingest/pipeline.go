package ingest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"engram/model"
)

// Item is one input to the pipeline: raw JSON, or an event built in code
// (the record form), or the error that reading it met.
type Item struct {
	Src   Source
	Data  []byte
	Event *model.Event
	Err   error
	// Ref is the caller's own: it comes back in the item's Trace (the
	// worker keeps the Kafka record there, to commit or reject it).
	Ref any

	// Traceparent and Tracestate are the W3C trace context the input came
	// with (a Kafka message's headers): the ingestion's spans continue that
	// trace. Empty: the event's own context.traceId/spanId, else a new
	// trace. See SpanContext.
	Traceparent, Tracestate string
}

// Config wires a pipeline.
type Config struct {
	Archive   Archive
	Index     Index
	Publisher Publisher // optional
	Embedder  Embedder
	Observer  Observer // optional
	Decode    model.DecodeOptions

	Workers   int           // concurrent events (default: the archive's Concurrency, else 4×CPUs)
	BatchSize int           // index documents per write, at most (default 1024)
	BatchWait time.Duration // longest a document waits for its batch to fill (default 20ms)
	// FloodWait is how long a batch that filled fast (floodAt documents
	// within BatchWait) goes on filling (from its first document; default
	// 5×BatchWait): a batch writes the index pages it shares with its
	// neighbours once for all its documents, so under a flood bigger ones
	// cost less per document, and a trickle still waits BatchWait only.
	FloodWait  time.Duration
	SummaryLen int  // characters of input.text in the index summary
	DryRun     bool // validate, embed, score and key; write nothing

	// Retry bounds the retries of transient archive and index failures;
	// Transient classifies errors (IsTransient when nil).
	Retry     RetryPolicy
	Transient func(error) bool

	// Journal, when set, records events archived but not indexed.
	Journal *Journal
	// Outbox, when set (with a Publisher), holds each batch's notifications
	// from before its index commit until they are published, so that none
	// is lost to a crash in between (see Announce).
	Outbox *Outbox

	// Tenant, when set, scopes the run: an event of another tenant (or of
	// none) is rejected.
	Tenant string
}

// Pipeline runs inputs through the stages of docs/data-contract.md,
// Enrichment and the archive.
type Pipeline struct {
	cfg Config
	seq atomic.Uint64
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Embedder == nil {
		return nil, errors.New("ingest: no embedder")
	}
	if !cfg.DryRun && (cfg.Archive == nil || cfg.Index == nil) {
		return nil, errors.New("ingest: an archive and an index are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4 * runtime.NumCPU()
		if c, ok := cfg.Archive.(Concurrent); ok {
			cfg.Workers = c.Concurrency()
		}
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1024
	}
	if cfg.BatchWait <= 0 {
		cfg.BatchWait = 20 * time.Millisecond
	}
	if cfg.FloodWait <= 0 {
		cfg.FloodWait = 5 * cfg.BatchWait
	}
	return &Pipeline{cfg: cfg}, nil
}

// Workers is how many events the pipeline runs at once.
func (p *Pipeline) Workers() int { return p.cfg.Workers }

// Summary counts how a run's inputs ended.
type Summary struct {
	Ingested, Duplicates, Rejected, Failed, Canceled, Valid int
	Elapsed                                                 time.Duration
}

// Total is the number of inputs seen.
func (s Summary) Total() int {
	return s.Ingested + s.Duplicates + s.Rejected + s.Failed + s.Canceled + s.Valid
}

// Rate is inputs per second.
func (s Summary) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Total()) / s.Elapsed.Seconds()
}

func (s *Summary) count(o Outcome) {
	switch o {
	case OutcomeIngested:
		s.Ingested++
	case OutcomeDuplicate:
		s.Duplicates++
	case OutcomeRejected:
		s.Rejected++
	case OutcomeFailed:
		s.Failed++
	case OutcomeCanceled:
		s.Canceled++
	case OutcomeValid:
		s.Valid++
	}
}

// Run takes every item from items until it is closed, and returns when each
// has finished. When ctx is cancelled, items already inside a stage finish
// (their writes are never left half done); items not yet started end as
// canceled. Each finished trace goes to the observer and to done (optional).
func (p *Pipeline) Run(ctx context.Context, items <-chan Item, done func(*Trace)) Summary {
	start := time.Now()
	toIndex := make(chan *work, p.cfg.BatchSize)
	finished := make(chan *Trace, p.cfg.BatchSize)
	var workers sync.WaitGroup
	for range p.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			p.worker(ctx, items, toIndex, finished)
		}()
	}
	var indexer sync.WaitGroup
	indexer.Add(1)
	go func() {
		defer indexer.Done()
		p.indexer(context.WithoutCancel(ctx), toIndex, finished)
	}()
	go func() {
		workers.Wait()
		close(toIndex)
		indexer.Wait()
		close(finished)
	}()
	var sum Summary
	for t := range finished {
		sum.count(t.Outcome)
		if p.cfg.Observer != nil {
			p.cfg.Observer.Done(t)
		}
		if done != nil {
			done(t)
		}
	}
	sum.Elapsed = time.Since(start)
	return sum
}

// work is an event on its way through the stages.
type work struct {
	t   *Trace
	ev  *model.Event
	doc *model.IndexDoc
	ann *Announcement // its notifications, once held (encoded once for hold and publish)
}

func (p *Pipeline) worker(ctx context.Context, items <-chan Item, toIndex chan<- *work, finished chan<- *Trace) {
	for it := range items {
		w := &work{t: &Trace{Seq: p.seq.Add(1), Src: it.Src, Ref: it.Ref, Start: time.Now()}}
		if ctx.Err() != nil {
			p.finish(w.t, OutcomeCanceled, ctx.Err())
			finished <- w.t
			continue
		}
		// Once started, an event runs to its end whatever happens to ctx.
		if p.prepare(context.WithoutCancel(ctx), w, it) {
			toIndex <- w
		} else {
			finished <- w.t
		}
	}
}

// prepare runs the stages up to and including archive. It returns false when
// the event ended there.
func (p *Pipeline) prepare(ctx context.Context, w *work, it Item) bool {
	t := w.t
	ok := p.stage(t, StageReceive, func(*StageRecord) error {
		if it.Err != nil {
			return it.Err
		}
		if it.Event != nil {
			w.ev = it.Event
			return nil
		}
		ev, err := model.Decode(it.Data, p.cfg.Decode)
		w.ev = ev
		return err
	})
	if w.ev != nil {
		t.EventID, t.Type, t.SessionID = w.ev.EventID, w.ev.Type, w.ev.Context.SessionID
	}
	t.Span = spanContext(it, w.ev)
	ok = ok && p.stage(t, StageValidate, func(*StageRecord) error { return p.validate(w.ev) })
	if !ok {
		t.Input = it.Data
		p.reject(t)
		return false
	}
	ok = p.stage(t, StageEmbed, func(*StageRecord) error {
		err := p.embed(ctx, w.ev)
		t.Dim = len(w.ev.Input.Embedding)
		return err
	}) &&
		p.stage(t, StageScore, func(*StageRecord) error {
			w.ev.ImportanceScore = model.Importance(w.ev)
			t.Score = w.ev.ImportanceScore
			return nil
		}) &&
		p.stage(t, StageKey, func(*StageRecord) error {
			key, err := model.ArchiveKey(w.ev.EventID, w.ev.Timestamp)
			w.ev.ObjectStorageKey, t.Key = key, key
			return err
		})
	if !ok {
		p.finish(t, OutcomeFailed, t.firstErr())
		return false
	}
	if p.cfg.DryRun {
		p.skip(t, StageArchive, StageIndex, StagePublish)
		p.finish(t, OutcomeValid, nil)
		return false
	}
	ok = p.stage(t, StageArchive, func(r *StageRecord) error { return p.archive(ctx, w, r) })
	if !ok {
		p.skip(t, StageIndex, StagePublish)
		if err := t.firstErr(); IsConflict(err) {
			t.Input = it.Data
			t.Problems = model.Problems{{Path: "eventId", Reason: err.Error()}}
			p.finish(t, OutcomeRejected, err)
		} else {
			p.finish(t, OutcomeFailed, err)
		}
		return false
	}
	w.doc = model.NewIndexDoc(w.ev, p.cfg.SummaryLen)
	return true
}

func (p *Pipeline) embed(ctx context.Context, ev *model.Event) error {
	if ev.KeepEmbedding && len(ev.Input.Embedding) == p.cfg.Embedder.Dimension() {
		return nil // recovering an archived event: its vector is the truth
	}
	vs, err := p.cfg.Embedder.Embed(ctx, []string{ev.Input.Text})
	if err != nil {
		return err
	}
	if len(vs) != 1 {
		return fmt.Errorf("embedder returned %d vectors for 1 text", len(vs))
	}
	ev.Input.Embedding = vs[0]
	return nil
}

func (p *Pipeline) archive(ctx context.Context, w *work, r *StageRecord) error {
	body, err := w.ev.ArchiveJSON()
	if err != nil {
		return err
	}
	var stored bool
	err = p.retry(ctx, StageArchive, func() error {
		var err error
		stored, err = p.cfg.Archive.Put(ctx, w.ev.ObjectStorageKey, body)
		return err
	}, r)
	if err == nil && !stored {
		r.Note = "duplicate"
	}
	return err
}

func (p *Pipeline) reject(t *Trace) {
	err := t.firstErr()
	var ps model.Problems
	if errors.As(err, &ps) {
		t.Problems = ps
	} else if err != nil {
		t.Problems = model.Problems{{Reason: err.Error()}}
	}
	p.skip(t, StageEmbed, StageScore, StageKey, StageArchive, StageIndex, StagePublish)
	p.finish(t, OutcomeRejected, err)
}

// stage runs one stage of t, timing it and telling the observer.
func (p *Pipeline) stage(t *Trace, s Stage, fn func(*StageRecord) error) bool {
	r := &t.Stages[s]
	r.Stage, r.Status, r.Start = s, StatusRunning, time.Now()
	p.notify(t, *r)
	err := fn(r)
	r.Duration = time.Since(r.Start)
	r.Status, r.Err = StatusDone, err
	if err != nil {
		r.Status = StatusFailed
	}
	p.notify(t, *r)
	return err == nil
}

func (p *Pipeline) skip(t *Trace, stages ...Stage) {
	for _, s := range stages {
		t.Stages[s] = StageRecord{Stage: s, Status: StatusSkipped}
	}
}

func (p *Pipeline) notify(t *Trace, r StageRecord) {
	if p.cfg.Observer != nil {
		p.cfg.Observer.Stage(StageEvent{Seq: t.Seq, Src: t.Src, EventID: t.EventID, StageRecord: r})
	}
}

func (p *Pipeline) finish(t *Trace, o Outcome, err error) {
	t.Outcome, t.Err, t.Total = o, err, time.Since(t.Start)
}

func (t *Trace) firstErr() error {
	for _, r := range t.Stages {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

func (p *Pipeline) validate(ev *model.Event) error {
	ps := ev.Validate()
	if p.cfg.Tenant != "" && ev.Context.TenantID != p.cfg.Tenant {
		ps = append(ps, model.Problem{Path: "context.tenantId",
			Reason: fmt.Sprintf("%s is not %s, the tenant this run is scoped to", model.Quote(ev.Context.TenantID), model.Quote(p.cfg.Tenant))})
	}
	return ps.Err()
}
