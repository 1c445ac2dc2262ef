package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// Bounds of an archive-backed turn (ArchiveTurns): the session's documents
// within DefaultTurnWindow of the selected event, at most
// DefaultTurnMaxEvents (the window halved until they fit), read
// defaultTurnWorkers at a time, so a turn costs about one index search and
// at most 256 archive GETs whatever the index's size.
const (
	DefaultTurnWindow    = 2 * time.Minute
	DefaultTurnMaxEvents = 256
	defaultTurnWorkers   = 8
	// turnCacheTurns and turnCacheObjects bound the caches (turns by event
	// id, and what was read of archived objects); past the bound a cache
	// starts over.
	turnCacheTurns   = 1024
	turnCacheObjects = 16384
	// turnCacheKeys bounds the event id remembered of each turn key, so
	// that a row listed long ago (its turn gone from the cache) still
	// opens: the turn is found again from that event.
	turnCacheKeys = 1 << 16
)

// ArchiveTurns finds turns in the archive, the truth layer, for documents
// whose index lacks the turn key: an index the source system wrote has no
// turn_id and no trace_id, so every turn there is one event, though the
// archived events carry context.turnId and context.traceId. It is safe for
// concurrent use.
type ArchiveTurns struct {
	Reader  Reader
	Archive ingest.ArchiveReader
	// Window, MaxEvents and Workers default to DefaultTurnWindow,
	// DefaultTurnMaxEvents and defaultTurnWorkers when <= 0.
	Window    time.Duration
	MaxEvents int
	Workers   int

	mu    sync.Mutex
	turns map[string]*ArchiveTurn // by the event id of each member
	objs  map[string]archivedFields
	keys  map[string]string // turn key → the event id of one member
}

// ArchiveTurn is a turn found in the archive.
type ArchiveTurn struct {
	// Key is the turn key of the archived events (turnId, else traceId,
	// else the event id).
	Key string
	// Docs are the turn's index documents in causal order, with the
	// extension fields (turn_id, trace_id, tenant_id, tool, success,
	// latency_ms) filled in from their archived events.
	Docs []*model.IndexDoc
	// Searched is how: the session, the window, the documents read.
	Searched string
	// Window is the half width searched (after any halving), Candidates
	// the documents of the session in it, Read the archived objects read
	// (from the cache or the archive), Truncated: the window was still
	// full at its smallest, so the turn may be cut.
	Window     time.Duration
	Candidates int
	Read       int
	Truncated  bool
}

// archivedFields are the members of an archived event a turn needs.
type archivedFields struct {
	EventID string `json:"eventId"`
	Context struct {
		TurnID   string `json:"turnId"`
		TraceID  string `json:"traceId"`
		TenantID string `json:"tenantId"`
		Source   string `json:"source"`
		Session  string `json:"sessionId"`
	} `json:"context"`
	Action *struct {
		Tool string `json:"tool"`
	} `json:"action"`
	Result *struct {
		Success   *bool    `json:"success"`
		IsError   *bool    `json:"isError"`
		LatencyMs *float64 `json:"latencyMs"`
	} `json:"result"`
}

func (f *archivedFields) turnKey() string {
	return model.TurnKey(f.Context.TurnID, f.Context.TraceID, f.EventID)
}

// NeedsArchive reports whether the index's answer to Turn looks like an
// index without turn keys: the turn is one document written without
// engram's extensions (no ingested_at, no turn_id, no trace_id).
func NeedsArchive(docs []*model.IndexDoc) bool {
	return len(docs) == 1 && docs[0].IngestedAt == "" && docs[0].TurnID == "" && docs[0].TraceID == ""
}

// Find is the turn of the event eventID, from the archive: its archived
// event gives the turn key; the index gives the documents of the same
// session within the window around its timestamp; their archived events,
// read concurrently, say which belong to the turn. Cancelling ctx stops
// the reads. An event the index does not hold is backend.ErrNotFound.
func (a *ArchiveTurns) Find(ctx context.Context, eventID string) (*ArchiveTurn, error) {
	a.mu.Lock()
	if t := a.turns[eventID]; t != nil {
		a.mu.Unlock()
		return t, nil
	}
	a.mu.Unlock()
	anchor, err := a.Reader.Document(ctx, eventID)
	if err != nil {
		return nil, err
	}
	return a.findFrom(ctx, anchor)
}

// findFrom is Find from the index document of the event.
func (a *ArchiveTurns) findFrom(ctx context.Context, anchor *model.IndexDoc) (*ArchiveTurn, error) {
	if t := a.Cached(anchor.EventID); t != nil {
		return t, nil
	}
	at, err := model.ParseTimestamp(anchor.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("event %s: timestamp %s: %w", model.Quote(anchor.EventID), model.Quote(anchor.Timestamp), err)
	}
	af, err := a.fields(ctx, anchor)
	if err != nil {
		return nil, err
	}
	t := &ArchiveTurn{Key: af.turnKey()}
	if t.Key == anchor.EventID {
		// Neither turnId nor traceId: the event is its own turn.
		t.Docs = []*model.IndexDoc{withFields(anchor, af)}
		t.Read = 1
		t.Searched = fmt.Sprintf("archived event %s has no context.turnId or traceId: it is a turn of its own", model.Quote(anchor.ObjectStorageKey))
		a.remember(t)
		return t, nil
	}
	cands, window, truncated, err := a.window(ctx, anchor, at)
	if err != nil {
		return nil, err
	}
	t.Window, t.Candidates, t.Truncated = window, len(cands), truncated
	fs, err := a.readAll(ctx, cands)
	if err != nil {
		return nil, err
	}
	t.Read = len(cands)
	seenAnchor := false
	for i, d := range cands {
		f := fs[i]
		if f == nil || f.turnKey() != t.Key {
			continue
		}
		seenAnchor = seenAnchor || d.EventID == anchor.EventID
		t.Docs = append(t.Docs, withFields(d, f))
	}
	if !seenAnchor { // indexed after the window's search, or beyond its cap
		t.Docs = append(t.Docs, withFields(anchor, af))
	}
	SortCausal(t.Docs)
	cut := ""
	if truncated {
		cut = fmt.Sprintf(" (the window still held more than %d documents: the turn may be cut)", a.maxEvents())
	}
	t.Searched = fmt.Sprintf("turn %s from the archive: the index's documents of session %s within %s of %s (%d), their archived events read %d at a time; %d belong to the turn%s",
		model.Quote(t.Key), model.Quote(anchor.SessionID), window, at.UTC().Format(time.RFC3339Nano),
		len(cands), a.workers(), len(t.Docs), cut)
	a.remember(t)
	return t, nil
}

func (a *ArchiveTurns) windowWidth() time.Duration {
	if a.Window > 0 {
		return a.Window
	}
	return DefaultTurnWindow
}

func (a *ArchiveTurns) maxEvents() int {
	if a.MaxEvents > 0 {
		return a.MaxEvents
	}
	return DefaultTurnMaxEvents
}

func (a *ArchiveTurns) workers() int {
	if a.Workers > 0 {
		return a.Workers
	}
	return defaultTurnWorkers
}

// window is the index's documents of the anchor's session within w of at,
// w halved (at most five times) while there are more than maxEvents.
func (a *ArchiveTurns) window(ctx context.Context, anchor *model.IndexDoc, at time.Time) ([]*model.IndexDoc, time.Duration, bool, error) {
	w := a.windowWidth()
	max := a.maxEvents()
	for halvings := 0; ; halvings++ {
		src := fmt.Sprintf("session:%s since:%s until:%s", quoteValue(anchor.SessionID),
			at.Add(-w).UTC().Format(time.RFC3339Nano), at.Add(w+time.Millisecond).UTC().Format(time.RFC3339Nano))
		p, err := a.Reader.Search(ctx, src, "", max+1)
		if err != nil {
			return nil, 0, false, fmt.Errorf("searching the session around %s: %w", model.Quote(anchor.EventID), err)
		}
		if len(p.Docs) <= max {
			return p.Docs, w, false, nil
		}
		if halvings == 5 {
			return p.Docs[:max], w, true, nil
		}
		w /= 2
	}
}

// quoteValue quotes a field value for the filter language.
func quoteValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// readAll reads the archived fields of docs concurrently; a document
// without an archive key, or whose object is missing, gives nil.
func (a *ArchiveTurns) readAll(ctx context.Context, docs []*model.IndexDoc) ([]*archivedFields, error) {
	out := make([]*archivedFields, len(docs))
	errs := make([]error, len(docs))
	parallel(len(docs), a.workers(), func(i int) {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			return
		}
		f, err := a.fields(ctx, docs[i])
		var dis *LayersDisagreeError
		if errors.As(err, &dis) {
			return // no archived event to tell: not in the turn
		}
		out[i], errs[i] = f, err
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("reading the archived events of the window: %w", err)
	}
	return out, nil
}

// maxFieldsBytes bounds what is read of one archived event: the fields
// needed come first in an archived event (eventId, context) but action and
// result follow the input, which may be long; an object cut short is read
// again in full.
const maxFieldsBytes = 64 << 10

// fields reads what a turn needs of d's archived event, once.
func (a *ArchiveTurns) fields(ctx context.Context, d *model.IndexDoc) (*archivedFields, error) {
	key := d.ObjectStorageKey
	a.mu.Lock()
	f, ok := a.objs[key]
	a.mu.Unlock()
	if ok && key != "" {
		return &f, nil
	}
	if key == "" {
		return nil, &LayersDisagreeError{d.EventID, "", "the index document has no object_storage_key"}
	}
	obj, err := a.Archive.Get(ctx, key, maxFieldsBytes)
	if err == nil && obj.Truncated {
		obj, err = a.Archive.Get(ctx, key, 0)
	}
	if errors.Is(err, backend.ErrNotFound) {
		return nil, &LayersDisagreeError{d.EventID, key, "archive object " + model.Quote(key) + " is missing"}
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(obj.Body, &f); err != nil {
		return nil, &LayersDisagreeError{d.EventID, key, "archive object is not valid JSON: " + err.Error()}
	}
	if f.EventID != d.EventID {
		return nil, &LayersDisagreeError{d.EventID, key, "archive object holds eventId " + model.Quote(f.EventID)}
	}
	a.mu.Lock()
	if a.objs == nil || len(a.objs) >= turnCacheObjects {
		a.objs = map[string]archivedFields{}
	}
	a.objs[key] = f
	a.mu.Unlock()
	return &f, nil
}

// remember caches t under the event id of each of its documents: any of
// them selected next finds the same turn.
func (a *ArchiveTurns) remember(t *ArchiveTurn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.turns == nil || len(a.turns) >= turnCacheTurns {
		a.turns = map[string]*ArchiveTurn{}
	}
	for _, d := range t.Docs {
		a.turns[d.EventID] = t
	}
	// And under its key, for the chain of a row listed by Turns (a turn
	// key is an event id only when the turn is that event alone).
	a.turns[t.Key] = t
	if len(t.Docs) > 0 {
		if a.keys == nil || len(a.keys) >= turnCacheKeys {
			a.keys = map[string]string{}
		}
		a.keys[t.Key] = t.Docs[0].EventID
	}
}

// memberOf is the event id of a member of the turn key found before, ""
// when none was.
func (a *ArchiveTurns) memberOf(key string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keys[key]
}

// Cached is the turn found before under key (a turn key or the event id of
// a member), nil when there is none.
func (a *ArchiveTurns) Cached(key string) *ArchiveTurn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turns[key]
}

// withFields is a copy of d with the extension fields its archived event
// gives (the index document's own values win where it has them).
func withFields(d *model.IndexDoc, f *archivedFields) *model.IndexDoc {
	c := *d
	if c.TurnID == "" {
		c.TurnID = f.Context.TurnID
	}
	if c.TraceID == "" {
		c.TraceID = f.Context.TraceID
	}
	if c.TenantID == "" {
		c.TenantID = f.Context.TenantID
	}
	if c.Tool == "" && f.Action != nil {
		c.Tool = f.Action.Tool
	}
	if c.Source == "" {
		c.Source = model.SourceOf(f.Context.Source, f.Context.Session)
	}
	if r := f.Result; r != nil {
		if c.Success == nil {
			c.Success = (&model.Result{Success: r.Success, IsError: r.IsError}).Succeeded()
		}
		if c.LatencyMs == nil && r.LatencyMs != nil && *r.LatencyMs >= 0 {
			ms := int64(min(*r.LatencyMs, 9.2e18))
			c.LatencyMs = &ms
		}
	}
	return &c
}

// SortCausal puts one turn's documents in causal order (data-contract.md
// section 2): phase, then the timestamp to the millisecond, then eventId.
func SortCausal(docs []*model.IndexDoc) {
	ms := func(d *model.IndexDoc) int64 {
		t, err := model.ParseTimestamp(d.Timestamp)
		if err != nil {
			return 0
		}
		return t.UnixMilli()
	}
	slices.SortStableFunc(docs, func(x, y *model.IndexDoc) int {
		if px, py := x.Phase(), y.Phase(); px != py {
			return int(px) - int(py)
		}
		if mx, my := ms(x), ms(y); mx != my {
			if mx < my {
				return -1
			}
			return 1
		}
		return strings.Compare(x.EventID, y.EventID)
	})
}

// TurnReader is a Reader whose Turn asks the archive (through Archived) when
// the index's answer is a lone document written without engram's
// extensions: how the inspector's Turns view gets the causal chain on an
// index the source system wrote. Coverage passes through. (The field is
// not called Turns: it would hide Reader.Turns.)
type TurnReader struct {
	Reader
	Archived *ArchiveTurns
}

var _ Reader = TurnReader{}

// Turn is the index's turn, or the archive's for a lone plain document
// (or for a turn key the archive listed, see Turns).
func (r TurnReader) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	if t := r.Archived.Cached(key); t != nil {
		return t.Docs, nil
	}
	if id := r.Archived.memberOf(key); id != "" {
		t, err := r.Archived.Find(ctx, id)
		if err != nil {
			return nil, err
		}
		return t.Docs, nil
	}
	docs, err := r.Reader.Turn(ctx, key)
	if (errors.Is(err, backend.ErrNotFound) || err == nil && len(docs) == 0) && r.lacksTurnKeys(ctx) {
		// A turnId the index cannot look up: say why, and what works.
		return nil, fmt.Errorf("turn %s: %w in the index, whose documents have no turn key (written without engram's extensions): "+
			"the archive finds a turn only around one of its events (open one: its detail shows the chain)", model.Quote(key), backend.ErrNotFound)
	}
	if err != nil || !NeedsArchive(docs) {
		return docs, err
	}
	t, err := r.Archived.Find(ctx, docs[0].EventID)
	if err != nil {
		return nil, err
	}
	return t.Docs, nil
}

// Turns is the index's list of turns, or, when some documents lack the
// turn key (Coverage), the archive's (ArchiveTurns.Turns), with Note
// saying so.
func (r TurnReader) Turns(ctx context.Context, src string, after Cursor, limit int) (TurnPage, error) {
	if !IsArchiveTurnsCursor(after) && (after != "" || !r.lacksTurnKeys(ctx)) {
		return r.Reader.Turns(ctx, src, after, limit)
	}
	p, err := r.Archived.Turns(ctx, src, after, limit)
	p.Note = r.Archived.TurnsNote()
	return p, err
}

// lacksTurnKeys: some documents have no turn_id (written without the
// extensions), so the index's turns are single events there. When the
// index cannot tell, its own answer stands.
func (r TurnReader) lacksTurnKeys(ctx context.Context) bool {
	c, err := r.Coverage(ctx)
	return err == nil && (c.Lacking["turn_id"] > 0 || slices.Contains(c.Unmapped, "turn_id") && c.Total > 0)
}

// FindTurn is the turn of the event eventID from the archive (the
// inspector's detail shows it for a document without a turn key).
func (r TurnReader) FindTurn(ctx context.Context, eventID string) (*ArchiveTurn, error) {
	return r.Archived.Find(ctx, eventID)
}

// Coverage is the wrapped reader's (an error when it cannot tell).
func (r TurnReader) Coverage(ctx context.Context) (Coverage, error) {
	if fc, ok := r.Reader.(FieldCoverage); ok {
		return fc.Coverage(ctx)
	}
	return Coverage{}, errors.New("the index cannot tell which fields its documents carry")
}
