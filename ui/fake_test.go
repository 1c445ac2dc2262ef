package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
)

// memReader is an in-memory query reader for unit tests: documents in
// ingestion order, cursors are positions, filters a tiny field:value
// language (type:, agent:, session:, turn:; other words match the summary).
type memReader struct {
	mu    sync.Mutex
	docs  []*model.IndexDoc
	delay time.Duration
	calls map[string]int
	// afterTail, when set, runs once after the next Tail has read (an
	// agent writing between two calls of a poll).
	afterTail func()
}

func (r *memReader) add(ds ...*model.IndexDoc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.docs = append(r.docs, ds...)
}

func (r *memReader) note(call string) {
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[call]++
}

type colErr struct {
	col int
	msg string
}

func (e colErr) Error() string { return e.msg }
func (e colErr) Column() int   { return e.col }

// matcher compiles expr; an unknown field is a syntax error at its column.
func matcher(expr string) (func(*model.IndexDoc) bool, error) {
	var tests []func(*model.IndexDoc) bool
	col := 1
	for _, w := range strings.Split(expr, " ") {
		if w == "" {
			col++
			continue
		}
		field, val, ok := strings.Cut(w, ":")
		if !ok {
			word := strings.ToLower(w)
			tests = append(tests, func(d *model.IndexDoc) bool { return strings.Contains(strings.ToLower(d.Summary), word) })
		} else if t, ok := timeTest(field, val); ok {
			tests = append(tests, t)
		} else if field == "tag" { // the detail's links: tag:"replaces:ID"
			tag := strings.Trim(val, `"`)
			tests = append(tests, func(d *model.IndexDoc) bool { return slices.Contains(d.Tags, tag) })
		} else {
			val = strings.Trim(val, `"`) // quoted by ArchiveTurns' window search
			get := map[string]func(*model.IndexDoc) string{
				"type":    func(d *model.IndexDoc) string { return d.EventType },
				"agent":   func(d *model.IndexDoc) string { return d.AgentID },
				"session": func(d *model.IndexDoc) string { return d.SessionID },
				"tool":    func(d *model.IndexDoc) string { return d.Tool },
				"turn":    (*model.IndexDoc).TurnKey,
				"success": func(d *model.IndexDoc) string {
					if d.Success == nil {
						return ""
					}
					return strconv.FormatBool(*d.Success)
				},
			}[field]
			if get == nil {
				return nil, colErr{col, fmt.Sprintf("unknown field %q", field)}
			}
			tests = append(tests, func(d *model.IndexDoc) bool { return get(d) == val })
		}
		col += len(w) + 1
	}
	return func(d *model.IndexDoc) bool {
		for _, t := range tests {
			if !t(d) {
				return false
			}
		}
		return true
	}, nil
}

// timeTest is since:/until: with an RFC 3339 time (what ArchiveTurns asks).
func timeTest(field, val string) (func(*model.IndexDoc) bool, bool) {
	at, err := time.Parse(time.RFC3339Nano, val)
	if err != nil || field != "since" && field != "until" {
		return nil, false
	}
	return func(d *model.IndexDoc) bool {
		ts, err := time.Parse(time.RFC3339Nano, d.Timestamp)
		if err != nil {
			return false
		}
		if field == "since" {
			return !ts.Before(at)
		}
		return ts.Before(at)
	}, true
}

// Search is Recent (no ranking here).
func (r *memReader) Search(ctx context.Context, expr string, after query.Cursor, limit int) (query.Page, error) {
	return r.Recent(ctx, expr, after, limit)
}

func (r *memReader) Describe() string { return "memory" }
func (r *memReader) Close() error     { return nil }

func (r *memReader) Recent(ctx context.Context, expr string, after query.Cursor, limit int) (query.Page, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.note("Recent")
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	match, err := matcher(expr)
	if err != nil {
		return query.Page{}, err
	}
	start := len(r.docs) - 1
	if after != "" {
		n, _ := strconv.Atoi(string(after))
		start = n - 1
	}
	var p query.Page
	i := start
	for ; i >= 0 && len(p.Docs) < limit; i-- {
		if match(r.docs[i]) {
			p.Docs = append(p.Docs, r.docs[i])
		}
	}
	if i >= 0 {
		p.Next = query.Cursor(strconv.Itoa(i + 1))
	}
	return p, nil
}

func (r *memReader) TailStart(context.Context) (query.Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return query.Cursor(strconv.Itoa(len(r.docs))), nil
}

func (r *memReader) Tail(_ context.Context, after query.Cursor, limit int) (query.Page, error) {
	r.mu.Lock()
	r.note("Tail")
	n, _ := strconv.Atoi(string(after))
	end := min(len(r.docs), n+limit)
	docs := append([]*model.IndexDoc(nil), r.docs[n:end]...)
	f := r.afterTail
	r.afterTail = nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
	return query.Page{Docs: docs, Next: query.Cursor(strconv.Itoa(end))}, nil
}

func (r *memReader) Match(_ context.Context, expr string, ids []string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.note("Match")
	match, err := matcher(expr)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range r.docs {
		if match(d) && slices.Contains(ids, d.EventID) {
			out[d.EventID] = true
		}
	}
	return out, nil
}

func (r *memReader) Turns(_ context.Context, expr string, after query.Cursor, limit int) (query.TurnPage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	match, err := matcher(expr)
	if err != nil {
		return query.TurnPage{}, err
	}
	byKey := map[string]*query.TurnSummary{}
	var order []string
	for i := len(r.docs) - 1; i >= 0; i-- {
		d := r.docs[i]
		if !match(d) {
			continue
		}
		k := d.TurnKey()
		t := byKey[k]
		ts, _ := time.Parse(time.RFC3339Nano, d.Timestamp)
		if t == nil {
			t = &query.TurnSummary{Key: k, SessionID: d.SessionID, AgentID: d.AgentID, First: ts, Last: ts}
			byKey[k] = t
			order = append(order, k)
		}
		t.Events++
		if t.Summary == "" || d.Phase() == model.PhaseObservation { // the oldest observation's, walking back
			t.Summary = d.Summary
		}
		t.AnyFailed = t.AnyFailed || d.Success != nil && !*d.Success
		t.MaxImportance = max(t.MaxImportance, d.ImportanceScore)
		if ts.Before(t.First) {
			t.First = ts
		}
		if ts.After(t.Last) {
			t.Last = ts
		}
	}
	start, _ := strconv.Atoi(string(after))
	var p query.TurnPage
	for i := start; i < len(order) && len(p.Turns) < limit; i++ {
		p.Turns = append(p.Turns, *byKey[order[i]])
		if i+1 < len(order) && len(p.Turns) == limit {
			p.Next = query.Cursor(strconv.Itoa(i + 1))
		}
	}
	return p, nil
}

func (r *memReader) Turn(_ context.Context, key string) ([]*model.IndexDoc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*model.IndexDoc
	for _, d := range r.docs {
		if d.TurnKey() == key {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Phase() != out[j].Phase() {
			return out[i].Phase() < out[j].Phase()
		}
		if out[i].Timestamp != out[j].Timestamp {
			return out[i].Timestamp < out[j].Timestamp
		}
		return out[i].EventID < out[j].EventID
	})
	return out, nil
}

func (r *memReader) Document(_ context.Context, id string) (*model.IndexDoc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.docs {
		if d.EventID == id {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", id, backend.ErrNotFound)
}

func (r *memReader) Count(context.Context) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.docs)), nil
}

// memArchive is an archive in memory; block, when set, holds every Get
// until its context ends (a slow store).
type memArchive struct {
	mu        sync.Mutex
	objs      map[string][]byte
	block     bool
	fail      error
	cancelled int // Gets that ended because their context did
}

func (a *memArchive) put(key string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.objs == nil {
		a.objs = map[string][]byte{}
	}
	a.objs[key] = body
}

func (a *memArchive) Get(ctx context.Context, key string, limit int64) (*ingest.Object, error) {
	a.mu.Lock()
	block, fail, body, ok := a.block, a.fail, a.objs[key], a.objs[key] != nil
	a.mu.Unlock()
	if block {
		// Parked on purpose: the harness does not wait for this command.
		p := parkedIn(ctx)
		p.Add(1)
		defer p.Add(-1)
		<-ctx.Done()
		a.mu.Lock()
		a.cancelled++
		a.mu.Unlock()
		return nil, ctx.Err()
	}
	if fail != nil {
		return nil, fail
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, backend.ErrNotFound)
	}
	o := &ingest.Object{Key: key, Body: body, Size: int64(len(body))}
	if limit > 0 && int64(len(body)) > limit {
		o.Body, o.Truncated = body[:limit], true
	}
	return o, nil
}

func (a *memArchive) List(context.Context, string, func(string, int64) error) error { return nil }

// memIndex is an ingest.Index writing into a memReader, so the real
// pipeline can feed the fake reader.
type memIndex struct{ r *memReader }

func (x memIndex) Write(_ context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	res := make([]ingest.IndexResult, len(docs))
	for i, d := range docs {
		if _, err := x.r.Document(context.Background(), d.EventID); err == nil {
			continue
		}
		d.IngestedAt = time.Now().UTC().Format(time.RFC3339Nano)
		x.r.add(d)
		res[i].Created = true
	}
	return res
}
func (memIndex) Name() string     { return model.IndexName }
func (memIndex) Describe() string { return "memory" }
func (memIndex) Close() error     { return nil }

// memStore is an ingest.Archive over a memArchive.
type memStore struct{ a *memArchive }

func (s memStore) Put(_ context.Context, key string, body []byte) (bool, error) {
	s.a.mu.Lock()
	_, exists := s.a.objs[key]
	s.a.mu.Unlock()
	if exists {
		return false, nil
	}
	s.a.put(key, body)
	return true, nil
}
func (memStore) Describe() string { return "memory" }

// testEvent builds event n of a small world: turns of three phases.
func testEvent(n int, base time.Time) *model.Event {
	phase := []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult}[n%3]
	ok := n%7 != 6
	lat := float64(10 + n%50*7)
	ev := &model.Event{
		EventID:   fmt.Sprintf("ev-%06d", n),
		Timestamp: base.Add(time.Duration(n) * time.Second).UTC().Format(time.RFC3339Nano),
		Type:      phase,
		Context: model.Context{SessionID: fmt.Sprintf("s-%d", n/30), AgentID: []string{"planner", "coder", "critic"}[n/3%3],
			TurnID: fmt.Sprintf("turn-%04d", n/3)},
		Input: model.Input{Text: fmt.Sprintf("step %d of turn %d: look at the logs and decide", n%3, n/3)},
		Tags:  []string{"test"},
	}
	if phase != model.TypeUserInput {
		ev.Action = &model.Action{Tool: "shell", Reasoning: "the logs say the disk is full;\nclean the cache first", Parameters: json.RawMessage(`{"cmd":"du -sh"}`)}
	}
	if phase == model.TypeToolResult {
		ev.Result = &model.Result{Output: "freed 2 GB", Success: &ok, LatencyMs: &lat}
	}
	ev.Input.Embedding = model.StubEmbedding(ev.Input.Text, model.StubDimension)
	ev.ImportanceScore = model.Importance(ev)
	ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
	return ev
}

// world fills a reader and an archive with n events.
func world(n int, base time.Time) (*memReader, *memArchive) {
	r, a := &memReader{}, &memArchive{}
	for i := range n {
		ev := testEvent(i, base)
		body, _ := ev.ArchiveJSON()
		a.put(ev.ObjectStorageKey, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
	return r, a
}

// Similar ranks every document by the cosine of its embedding to id's.
func (r *memReader) Similar(_ context.Context, id string, k int) ([]query.Scored, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var of *model.IndexDoc
	for _, d := range r.docs {
		if d.EventID == id {
			of = d
		}
	}
	if of == nil {
		return nil, fmt.Errorf("no event %q", id)
	}
	out := make([]query.Scored, 0, len(r.docs))
	for _, d := range r.docs {
		out = append(out, query.Scored{Doc: d, Score: cosine(of.Embedding, d.Embedding)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out[:min(k, len(out))], nil
}

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range min(len(a), len(b)) {
		ab, aa, bb = ab+a[i]*b[i], aa+a[i]*a[i], bb+b[i]*b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// Stats is query.StatsOf over the documents the filter matches.
func (r *memReader) Stats(_ context.Context, q query.StatsQuery) (*query.Stats, error) {
	match, err := matcher(q.Expr)
	if err != nil {
		return nil, err
	}
	if q, err = q.Resolve(time.Now()); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.note("Stats")
	var docs []*model.IndexDoc
	for _, d := range r.docs {
		if match(d) {
			docs = append(docs, d)
		}
	}
	return query.StatsOf(q, docs), nil
}
