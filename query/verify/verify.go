package verify

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"engram/ingest"
	"engram/model"
)

// Kinds of disagreement.
const (
	missingArchive = "missing-archive" // an index document whose archive object is missing
	missingIndex   = "missing-index"   // an archived event with no index document
	mismatch       = "mismatch"        // a field differs between document and archived event
	badObject      = "bad-object"      // an archived object that is not a valid event
	wrongKey       = "wrong-key"       // an object whose key does not match its eventId and timestamp
)

// Diff is one disagreement.
type Diff struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	EventID string `json:"eventId,omitempty"`
	Detail  string `json:"detail"`
}

// DocScanner streams index documents ordered by object_storage_key, from
// (inclusive) to to (exclusive; "" means no end).
type DocScanner interface {
	ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error
}

// Options bound and report a run.
type Options struct {
	Since, Until time.Time // zero: unbounded (days, UTC, inclusive)
	MaxDiffs     int       // how many differences to keep (default 20)
	Workers      int       // concurrent archive reads (default 8)
	// Pending holds the archive keys of the pending journal: archived,
	// waiting for the next run to index them, so not a disagreement.
	Pending  map[string]bool
	Progress func(Progress)
	// Topics, when given, are the notification topics: every indexed event
	// must be announced on each, and nothing else. Held, when set, gives
	// the events whose notifications an outbox holds (in flight).
	Topics []TopicSource
	Held   func() (map[string]bool, error)
}

// docGetter is a DocScanner that can also look one document up: verify
// asks it again about an event the scan did not see, which an ingest
// running meanwhile may have indexed after the scan passed its key.
type docGetter interface {
	Get(ctx context.Context, eventID string) (*model.IndexDoc, error)
}

// Progress is how far a run has come.
type Progress struct{ Objects, Docs int64 }

// Report is a run's result.
type Report struct {
	Objects int64 `json:"archivedObjects"`
	Docs    int64 `json:"indexDocuments"`
	// Agreeing counts the events whose archived object and index document
	// agree. The notifications are counted apart, in Notifications: an
	// index rebuilt without announcing agrees with the archive, and saying
	// "0 agree" of it would hide which layer lacks what.
	Agreeing int64 `json:"agreeing"`
	// InFlight counts the events an ingest running meanwhile was writing
	// (archived after the run began, pending, or indexed behind the scan):
	// skipped, not disagreements.
	InFlight int64            `json:"inFlight"`
	Counts   map[string]int64 `json:"differences"`
	First    []Diff           `json:"first"`
	// Notifications is the third layer's count; nil when not checked.
	Notifications *Notifications `json:"notifications,omitempty"`
	Elapsed       time.Duration  `json:"-"`
}

// Notifications counts the indexed events against the topics.
type Notifications struct {
	Topics []string `json:"topics"`
	// Indexed events checked; of them, Announced are on every topic and
	// Unannounced missing from one at least (those held in an outbox are
	// in flight, neither).
	Indexed     int64 `json:"indexed"`
	Announced   int64 `json:"announced"`
	Unannounced int64 `json:"unannounced"`
	// Messages is how many notifications of the range the topics hold.
	Messages int64 `json:"messages"`
}

// OK is true when the layers agree.
func (r *Report) OK() bool { return len(r.Counts) == 0 }

// IndexOK is true when the archive and the index agree, whatever the
// notifications.
func (r *Report) IndexOK() bool {
	for k := range r.Counts {
		if !isNotificationKind(k) {
			return false
		}
	}
	return true
}

// NotificationsOK is true when the notifications agree with the index (or
// were not checked).
func (r *Report) NotificationsOK() bool {
	for k := range r.Counts {
		if isNotificationKind(k) {
			return false
		}
	}
	return true
}

// OnlyUnannounced is true when the one finding is indexed events the
// topics lack: what an index rebuilt without announcing leaves, closed by
// announcing them.
func (r *Report) OnlyUnannounced() bool {
	return len(r.Counts) == 1 && r.Counts[unannounced] > 0
}

// KeyRange is the archive-key range of a day range.
func KeyRange(since, until time.Time) (from, to string) {
	from = "events/"
	if !since.IsZero() {
		from = model.ArchivePrefix(since)
	}
	if !until.IsZero() {
		to = model.ArchivePrefix(until.UTC().AddDate(0, 0, 1))
	}
	return from, to
}

// pair is one key seen in either layer.
type pair struct {
	key     string
	archive bool
	doc     *model.IndexDoc
}

// Run compares the layers.
func Run(ctx context.Context, ar ingest.ArchiveReader, ix DocScanner, opt Options) (*Report, error) {
	if opt.MaxDiffs <= 0 {
		opt.MaxDiffs = 20
	}
	if opt.Workers <= 0 {
		opt.Workers = 8
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	from, to := KeyRange(opt.Since, opt.Until)
	c := &collector{rep: &Report{Counts: map[string]int64{}}, max: opt.MaxDiffs, progress: opt.Progress,
		start: start, pending: opt.Pending}
	c.getter, _ = ix.(docGetter)
	if len(opt.Topics) > 0 {
		c.indexed = map[string]string{}
	}
	pairs := make(chan pair, 256)
	var workers sync.WaitGroup
	for range opt.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for p := range pairs {
				c.check(ctx, ar, p)
			}
		}()
	}
	err := merge(ctx, ar, ix, from, to, pairs)
	close(pairs)
	workers.Wait()
	if err == nil && len(opt.Topics) > 0 {
		err = c.checkNotifications(ctx, opt, from, to)
	}
	c.rep.Elapsed = time.Since(start)
	return c.rep, err
}

// merge joins the archive listing and the index scan, both in key order.
func merge(ctx context.Context, ar ingest.ArchiveReader, ix DocScanner, from, to string, out chan<- pair) error {
	docs := make(chan *model.IndexDoc, 256)
	scanErr := make(chan error, 1)
	go func() {
		defer close(docs)
		scanErr <- ix.ScanByKey(ctx, from, to, func(d *model.IndexDoc) error {
			select {
			case docs <- d:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	next, more := <-docs
	send := func(p pair) error {
		select {
		case out <- p:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := ar.List(ctx, ingest.ListPrefix(from, to), func(key string, _ int64) error {
		if key < from || (to != "" && key >= to) {
			return nil
		}
		for more && next.ObjectStorageKey < key {
			if err := send(pair{key: next.ObjectStorageKey, doc: next}); err != nil {
				return err
			}
			next, more = <-docs
		}
		p := pair{key: key, archive: true}
		if more && next.ObjectStorageKey == key {
			p.doc = next
			next, more = <-docs
		}
		return send(p)
	})
	for err == nil && more {
		err = send(pair{key: next.ObjectStorageKey, doc: next})
		next, more = <-docs
	}
	for range docs { // drain so the scanner can finish
	}
	if err != nil {
		return err
	}
	return <-scanErr
}

type collector struct {
	mu       sync.Mutex
	rep      *Report
	max      int
	progress func(Progress)
	start    time.Time
	pending  map[string]bool
	getter   docGetter         // nil when the index cannot look one up
	indexed  map[string]string // event id to key; nil: notifications not checked
}

func (c *collector) add(d Diff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rep.Counts[d.Kind]++
	if len(c.rep.First) < c.max {
		c.rep.First = append(c.rep.First, d)
	}
}

func (c *collector) inFlight() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rep.InFlight++
}

func (c *collector) count(p pair, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.archive {
		c.rep.Objects++
	}
	if p.doc != nil {
		c.rep.Docs++
	}
	if ok {
		c.rep.Agreeing++
	}
	if c.progress != nil && (c.rep.Objects+c.rep.Docs)%1000 == 0 {
		c.progress(Progress{c.rep.Objects, c.rep.Docs})
	}
}

// check compares one key's two sides.
func (c *collector) check(ctx context.Context, ar ingest.ArchiveReader, p pair) {
	ok := c.checkPair(ctx, ar, p)
	if p.doc != nil {
		c.noteIndexed(p.key, p.doc)
	}
	c.count(p, ok)
}

func (c *collector) checkPair(ctx context.Context, ar ingest.ArchiveReader, p pair) bool {
	if !p.archive {
		if c.archivedSince(ctx, ar, p.key) {
			c.inFlight()
			return false
		}
		c.add(Diff{missingArchive, p.key, p.doc.EventID, "index document points at an archive object that does not exist"})
		return false
	}
	obj, err := ar.Get(ctx, p.key, 0)
	if err != nil {
		c.add(Diff{badObject, p.key, "", "cannot read: " + err.Error()})
		return false
	}
	ev, err := model.DecodeArchived(obj.Body)
	if err != nil {
		c.add(Diff{badObject, p.key, "", err.Error()})
		return false
	}
	ok := true
	if want, err := model.ArchiveKey(ev.EventID, ev.Timestamp); err != nil || want != p.key {
		c.add(Diff{wrongKey, p.key, ev.EventID, fmt.Sprintf("eventId and timestamp give key %s", model.Quote(want))})
		ok = false
	}
	if p.doc == nil {
		if c.unindexedInFlight(ctx, p.key, ev.EventID, obj.LastModified) {
			c.inFlight()
			return false
		}
		c.add(Diff{missingIndex, p.key, ev.EventID, "archived event has no index document"})
		return false
	}
	for _, m := range compare(p.doc, ev, p.key) {
		c.add(Diff{mismatch, p.key, ev.EventID, m})
		ok = false
	}
	return ok
}

// archivedSince reports whether key, which the listing did not hold, is
// there now: archived while the run listed.
func (c *collector) archivedSince(ctx context.Context, ar ingest.ArchiveReader, key string) bool {
	_, err := ar.Get(ctx, key, 1)
	return err == nil
}

// unindexedInFlight reports whether an archived event the scan did not see
// is being ingested: archived after the run began (S3 keeps whole seconds),
// waiting in the pending journal, or indexed since the scan passed it.
func (c *collector) unindexedInFlight(ctx context.Context, key, eventID string, modified time.Time) bool {
	if c.pending[key] || !modified.Before(c.start.Truncate(time.Second)) {
		return true
	}
	if c.getter == nil {
		return false
	}
	d, err := c.getter.Get(ctx, eventID)
	return err == nil && d != nil && d.ObjectStorageKey == key
}

func compare(d *model.IndexDoc, a *model.Event, key string) []string {
	var out []string
	if d.EventID != a.EventID {
		out = append(out, fmt.Sprintf("event_id %s, archive eventId %s", model.Quote(d.EventID), model.Quote(a.EventID)))
	}
	if !sameTime(d.Timestamp, a.Timestamp) {
		out = append(out, fmt.Sprintf("timestamp %s, archive %s", model.Quote(d.Timestamp), model.Quote(a.Timestamp)))
	}
	if a.ImportanceGiven() && math.Abs(d.ImportanceScore-a.ImportanceScore) > 1e-9 {
		out = append(out, fmt.Sprintf("importance_score %v, archive %v", d.ImportanceScore, a.ImportanceScore))
	}
	if a.ObjectStorageKey != "" && a.ObjectStorageKey != key {
		out = append(out, fmt.Sprintf("archive objectStorageKey %s differs from its key", model.Quote(a.ObjectStorageKey)))
	}
	return out
}

// sameTime compares instants, so a document written with another zone
// or precision of the same moment still agrees.
func sameTime(a, b string) bool {
	if a == b {
		return true
	}
	ta, err1 := model.ParseTimestamp(a)
	tb, err2 := model.ParseTimestamp(b)
	return err1 == nil && err2 == nil && ta.Equal(tb)
}
