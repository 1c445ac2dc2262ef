package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"engram/backend/kafka"
	"engram/ingest"
	"engram/internal/outage"
)

// Consumer is what the worker needs of its consumer group (kafka.Consumer).
type Consumer interface {
	Poll(ctx context.Context) ([]*kafka.Record, error)
	Done(recs ...*kafka.Record)
	Owns(rec *kafka.Record) bool
	Reject(ctx context.Context, rec *kafka.Record, reasons []string) error
	Commit(ctx context.Context) error
}

// Config wires a worker.
type Config struct {
	Pipeline *ingest.Pipeline
	Consumer Consumer
	// Drain bounds how long a stopping worker lets the events in flight
	// finish (default 10 s); those it abandons are read again by the next
	// owner of their partition.
	Drain time.Duration
	// Done, when set, is told about every finished message.
	Done func(*ingest.Trace, *kafka.Record)
	// Logf reports what the worker cannot do (a failed rejection, Kafka
	// away).
	Logf func(format string, args ...any)
	// Waiting names what the worker waits for while it cannot poll, in
	// its reports ("the brokers b:9092 (group g on topic t)").
	Waiting string
	// Outage, when set, is told why the worker cannot poll while that
	// lasts, and nil once it can again (for /health).
	Outage func(err error)
	// Recheck, when set, is asked once the brokers answer again after an
	// outage whether the worker can go on: a broker that came back
	// without the raw topic (its data lost) would otherwise be waited on
	// for ever, franz-go retrying a missing topic in silence.
	Recheck func(ctx context.Context) error
}

// pollBackoff bounds the wait between failed polls: franz-go retries the
// connections by itself meanwhile, so this only keeps a poll that fails
// at once from spinning, and a worker back within 2 s of its broker.
const pollBackoff = 2 * time.Second

// Run consumes until ctx ends, then lets what is in flight finish (within
// Drain), commits what is finished and returns nil; or it returns the
// consumer's error.
func Run(ctx context.Context, cfg Config) (ingest.Summary, error) {
	if cfg.Drain <= 0 {
		cfg.Drain = 10 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Waiting == "" {
		cfg.Waiting = "Kafka"
	}
	if cfg.Outage == nil {
		cfg.Outage = func(error) {}
	}
	w := &worker{cfg: cfg}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	items := make(chan ingest.Item, 256)
	sumc := make(chan ingest.Summary, 1)
	go func() { sumc <- cfg.Pipeline.Run(runCtx, items, w.finished) }()
	err := w.feed(ctx, items)
	close(items)
	stop := time.AfterFunc(cfg.Drain, cancel) // abandon what has not finished by then
	sum := <-sumc
	stop.Stop()
	w.wg.Wait()
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer ccancel()
	if cerr := cfg.Consumer.Commit(cctx); err == nil && cerr != nil {
		err = fmt.Errorf("committing offsets: %w", cerr)
	}
	return sum, err
}

type worker struct {
	cfg Config
	wg  sync.WaitGroup // rejections in progress
}

// feed polls the consumer and hands each record to the pipeline until ctx
// ends (nil) or polling fails in a way retrying cannot fix (kafka.Fatal).
// Through any other failure (the broker restarting, a lost group session)
// it keeps polling: franz-go reconnects and rejoins the group, which goes
// on from its last commit. The records in flight when the group was lost
// are read again, and their events, already archived, are duplicates.
func (w *worker) feed(ctx context.Context, items chan<- ingest.Item) error {
	out := &outage.Reporter{Logf: w.cfg.Logf, Waiting: w.cfg.Waiting, Resumed: "consuming again", Max: pollBackoff}
	for {
		recs, err := w.cfg.Consumer.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		// Records are proof enough, and must not be dropped for a check.
		if err == nil && len(recs) == 0 && out.Down() && w.cfg.Recheck != nil {
			err = w.cfg.Recheck(ctx)
		}
		if err != nil {
			if kafka.Fatal(err) {
				return err
			}
			w.cfg.Outage(err)
			if !out.Failed(ctx, err) {
				return nil
			}
			continue
		}
		if out.Down() {
			out.OK()
			w.cfg.Outage(nil)
		}
		for _, r := range recs {
			if !w.cfg.Consumer.Owns(r) {
				continue // its partition was revoked meanwhile: its new owner reads it
			}
			// An Avro value that could not be decoded (an unknown schema
			// id, the registry away, a body that does not fit its schema)
			// is rejected with that reason, like bad JSON.
			it := ingest.Item{Src: ingest.Source{File: where(r)}, Data: r.Value, Err: r.DecodeErr, Ref: r}
			// The ingestion continues the producer's trace.
			it.Traceparent, _ = r.Header(kafka.HeaderTraceparent)
			it.Tracestate, _ = r.Header(kafka.HeaderTracestate)
			select {
			case items <- it:
			case <-ctx.Done():
				return nil // the records not handed over are read again
			}
		}
	}
}

// where names a record for people: topic[partition]@offset.
func where(r *kafka.Record) string { return fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset) }

// finished decides what becomes of a message whose event the pipeline is
// done with. Ingested or duplicate: finished. Not a valid event, or failed
// for good (the pipeline retries transient failures first): rejected, with
// its reasons, then finished, so that it never blocks its partition and is
// never lost. Canceled (the worker is stopping): left for the next owner.
func (w *worker) finished(t *ingest.Trace) {
	rec, _ := t.Ref.(*kafka.Record)
	if rec == nil {
		return
	}
	if w.cfg.Done != nil {
		w.cfg.Done(t, rec)
	}
	switch t.Outcome {
	case ingest.OutcomeIngested, ingest.OutcomeDuplicate:
		w.cfg.Consumer.Done(rec)
	case ingest.OutcomeFailed:
		if announceOnly(t) {
			// Indexed; its notifications are held in the outbox and
			// announced when the worker next starts.
			w.cfg.Consumer.Done(rec)
			return
		}
		w.reject(rec, []string{"failed: " + errString(t.Err)})
	case ingest.OutcomeRejected:
		w.reject(rec, reasons(t))
	}
}

// announceOnly: only the publish stage failed.
func announceOnly(t *ingest.Trace) bool {
	return t.Stages[ingest.StagePublish].Status == ingest.StatusFailed &&
		t.Stages[ingest.StageIndex].Status == ingest.StatusDone
}

// reject sends rec to the rejected topic and then marks it finished; while
// that fails (the broker is away), it is retried, and the partition waits.
func (w *worker) reject(rec *kafka.Record, why []string) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		backoff := 100 * time.Millisecond
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := w.cfg.Consumer.Reject(ctx, rec, why)
			cancel()
			if err == nil {
				w.cfg.Consumer.Done(rec)
				return
			}
			if errors.Is(err, kafka.ErrClosed) || attempt == 10 {
				w.cfg.Logf("%s could not be rejected (%v); it will be read again", where(rec), err)
				return
			}
			time.Sleep(backoff)
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
}

func reasons(t *ingest.Trace) []string {
	var out []string
	for _, p := range t.Problems {
		out = append(out, p.String())
	}
	if len(out) == 0 {
		out = append(out, errString(t.Err))
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
