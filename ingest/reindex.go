package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"engram/model"
)

// ReindexConfig says what to rebuild and how.
type ReindexConfig struct {
	Archive    ArchiveReader
	Index      Index
	From, To   string // archive-key range: from inclusive, to exclusive ("" no end)
	Checkpoint string // file remembering the last key done, to resume (optional)
	// IndexID names the index being filled (its Describe()). A checkpoint
	// is written for one index: resuming it into another would skip events.
	IndexID string
	// Holds reports whether the index has a document for eventID. A
	// checkpoint is trusted only when the index still holds the events it
	// vouches for (an index deleted and recreated keeps its name); without
	// Holds it is never trusted.
	Holds      func(ctx context.Context, eventID string) (bool, error)
	Restart    bool             // ignore any checkpoint and start from From
	Notice     func(msg string) // says whether, and why (not), a checkpoint is used
	Workers    int              // concurrent archive reads (default 16)
	BatchSize  int              // documents per index write (default 512)
	SummaryLen int
	Progress   func(ReindexSummary)
	// Publisher, when set, announces every document the rebuild creates,
	// held in Outbox (required with it) from before the index write until
	// published, as ingest does.
	Publisher Publisher
	Outbox    *Outbox
	// AnnounceExisting, with a Publisher, announces the documents the index
	// already held too: an index rebuilt without announcing has no other
	// way to reach the topics (consumers may see an event twice).
	AnnounceExisting bool
	// OnBatch, when set, is told what each batch did, when it is done
	// (telemetry makes its spans from it).
	OnBatch func(ReindexBatch)
}

// ReindexBatch is one batch of a rebuild: when each of its steps ran and
// what became of its objects.
type ReindexBatch struct {
	Start time.Time
	Read  time.Duration // reading and decoding its objects, concurrently
	// WriteAt and Write are the one index write (zero when no object was
	// readable); AnnounceAt and Announce the publishing of what it created
	// (zero without a Publisher).
	WriteAt, AnnounceAt                     time.Time
	Write, Announce                         time.Duration
	Objects, Created, Existing, Bad, Failed int
	FirstKey, LastKey                       string
	Err                                     error // the first failure among its objects, if any
}

// ReindexSummary counts a rebuild.
type ReindexSummary struct {
	Objects, Created, Existing, Bad, Failed int
	// Announced counts the documents announced (created ones, and with
	// AnnounceExisting those already indexed); Unannounced those whose
	// notifications stay held in the outbox for the next run.
	Announced, Unannounced int
	ResumedAfter           string
	// CheckpointAfter is the key the checkpoint file ends at when Reindex
	// returns, "" when there is none: where a re-run would resume.
	CheckpointAfter string
	Elapsed         time.Duration
	Errors          []string // the first few, with their keys
}

// Reindex rebuilds the index from the archive, the truth layer. It is
// idempotent (an existing document is left as it is) and resumable: keys
// are taken in order, a batch at a time, and the checkpoint records the
// last key of each batch that was fully indexed, for this index only.
func Reindex(ctx context.Context, cfg ReindexConfig) (ReindexSummary, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 512
	}
	start := time.Now()
	r := &reindexer{cfg: cfg}
	from, err := r.start(ctx)
	if err != nil {
		return r.sum, err
	}
	err = r.run(ctx, from)
	if err == nil && !r.held {
		r.clearCheckpoint()
	}
	r.sum.Elapsed = time.Since(start)
	return r.sum, err
}

// run indexes the keys from from (inclusive) to cfg.To, a batch at a time.
func (r *reindexer) run(ctx context.Context, from string) error {
	cfg := r.cfg
	var keys []string
	err := cfg.Archive.List(ctx, ListPrefix(from, cfg.To), func(key string, _ int64) error {
		if key < from || (cfg.To != "" && key >= cfg.To) {
			return nil
		}
		keys = append(keys, key)
		if len(keys) < cfg.BatchSize {
			return nil
		}
		err := r.batch(ctx, keys)
		keys = keys[:0]
		return err
	})
	if err == nil && len(keys) > 0 {
		err = r.batch(ctx, keys)
	}
	return err
}

// ListPrefix is the longest listing prefix (ending at a /) that covers the
// archive keys from from (inclusive) to to (exclusive, "" no end).
func ListPrefix(from, to string) string {
	if to == "" || !strings.HasPrefix(from, "events/") {
		return "events/"
	}
	i := 0
	for i < len(from) && i < len(to) && from[i] == to[i] {
		i++
	}
	p := from[:i]
	if !strings.HasPrefix(p, "events/") {
		return "events/"
	}
	return p[:strings.LastIndex(p, "/")+1]
}

type reindexer struct {
	cfg ReindexConfig
	sum ReindexSummary
	// held stops the checkpoint once an object could not be indexed for a
	// reason a re-run may not meet again (an index write or archive read
	// failed): moving it past that object would make a resume skip it.
	held bool
	// first and last are the first and last keys indexed (created or found)
	// since the run the checkpoint chain began with: a resume checks that
	// the index still holds them.
	first, last string
}

// batch reads keys' objects concurrently, indexes them in one write, and
// moves the checkpoint past them when nothing failed.
func (r *reindexer) batch(ctx context.Context, keys []string) error {
	tb := ReindexBatch{Start: time.Now(), FirstKey: keys[0], LastKey: keys[len(keys)-1]}
	before := r.sum
	defer func() {
		if r.cfg.OnBatch != nil {
			tb.Objects, tb.Created, tb.Existing = r.sum.Objects-before.Objects, r.sum.Created-before.Created, r.sum.Existing-before.Existing
			tb.Bad, tb.Failed = r.sum.Bad-before.Bad, r.sum.Failed-before.Failed
			r.cfg.OnBatch(tb)
		}
	}()
	docs := make([]*model.IndexDoc, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	next := make(chan int)
	for range r.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				docs[i], errs[i] = r.doc(ctx, keys[i])
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	tb.Read = time.Since(tb.Start)
	if err := ctx.Err(); err != nil {
		tb.Err = err
		return err
	}
	batch, at := r.readable(keys, docs, errs)
	tb.Err = firstErr(errs)
	if err := r.hold(batch); err != nil {
		tb.Err = err
		return err
	}
	if len(batch) > 0 {
		tb.WriteAt = time.Now()
	}
	results := r.cfg.Index.Write(ctx, batch)
	if err := r.syncIndex(ctx, results); err != nil {
		tb.Err = err
		return err // nothing is announced or checkpointed: a re-run writes the batch again
	}
	if len(batch) > 0 {
		tb.Write = time.Since(tb.WriteAt)
	}
	if tb.Err == nil {
		tb.Err = firstResultErr(results)
	}
	if r.cfg.Publisher != nil {
		tb.AnnounceAt = time.Now()
	}
	r.announce(ctx, batch, results)
	if r.cfg.Publisher != nil {
		tb.Announce = time.Since(tb.AnnounceAt)
	}
	// Writes that an interruption stopped are counted, not listed: there
	// would be a batch of them, and the caller says it was interrupted.
	list := ctx.Err() == nil
	for j, res := range results {
		r.count(keys[at[j]], res, list)
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress(r.sum)
	}
	if r.held {
		return nil // the checkpoint stays: a re-run retries from there
	}
	return r.saveCheckpoint(keys[len(keys)-1])
}

// syncIndex makes the batch's index writes durable, for an index whose
// commits are durable only when Sync returns.
func (r *reindexer) syncIndex(ctx context.Context, results []IndexResult) error {
	s, ok := r.cfg.Index.(Syncer)
	if !ok || !anyCreated([]indexedBatch{{results: results}}) {
		return nil
	}
	if err := s.Sync(ctx); err != nil {
		return fmt.Errorf("making the index durable: %w", err)
	}
	return nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func firstResultErr(results []IndexResult) error {
	for _, res := range results {
		if res.Err != nil {
			return res.Err
		}
	}
	return nil
}

func docAnnouncement(d *model.IndexDoc, index string) Announcement {
	e, i := d.Notifications(index)
	return Announcement{Enriched: e, Indexed: i, TraceID: d.TraceID}
}

// hold puts the announcements of a batch's documents in the outbox before
// they are written.
func (r *reindexer) hold(batch []*model.IndexDoc) error {
	if r.cfg.Publisher == nil {
		return nil
	}
	as := make([]Announcement, len(batch))
	for i, d := range batch {
		as[i] = docAnnouncement(d, r.cfg.Index.Name())
	}
	return r.cfg.Outbox.Hold(as)
}

// announce publishes the documents the write created (or found, with
// AnnounceExisting), and releases the rest; what cannot be published stays held for the next run.
func (r *reindexer) announce(ctx context.Context, batch []*model.IndexDoc, results []IndexResult) {
	if r.cfg.Publisher == nil {
		return
	}
	var created []Announcement
	var release []string
	for j, res := range results {
		if res.Err == nil && (res.Created || r.cfg.AnnounceExisting) {
			created = append(created, docAnnouncement(batch[j], r.cfg.Index.Name()))
		} else {
			release = append(release, batch[j].EventID)
		}
	}
	if len(created) > 0 {
		if err := r.cfg.Publisher.Publish(ctx, created); err != nil {
			r.sum.Unannounced += len(created)
			r.note("notifications", fmt.Errorf("%w; held in %s for the next run", err, r.cfg.Outbox.Path()))
		} else {
			r.sum.Announced += len(created)
			for _, a := range created {
				release = append(release, a.Enriched.EventID)
			}
		}
	}
	_ = r.cfg.Outbox.Release(release) // a failed release only repeats announcements
}

// readable counts the objects of a batch and returns the documents made
// from them, with their positions in keys.
func (r *reindexer) readable(keys []string, docs []*model.IndexDoc, errs []error) ([]*model.IndexDoc, []int) {
	var batch []*model.IndexDoc
	var at []int
	for i, d := range docs {
		r.sum.Objects++
		if errs[i] != nil {
			r.sum.Bad++
			r.note(keys[i], errs[i])
			// A bad object stays bad (the archive is write-once), so the
			// checkpoint may pass it; a failed read may succeed next time.
			var bad badObject
			r.held = r.held || !errors.As(errs[i], &bad)
			continue
		}
		batch, at = append(batch, d), append(at, i)
	}
	return batch, at
}

// count records what happened to key's document, listing a failure when
// list is set.
func (r *reindexer) count(key string, res IndexResult, list bool) {
	switch {
	case res.Err != nil:
		r.sum.Failed++
		r.held = true
		if list {
			r.note(key, res.Err)
		}
		return
	case res.Created:
		r.sum.Created++
	default:
		r.sum.Existing++
	}
	if r.first == "" {
		r.first = key
	}
	r.last = key
}

// badObject is an archived object that can never be indexed.
type badObject struct{ error }

// doc rebuilds an index document from an archived event.
func (r *reindexer) doc(ctx context.Context, key string) (*model.IndexDoc, error) {
	obj, err := r.cfg.Archive.Get(ctx, key, 0)
	if err != nil {
		return nil, err
	}
	ev, err := model.DecodeArchived(obj.Body)
	if err != nil {
		return nil, badObject{err}
	}
	if want, err := model.ArchiveKey(ev.EventID, ev.Timestamp); err != nil || want != key {
		return nil, badObject{fmt.Errorf("key does not match the event's eventId and timestamp (%s)", model.Quote(want))}
	}
	ev.ObjectStorageKey = key
	return model.NewIndexDoc(ev, r.cfg.SummaryLen), nil
}

func (r *reindexer) note(key string, err error) {
	if len(r.sum.Errors) < 20 {
		r.sum.Errors = append(r.sum.Errors, key+": "+err.Error())
	}
}

// checkpoint is what a run that did not finish leaves for the next one.
type checkpoint struct {
	Index string `json:"index"` // the IndexID it was written for
	After string `json:"after"` // every key up to this one was handled
	// First and Last are keys whose events the index must still hold for
	// the checkpoint to be trusted (see reindexer.first).
	First string `json:"first"`
	Last  string `json:"last"`
}

// start returns the key to start from: just after the checkpoint when it
// can be trusted, else From, saying which and why.
func (r *reindexer) start(ctx context.Context) (string, error) {
	if r.cfg.Checkpoint == "" {
		return r.cfg.From, nil
	}
	cp, found, err := r.loadCheckpoint()
	r.sum.CheckpointAfter = cp.After
	switch {
	case !found:
		return r.cfg.From, nil
	case r.cfg.Restart:
		r.notice("ignoring checkpoint %s; starting over", r.cfg.Checkpoint)
		return r.cfg.From, r.dropCheckpoint()
	case err == nil:
		var why string
		if why, err = r.mismatch(ctx, cp); err != nil {
			return "", fmt.Errorf("checking checkpoint %s: %w", r.cfg.Checkpoint, err)
		}
		if why == "" {
			r.sum.ResumedAfter, r.first, r.last = cp.After, cp.First, cp.Last
			r.notice("resuming after %s (checkpoint %s)", cp.After, r.cfg.Checkpoint)
			return cp.After + "\x00", nil
		}
		err = errors.New(why)
	}
	r.notice("checkpoint %s does not match this index (%v); starting over", r.cfg.Checkpoint, err)
	return r.cfg.From, r.dropCheckpoint()
}

// dropCheckpoint removes the checkpoint. One that is not resumed is
// removed at once: were this run stopped before it writes its own, the
// next would otherwise find it again.
func (r *reindexer) dropCheckpoint() error {
	if err := os.Remove(r.cfg.Checkpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	r.sum.CheckpointAfter = ""
	return nil
}

// mismatch says why cp cannot be resumed into this index, "" if it can.
func (r *reindexer) mismatch(ctx context.Context, cp checkpoint) (string, error) {
	switch {
	case cp.Index != r.cfg.IndexID:
		return fmt.Sprintf("it was written for %s", model.Quote(cp.Index)), nil
	case cp.After < r.cfg.From || (r.cfg.To != "" && cp.After >= r.cfg.To):
		return "it is outside the range", nil
	case r.cfg.Holds == nil:
		return "the index cannot be asked whether it holds the events before it", nil
	case cp.First == "" || cp.Last == "":
		return "it names no indexed event to check", nil
	}
	for _, key := range []string{cp.First, cp.Last} {
		id := strings.TrimSuffix(path.Base(key), ".json") // doc checked key == ArchiveKey(id, …)
		ok, err := r.cfg.Holds(ctx, id)
		if err != nil || !ok {
			return fmt.Sprintf("the index does not hold %s, indexed before it", model.Quote(id)), err
		}
	}
	return "", nil
}

func (r *reindexer) notice(format string, args ...any) {
	if r.cfg.Notice != nil {
		r.cfg.Notice(fmt.Sprintf(format, args...))
	}
}

// loadCheckpoint reads the checkpoint; found is false when there is none.
func (r *reindexer) loadCheckpoint() (cp checkpoint, found bool, err error) {
	b, err := os.ReadFile(r.cfg.Checkpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return cp, false, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &cp)
	}
	if err == nil && cp.After == "" {
		err = errors.New("no key")
	}
	if err != nil {
		err = fmt.Errorf("it cannot be read: %w", err)
	}
	return cp, true, err
}

func (r *reindexer) saveCheckpoint(key string) error {
	if r.cfg.Checkpoint == "" {
		return nil
	}
	b, err := json.Marshal(checkpoint{Index: r.cfg.IndexID, After: key, First: r.first, Last: r.last})
	if err != nil {
		return err
	}
	tmp := r.cfg.Checkpoint + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, r.cfg.Checkpoint); err != nil {
		return err
	}
	r.sum.CheckpointAfter = key
	return nil
}

func (r *reindexer) clearCheckpoint() {
	if r.cfg.Checkpoint == "" {
		return
	}
	if err := r.dropCheckpoint(); err != nil {
		r.note(r.cfg.Checkpoint, err)
	}
}
