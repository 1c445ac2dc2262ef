package ingest

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"engram/model"
)

// indexer gathers archived events into batches, indexes each with one write
// and publishes what was newly indexed: the only place documents are
// written, so archive → index → publish holds per event. Its five steps,
// joined by channels, each work on a different batch at once.
func (p *Pipeline) indexer(ctx context.Context, in <-chan *work, finished chan<- *Trace) {
	batches := make(chan []*work, 1)
	synced := make(chan syncedBatch, 1)
	written := make(chan indexedBatch, 1)
	indexed := make(chan indexedBatch, 1)
	go func() {
		defer close(batches)
		p.gather(in, batches)
	}()
	go func() {
		defer close(synced)
		for b := range batches {
			encoded := p.encode(b)
			err := p.readyBatch(ctx, b)
			synced <- syncedBatch{batch: b, syncErr: err, encoded: encoded()}
		}
	}()
	go func() {
		defer close(written)
		for b := range synced {
			written <- indexedBatch{batch: b.batch, results: p.writeBatch(ctx, b)}
		}
	}()
	go func() {
		defer close(indexed)
		p.syncIndexed(ctx, written, indexed)
	}()
	for group := range p.announce(ctx, indexed) {
		for _, b := range group {
			for _, w := range b.batch {
				finished <- w.t
			}
		}
	}
}

// announce is the publish step: it publishes each group of indexed batches
// (up to the publisher's InFlight at once) and gives back every group,
// concluded, in the order the groups came.
func (p *Pipeline) announce(ctx context.Context, indexed <-chan indexedBatch) <-chan []indexedBatch {
	inFlight := 1
	if pl, ok := p.cfg.Publisher.(Pipeliner); ok {
		inFlight = max(1, pl.InFlight())
	}
	// A group is gathered once a call is free, so that it takes every batch
	// that became ready meanwhile; its result comes through a channel of
	// its own, queued in order.
	slots := make(chan struct{}, inFlight)
	queue := make(chan chan []indexedBatch, inFlight)
	go func() {
		defer close(queue)
		for b := range indexed {
			slots <- struct{}{}
			group := withReady(b, indexed)
			done := make(chan []indexedBatch, 1)
			queue <- done
			go func() {
				p.publishGroup(ctx, group)
				<-slots
				done <- group
			}()
		}
	}()
	out := make(chan []indexedBatch)
	go func() {
		defer close(out)
		for done := range queue {
			out <- <-done
		}
	}()
	return out
}

// withReady is first and whatever else in is ready to give at once: a step
// that fell behind then catches up with one fsync for several batches.
func withReady[T any](first T, in <-chan T) []T {
	group := []T{first}
	for {
		select {
		case next, ok := <-in:
			if !ok {
				return group
			}
			group = append(group, next)
		default:
			return group
		}
	}
}

// indexedBatch is a batch and the index's result for each of its events.
type indexedBatch struct {
	batch   []*work
	results []IndexResult
	// keepHeld keeps every held notification of the batch in the outbox:
	// its index writes may or may not have become durable.
	keepHeld bool
}

// syncedBatch is a batch whose archive entries were made durable, unless
// syncErr says otherwise, and its documents as the index encoded them (nil
// when the index is no Encoder).
type syncedBatch struct {
	batch   []*work
	syncErr error
	encoded Encoded
}

// floodAt is how many events a batch must hold after BatchWait for the
// input to count as a flood (see Config.FloodWait).
const floodAt = 16

// gather sends batches of archived events to out. A batch leaves when it is
// full, or once its first event has waited BatchWait (FloodWait, when it
// held floodAt events by then) and the next step is free to take it; while
// that step is busy, the batch goes on filling, so under load batches grow
// to BatchSize instead of being cut by the clock.
func (p *Pipeline) gather(in <-chan *work, out chan<- []*work) {
	var batch []*work
	var timer *time.Timer
	var expired <-chan time.Time
	ready, flooded := false, false
	for {
		if in == nil && len(batch) == 0 {
			return
		}
		var send chan<- []*work
		if len(batch) > 0 && (ready || len(batch) >= p.cfg.BatchSize) {
			send = out
		}
		var recv <-chan *work
		if len(batch) < p.cfg.BatchSize {
			recv = in
		}
		select {
		case w, ok := <-recv:
			if !ok {
				in, ready = nil, true
				continue
			}
			batch = append(batch, w)
			if len(batch) == 1 {
				timer = time.NewTimer(p.cfg.BatchWait)
				expired = timer.C
			}
		case <-expired:
			if !flooded && len(batch) >= floodAt && p.cfg.FloodWait > p.cfg.BatchWait {
				flooded = true
				timer.Reset(p.cfg.FloodWait - p.cfg.BatchWait)
				continue
			}
			ready, expired = true, nil
		case send <- batch:
			if timer != nil {
				timer.Stop()
			}
			batch, expired = nil, nil
			ready, flooded = in == nil, false
		}
	}
}

// readyBatch makes the batch's archive entries durable and, meanwhile,
// holds its notifications in the outbox: both must be on disk before its
// index write commits. A full disk under the outbox is waited out like an
// outage, not failed: failing sent a worker's events to the rejected topic,
// archived but never indexed.
func (p *Pipeline) readyBatch(ctx context.Context, batch []*work) error {
	held := make(chan error, 1)
	go func() {
		oo, _ := p.cfg.Observer.(OutageObserver)
		held <- Retrier{p.cfg.Retry, func(err error) bool { return isDiskFull(err) || p.transient(err) }, oo}.Do(ctx, StageIndex, func() error { return p.hold(batch) })
	}()
	err := p.retry(ctx, StageArchive, func() error { return p.syncArchive(ctx) })
	return firstNonNil(err, <-held)
}

// encode starts encoding the batch's documents, when the index is an
// Encoder, beside the step's archive sync; what it returns waits for them.
func (p *Pipeline) encode(batch []*work) func() Encoded {
	enc, ok := p.cfg.Index.(Encoder)
	if !ok {
		return func() Encoded { return nil }
	}
	docs := docsOf(batch)
	done := make(chan Encoded, 1)
	go func() { done <- enc.Encode(docs) }()
	return func() Encoded { return <-done }
}

// docsOf is the index documents of batch, in its order.
func docsOf(batch []*work) []*model.IndexDoc {
	docs := make([]*model.IndexDoc, len(batch))
	for i, w := range batch {
		docs[i] = w.doc
	}
	return docs
}

// writeBatch indexes b and returns the index's result for each event.
func (p *Pipeline) writeBatch(ctx context.Context, b syncedBatch) []IndexResult {
	batch := b.batch
	docs := docsOf(batch)
	recs := make([]*StageRecord, len(batch))
	start := time.Now()
	for i, w := range batch {
		r := &w.t.Stages[StageIndex]
		r.Stage, r.Status, r.Start = StageIndex, StatusRunning, start
		recs[i] = r
		p.notify(w.t, *r)
	}
	return p.index(ctx, docs, b, recs)
}

// syncIndexed makes the index's commits durable (one Sync for every batch
// written while the last one ran), then concludes the index stage of each
// batch and passes it on.
func (p *Pipeline) syncIndexed(ctx context.Context, in <-chan indexedBatch, out chan<- indexedBatch) {
	for b := range in {
		group := withReady(b, in)
		err := p.syncIndex(ctx, group)
		for _, b := range group {
			p.settleIndex(b, err)
			b.keepHeld = err != nil
			out <- b
		}
	}
}

// syncIndex syncs an index whose commits are durable only when Sync
// returns, when some batch of group created a document.
func (p *Pipeline) syncIndex(ctx context.Context, group []indexedBatch) error {
	s, ok := p.cfg.Index.(Syncer)
	if !ok || !anyCreated(group) {
		return nil
	}
	return p.retry(ctx, StageIndex, func() error { return s.Sync(ctx) })
}

func anyCreated(group []indexedBatch) bool {
	for _, b := range group {
		for _, r := range b.results {
			if r.Err == nil && r.Created {
				return true
			}
		}
	}
	return false
}

// settleIndex ends the index stage of b's events: a sync error fails every
// document the batch created (it may or may not be there after a crash:
// the journal makes the next run write it again).
func (p *Pipeline) settleIndex(b indexedBatch, syncErr error) {
	for i, w := range b.batch {
		res := &b.results[i]
		if syncErr != nil && res.Err == nil && res.Created {
			res.Err = fmt.Errorf("indexed, but making the index durable failed: %w", syncErr)
		}
		r := &w.t.Stages[StageIndex]
		r.Duration, r.Status, r.Err = time.Since(r.Start), StatusDone, res.Err
		switch {
		case res.Err != nil:
			r.Status = StatusFailed
		case !res.Created:
			r.Note = "already indexed"
		}
		if r.Err == nil {
			w.t.IndexName = p.cfg.Index.Name()
		}
		p.notify(w.t, *r)
	}
}

// publishGroup publishes the events of the batches of group that were
// newly indexed, in one go, and concludes every event of them.
func (p *Pipeline) publishGroup(ctx context.Context, group []indexedBatch) {
	var pub []*work
	for _, b := range group {
		for i, w := range b.batch {
			if b.results[i].Err == nil && b.results[i].Created {
				pub = append(pub, w)
			}
		}
	}
	p.publish(ctx, pub)
	for _, b := range group {
		if !b.keepHeld {
			p.release(b.batch, b.results)
		}
		for i, w := range b.batch {
			p.conclude(w, b.results[i])
		}
	}
}

// isDiskFull: the file system has no room (or the quota is spent) now;
// freeing some lets the same write succeed.
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// hold puts the batch's notifications in the outbox before its index write:
// an outbox that cannot take them fails the write (the events are journalled
// and indexed on the next run), since a crash could otherwise lose them.
func (p *Pipeline) hold(batch []*work) error {
	if p.cfg.Outbox == nil || p.cfg.Publisher == nil {
		return nil
	}
	as := make([]Announcement, len(batch))
	for i, w := range batch {
		a, err := p.announcement(w).Encoded()
		if err != nil {
			return err
		}
		as[i], w.ann = a, &as[i]
	}
	return p.cfg.Outbox.Hold(as)
}

// announcement is w's notifications, carrying the trace context of the
// ingestion's root span (whose trace is the event's own when it has one),
// so a consumer's spans hang below the span that produced them.
func (p *Pipeline) announcement(w *work) Announcement {
	ev := w.ev
	a := Announcement{Enriched: model.NewEnriched(ev), Indexed: model.NewIndexed(ev, p.cfg.Index.Name())}
	if sc := w.t.Span; sc.TraceID.IsValid() && sc.SpanID.IsValid() {
		a.TraceID, a.SpanID, a.TraceState = sc.TraceID.String(), sc.SpanID.String(), sc.State
	} else {
		a.TraceID, a.SpanID = ev.Context.TraceID, ev.Context.SpanID
	}
	return a
}

// release lets go of the batch's held notifications, but for those of events
// indexed and not announced: they stay for the next run to announce.
func (p *Pipeline) release(batch []*work, results []IndexResult) {
	if p.cfg.Outbox == nil || p.cfg.Publisher == nil {
		return
	}
	var ids []string
	for i, w := range batch {
		announced := w.t.Stages[StagePublish].Status == StatusDone
		if results[i].Err != nil || !results[i].Created || announced {
			ids = append(ids, w.ev.EventID)
		}
	}
	// A release that fails leaves announcements the next run makes again:
	// at-least-once allows that, and nothing is lost.
	_ = p.cfg.Outbox.Release(ids)
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
		as := make([]Announcement, len(pub))
		for i, w := range pub {
			if w.ann != nil {
				as[i] = *w.ann
			} else {
				as[i] = p.announcement(w)
			}
		}
		err = p.publishAnnouncements(ctx, as)
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
		err := t.Stages[StagePublish].Err
		if p.cfg.Outbox != nil {
			err = fmt.Errorf("%w; indexed, its notifications held in %s to be announced on the next run", err, p.cfg.Outbox.Path())
		}
		p.finish(t, OutcomeFailed, err)
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

// index writes docs (encoded by the index when b.encoded is set) unless
// their archive entries could not be made durable (b.syncErr), retrying
// transient failures; a document already created comes back "already
// there" and counts as created. Each retry is noted in recs for the whole
// batch, which is one request.
func (p *Pipeline) index(ctx context.Context, docs []*model.IndexDoc, b syncedBatch, recs []*StageRecord) []IndexResult {
	results := make([]IndexResult, len(docs))
	if err := b.syncErr; err != nil {
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
		var written []IndexResult
		if b.encoded != nil && !attempted {
			written = p.cfg.Index.(Encoder).WriteEncoded(ctx, b.encoded)
		} else {
			batch := make([]*model.IndexDoc, len(todo))
			for j, i := range todo {
				batch[j] = docs[i]
			}
			written = p.cfg.Index.Write(ctx, batch)
		}
		var again []int
		var firstErr error
		for j, r := range written {
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
	}, recs...)
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
		t.Err = fmt.Errorf("%w; and recording it for the next run failed: %w", cause, err)
		return
	}
	t.Err = fmt.Errorf("%w; archived, recorded in %s to be indexed on the next run", cause, p.cfg.Journal.Path())
}
