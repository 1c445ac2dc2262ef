package osindex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// Page sizes: a limit <= 0 asks for defaultLimit; larger limits are cut to
// maxLimit (maxTailLimit for Tail, maxTurnsLimit for Turns).
const (
	defaultLimit = 100
	// maxLimit keeps a page and the one more document that tells whether
	// there is a next page within index.max_result_window (10,000).
	maxLimit      = 9999
	maxTailLimit  = 10000
	maxTurnsLimit = 1000
	// defaultK is the number of neighbours of Similar when k <= 0.
	defaultK = 10
	// maxWindow is the largest size of one search (index.max_result_window).
	maxWindow = 10000
)

// Reader is a query.Reader over an OpenSearch index. Its methods are safe
// for concurrent use.
type Reader struct {
	ix     *Index
	owned  bool // Close closes ix
	api    *opensearchapi.Client
	index  string
	where  string // "opensearch URL/index", for messages
	tenant string

	knn    bool   // the cluster has the k-NN plugin
	vector bool   // the index maps embedding as a knn_vector
	dim    int    // of that knn_vector
	space  string // its space type ("l2" when the mapping does not say)

	timeout time.Duration
	now     func() time.Time
	// Tail's overlap window and the bound on the ids a tail cursor keeps.
	overlap time.Duration
	seenCap int

	closed atomic.Bool

	coverage coverageCache // see Coverage
}

var _ query.Reader = (*Reader)(nil)

// OpenReader opens the index with Open (which creates it, or adds the
// extension fields an index of the source system lacks) and returns a
// reader over it; Close closes the index too.
func OpenReader(ctx context.Context, cfg Config, opts query.Options) (*Reader, error) {
	ix, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r, err := readerOn(ctx, ix, opts)
	if err != nil {
		_ = ix.Close()
		return nil, err
	}
	r.owned = true
	if cfg.Timeout > 0 {
		r.timeout = cfg.Timeout
	}
	return r, nil
}

// readerOn is a reader over an open index; Close leaves ix open. It reads the
// index's mapping once, for the space type of its knn_vector.
func readerOn(ctx context.Context, ix *Index, opts query.Options) (*Reader, error) {
	r := &Reader{
		ix:      ix,
		api:     ix.Client(),
		index:   ix.Name(),
		where:   ix.Describe(),
		tenant:  opts.Tenant,
		knn:     ix.KNN(),
		vector:  ix.KNN() && ix.VectorSearch(),
		dim:     ix.Dimension(),
		space:   "l2",
		timeout: defaultTimeout,
		now:     time.Now,
		overlap: defaultTailOverlap,
		seenCap: defaultTailSeen,
	}
	if r.vector {
		if err := r.readSpace(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readSpace reads the space type of the embedding's knn_vector.
func (r *Reader) readSpace(ctx context.Context) error {
	var got map[string]struct {
		Mappings struct {
			Properties map[string]struct {
				SpaceType string `json:"space_type"`
				Method    struct {
					SpaceType string `json:"space_type"`
				} `json:"method"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	req := &opensearchapi.MappingGetReq{Indices: []string{r.index}}
	if _, err := r.send(ctx, "read the mapping", http.MethodGet, req, &got); err != nil {
		return err
	}
	for _, m := range got {
		e := m.Mappings.Properties[fEmbedding]
		s := e.Method.SpaceType
		if s == "" {
			s = e.SpaceType
		}
		if s == "" {
			s = "l2"
		}
		if s != "cosinesimil" {
			r.space = s // one index behind an alias that is not cosine decides
			return nil
		}
		r.space = s
	}
	return nil
}

// Describe names the cluster, the index and the tenant scope.
func (r *Reader) Describe() string {
	if r.tenant != "" {
		return r.where + " (tenant " + model.Quote(r.tenant) + ")"
	}
	return r.where
}

// Close closes the index when Open opened it. Later calls fail.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	if r.owned {
		return r.ix.Close()
	}
	return nil
}

func pageLimit(limit, max int) int {
	if limit <= 0 {
		return min(defaultLimit, max)
	}
	return min(limit, max)
}

func parse(s string) (*expr.Expr, error) {
	return expr.Parse(s) // a *expr.SyntaxError as is: its column is the caller's
}

// decodeDoc reads a document's _source.
func (r *Reader) decodeDoc(op string, h *hit) (*model.IndexDoc, error) {
	d := new(model.IndexDoc)
	if err := json.Unmarshal(h.Source, d); err != nil {
		return nil, r.fail(op, fmt.Errorf("document %s: %w", model.Quote(h.ID), err))
	}
	if d.Embedding == nil {
		d.Embedding = []float64{}
	}
	if d.EventID == "" {
		d.EventID = h.ID
	}
	return d, nil
}

func (r *Reader) decodeDocs(op string, ps []placed) ([]*model.IndexDoc, error) {
	docs := make([]*model.IndexDoc, len(ps))
	for i, p := range ps {
		d, err := r.decodeDoc(op, p.hit)
		if err != nil {
			return nil, err
		}
		docs[i] = d
	}
	return docs, nil
}

// Recent is the newest documents first, by ingestion order.
func (r *Reader) Recent(ctx context.Context, s string, after query.Cursor, limit int) (query.Page, error) {
	e, err := parse(s)
	if err != nil {
		return query.Page{}, err
	}
	return r.newest(ctx, "recent", translate(e, r.now(), r.tenant, false), after, limit)
}

// newest is the documents matching q, newest first, after the cursor.
func (r *Reader) newest(ctx context.Context, op string, q obj, after query.Cursor, limit int) (query.Page, error) {
	from, err := parsePos(after, kindRecent)
	if err != nil {
		return query.Page{}, err
	}
	limit = pageLimit(limit, maxLimit)
	ps, err := r.list(ctx, listing{op: op, query: q, desc: true, after: from, size: limit + 1, bounded: true})
	if err != nil {
		return query.Page{}, err
	}
	return r.page(op, ps, limit, kindRecent)
}

// page is the first limit hits of ps, with a cursor when there are more.
func (r *Reader) page(op string, ps []placed, limit int, kind byte) (query.Page, error) {
	var next query.Cursor
	if len(ps) > limit {
		ps = ps[:limit]
		next = posCursor(kind, ps[limit-1].pos)
	}
	docs, err := r.decodeDocs(op, ps)
	if err != nil {
		return query.Page{}, err
	}
	return query.Page{Docs: docs, Next: next}, nil
}

// Search is the documents matching s: ranked by relevance (BM25 on
// summary, ties newest first) when s has free words, else newest first.
func (r *Reader) Search(ctx context.Context, s string, after query.Cursor, limit int) (query.Page, error) {
	e, err := parse(s)
	if err != nil {
		return query.Page{}, err
	}
	if !e.HasText() {
		return r.newest(ctx, "search", translate(e, r.now(), r.tenant, false), after, limit)
	}
	from, err := parsePos(after, kindScored)
	if err != nil {
		return query.Page{}, err
	}
	limit = pageLimit(limit, maxLimit)
	ps, err := r.list(ctx, listing{op: "search", query: translate(e, r.now(), r.tenant, true),
		desc: true, scored: true, after: from, size: limit + 1})
	if err != nil {
		return query.Page{}, err
	}
	pg, err := r.page("search", ps, limit, kindScored)
	// Every match is ranked: OpenSearch's top-k retrieval (with
	// track_total_hits off) skips the documents that cannot make the page,
	// so the cost does not grow with the matches as SQLite's does.
	pg.Ranking = &query.Ranking{}
	return pg, err
}

// maxIDBytes is the longest document id OpenSearch takes.
const maxIDBytes = 512

// Document is one index document by event id (a real-time GET: it sees a
// document before the refresh that makes it searchable).
func (r *Reader) Document(ctx context.Context, eventID string) (*model.IndexDoc, error) {
	notFound := fmt.Errorf("event %s: %w", model.Quote(eventID), backend.ErrNotFound)
	if eventID == "" || len(eventID) > maxIDBytes || !utf8.ValidString(eventID) {
		return nil, notFound
	}
	var ans struct {
		Found  bool            `json:"found"`
		Source json.RawMessage `json:"_source"`
	}
	op := "get event " + model.Quote(eventID)
	status, err := r.send(ctx, op, http.MethodGet, opensearchapi.DocumentGetReq{Index: r.index, DocumentID: eventID}, &ans)
	if status == http.StatusNotFound {
		var se *StatusError
		if errors.As(err, &se) && se.Cause == nil { // no such document; a missing index has a cause
			return nil, notFound
		}
	}
	if err != nil {
		return nil, err
	}
	if !ans.Found {
		return nil, notFound
	}
	d, err := r.decodeDoc(op, &hit{ID: eventID, Source: ans.Source})
	if err != nil {
		return nil, err
	}
	if r.tenant != "" && d.TenantID != r.tenant {
		return nil, notFound
	}
	return d, nil
}

// Count is how many documents the reader sees (as of the last refresh).
func (r *Reader) Count(ctx context.Context) (int64, error) {
	body, _ := json.Marshal(obj{"query": translate(nil, time.Time{}, r.tenant, false)})
	var ans struct {
		Count int64 `json:"count"`
	}
	req := &opensearchapi.IndicesCountReq{Indices: []string{r.index}, Body: bytes.NewReader(body)}
	if _, err := r.send(ctx, "count", http.MethodPost, req, &ans); err != nil {
		return 0, err
	}
	return ans.Count, nil
}
