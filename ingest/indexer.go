package ingest

import (
	"context"
	"fmt"
	"time"

	"engram/model"
)

// indexer gathers archived events into batches, indexes each batch with one
// write, then publishes the events that were newly indexed. It is the only
// place documents are written, so per event archive → index → publish holds.
func (p *Pipeline) indexer(ctx context.Context, in <-chan *work, finished chan<- *Trace) {
	for {
		batch := p.gather(in)
		if len(batch) == 0 {
			return
		}
		p.writeBatch(ctx, batch)
		for _, w := range batch {
			finished <- w.t
		}
	}
}

// gather blocks for the first document, then takes more until the batch is
// full, the input closes or BatchWait has passed.
func (p *Pipeline) gather(in <-chan *work) []*work {
	w, ok := <-in
	if !ok {
		return nil
	}
	batch := []*work{w}
	timer := time.NewTimer(p.cfg.BatchWait)
	defer timer.Stop()
	for len(batch) < p.cfg.BatchSize {
		select {
		case w, ok := <-in:
			if !ok {
				return batch
			}
			batch = append(batch, w)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

func (p *Pipeline) writeBatch(ctx context.Context, batch []*work) {
	docs := make([]*model.IndexDoc, len(batch))
	start := time.Now()
	for i, w := range batch {
		docs[i] = w.doc
		r := &w.t.Stages[StageIndex]
		r.Stage, r.Status, r.Start = StageIndex, StatusRunning, start
		p.notify(w.t, *r)
	}
	results := p.index(ctx, docs)
	elapsed := time.Since(start)
	var pub []*work
	for i, w := range batch {
		r := &w.t.Stages[StageIndex]
		r.Duration, r.Status, r.Err = elapsed, StatusDone, results[i].Err
		switch {
		case results[i].Err != nil:
			r.Status = StatusFailed
		case results[i].Created:
			pub = append(pub, w)
		default:
			r.Note = "already indexed"
		}
		p.notify(w.t, *r)
	}
	p.publish(ctx, pub)
	for i, w := range batch {
		p.conclude(w, results[i])
	}
}

func (p *Pipeline) publish(ctx context.Context, pub []*work) {
	if len(pub) == 0 {
		return
	}
	start := time.Now()
	for _, w := range pub {
		r := &w.t.Stages[StagePublish]
		r.Stage, r.Status, r.Start = StagePublish, StatusRunning, start
		p.notify(w.t, *r)
	}
	var err error
	if p.cfg.Publisher != nil {
		enriched := make([]model.Enriched, len(pub))
		indexed := make([]model.Indexed, len(pub))
		for i, w := range pub {
			enriched[i] = model.NewEnriched(w.ev)
			indexed[i] = model.NewIndexed(w.ev, p.cfg.Index.Name())
		}
		err = p.cfg.Publisher.Publish(ctx, enriched, indexed)
	}
	elapsed := time.Since(start)
	for _, w := range pub {
		r := &w.t.Stages[StagePublish]
		r.Duration, r.Status, r.Err = elapsed, StatusDone, err
		if err != nil {
			r.Status = StatusFailed
		}
		p.notify(w.t, *r)
	}
}

// conclude decides the outcome of an event whose index write has returned.
func (p *Pipeline) conclude(w *work, res IndexResult) {
	t := w.t
	dupArchive := t.Stages[StageArchive].Note == "duplicate"
	switch {
	case res.Err != nil:
		p.skip(t, StagePublish)
		p.finish(t, OutcomeFailed, res.Err)
		p.journal(t, res.Err)
	case t.Stages[StagePublish].Err != nil:
		p.finish(t, OutcomeFailed, t.Stages[StagePublish].Err)
	case !res.Created:
		p.skip(t, StagePublish)
		o := OutcomeIngested
		if dupArchive {
			o = OutcomeDuplicate
		}
		p.finish(t, o, nil)
	default:
		p.finish(t, OutcomeIngested, nil)
	}
}

func (p *Pipeline) syncArchive(ctx context.Context) error {
	if s, ok := p.cfg.Archive.(Syncer); ok {
		return s.Sync(ctx)
	}
	return nil
}

// index writes docs, retrying the documents whose failure is transient (a
// whole batch when the cluster is down, single items it answered 429 for).
// Documents already created are never sent twice: create semantics make a
// resent one come back as "already there", and it counts as created.
func (p *Pipeline) index(ctx context.Context, docs []*model.IndexDoc) []IndexResult {
	results := make([]IndexResult, len(docs))
	if err := p.retry(ctx, StageArchive, func() error { return p.syncArchive(ctx) }); err != nil {
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	todo := make([]int, len(docs))
	for i := range todo {
		todo[i] = i
	}
	attempted := false
	err := p.retry(ctx, StageIndex, func() error {
		batch := make([]*model.IndexDoc, len(todo))
		for j, i := range todo {
			batch[j] = docs[i]
		}
		var again []int
		var firstErr error
		for j, r := range p.cfg.Index.Write(ctx, batch) {
			i := todo[j]
			if attempted && r.Err == nil && !r.Created {
				r.Created = true // created by an earlier attempt whose answer was lost
			}
			results[i] = r
			if r.Err != nil && p.transient(r.Err) {
				again = append(again, i)
				firstErr = firstNonNil(firstErr, r.Err)
			}
		}
		attempted, todo = true, again
		return firstErr
	})
	_ = err // per-document results already hold the final errors
	return results
}

func (p *Pipeline) transient(err error) bool {
	if p.cfg.Transient != nil {
		return p.cfg.Transient(err)
	}
	return IsTransient(err)
}

func firstNonNil(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// journal records an event that is archived but not indexed.
func (p *Pipeline) journal(t *Trace, cause error) {
	if p.cfg.Journal == nil {
		return
	}
	if err := p.cfg.Journal.Add(PendingEvent{t.EventID, t.Key, cause.Error()}); err != nil {
		t.Err = fmt.Errorf("%w; and recording it for the next run failed: %v", cause, err)
		return
	}
	t.Err = fmt.Errorf("%w; archived, recorded in %s to be indexed on the next run", cause, p.cfg.Journal.Path())
}
