package query

import (
	"context"
	"fmt"
	"time"

	"engram/model"
)

// Cursor is an opaque position in a listing; "" is the start (or, in a
// returned page, the end: there is nothing more).
type Cursor string

// Page is one page of index documents.
type Page struct {
	Docs []*model.IndexDoc
	// Next continues the listing; "" when there is nothing more.
	Next Cursor
	// Ranking, for a search ranked by relevance, says what it ranked
	// (nil for a listing newest first).
	Ranking *Ranking
}

// Ranking is what a ranked search considered. Ranking every match costs
// time in proportion to how many documents match — seconds for a common
// word over a million documents — so by default a ranked search ranks the
// newest matches only (Options.RankWindow).
type Ranking struct {
	// Window is the most matches ranked, newest first: 0 means every
	// match was ranked.
	Window int
	// Ranked is how many matches the window held (0 when Window is 0).
	Ranked int
	// Cut: the window was full, or Scanned documents holding the words
	// were tested against the filters without filling it, so older
	// documents may match that were not ranked.
	Cut bool
	// Scanned, when the walk of a filtered search stopped short of a full
	// window, is how many documents holding the words it tested.
	Scanned int
}

// MaxPage is the largest page every Reader serves whole, documents or
// turns (a larger limit may be cut to a backend's own maximum): what a
// caller paging through a listing asks for.
const MaxPage = 1000

// defaultRankWindow is how many of the newest matches a ranked search
// ranks unless Options.RankWindow says otherwise.
const defaultRankWindow = 2000

// TurnSummary is one row per turn (the turn key of docs/data-contract.md,
// Turns and causal order). Its totals are the whole turn's (every event
// the reader sees), even in a filtered listing, which lists the turns with
// a match.
type TurnSummary struct {
	Key           string
	SessionID     string
	AgentID       string
	TenantID      string
	Events        int
	First, Last   time.Time
	AnyFailed     bool
	MaxImportance float64
	// Failures and Successes count its events with success false and
	// true (events without a result count in neither).
	Failures, Successes int
	// LatencyMs is the sum of its events' latency_ms (0 when none has
	// one).
	LatencyMs int64
	// Summary is what the turn was about: the summary of its first event
	// in causal order (its observation, when it has one).
	Summary string
}

// Outcome is "failed" when an event of the turn failed, "ok" when some
// succeeded and none failed, else "" (no result known).
func (t TurnSummary) Outcome() string {
	switch {
	case t.AnyFailed || t.Failures > 0:
		return "failed"
	case t.Successes > 0:
		return "ok"
	}
	return ""
}

// TurnPage is one page of turns, newest first.
type TurnPage struct {
	Turns []TurnSummary
	Next  Cursor
	// Note, when set, says how the turns were found (from the archive,
	// for an index without turn keys: TurnReader).
	Note string
}

// Scored is a document with its similarity score (higher is closer).
type Scored struct {
	Doc   *model.IndexDoc
	Score float64
}

// Reader is everything the inspector reads from an index. expr is a filter
// in the language of package expr ("" matches everything).
type Reader interface {
	// Recent is the newest documents first, by ingestion order.
	Recent(ctx context.Context, expr string, after Cursor, limit int) (Page, error)
	// TailStart is the cursor of the newest document now indexed.
	TailStart(ctx context.Context) (Cursor, error)
	// Tail is every document indexed after the cursor, oldest first; its
	// Next is the cursor to poll from next time (unchanged when empty).
	Tail(ctx context.Context, after Cursor, limit int) (Page, error)
	// Match is which of the documents ids match expr: the ids of those
	// that do (a follower checks new documents from Tail against its
	// filter with it).
	Match(ctx context.Context, expr string, ids []string) (map[string]bool, error)
	// Turns is one row per turn, newest first, filtered like Search.
	Turns(ctx context.Context, expr string, after Cursor, limit int) (TurnPage, error)
	// Turn is every event of one turn in causal order: phase, then
	// timestamp, then eventId.
	Turn(ctx context.Context, key string) ([]*model.IndexDoc, error)
	// Search is the documents matching expr: ranked by text relevance when
	// it has free words (Page.Ranking says what was ranked), else newest
	// first.
	Search(ctx context.Context, expr string, after Cursor, limit int) (Page, error)
	// Similar is the k nearest documents to eventID's embedding.
	Similar(ctx context.Context, eventID string, k int) ([]Scored, error)
	// Document is one index document by event id.
	Document(ctx context.Context, eventID string) (*model.IndexDoc, error)
	// Count is how many documents are visible.
	Count(ctx context.Context) (int64, error)
	Describe() string
	Close() error
}

// Options scope a reader.
type Options struct {
	// Tenant, when set, hides every document of other tenants.
	Tenant string
	// RankWindow bounds a ranked search to the newest RankWindow matching
	// documents: 0 is defaultRankWindow, a negative value ranks every
	// match. (Where the index bounds the work itself, as OpenSearch's
	// top-k retrieval does, it may be ignored: Page.Ranking says.)
	RankWindow int
}

// Window is the rank window o asks for: 0 for every match.
func (o Options) Window() int {
	switch {
	case o.RankWindow < 0:
		return 0
	case o.RankWindow == 0:
		return defaultRankWindow
	}
	return o.RankWindow
}

// Matcher is the part of a Reader that Filter needs.
type Matcher interface {
	Match(ctx context.Context, expr string, ids []string) (map[string]bool, error)
}

// Filter is the documents among docs that match expr, in their order: how
// a follower filters what Tail, which knows no filter, returns.
func Filter(ctx context.Context, m Matcher, expr string, docs []*model.IndexDoc) ([]*model.IndexDoc, error) {
	if expr == "" || len(docs) == 0 {
		return docs, nil
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.EventID
	}
	ok, err := m.Match(ctx, expr, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*model.IndexDoc, 0, len(ok))
	for _, d := range docs {
		if ok[d.EventID] {
			out = append(out, d)
		}
	}
	return out, nil
}

// Note says in a line what a ranked search ranked.
func (r Ranking) Note() string {
	switch {
	case r.Window == 0:
		return "ranked every match by relevance"
	case !r.Cut:
		return fmt.Sprintf("ranked all %s matches by relevance", Thousands(int64(r.Ranked)))
	}
	if r.Scanned > 0 {
		return fmt.Sprintf("ranked the %s matches among the newest %s documents holding the words; older documents may match too (--rank-window all ranks every match)",
			Thousands(int64(r.Ranked)), Thousands(int64(r.Scanned)))
	}
	return fmt.Sprintf("ranked the newest %s matches by relevance; older documents may match too (--rank-window all ranks every match)",
		Thousands(int64(r.Window)))
}
