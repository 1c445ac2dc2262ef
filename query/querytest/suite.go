package querytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// Harness connects the suite to a backend. Run must start with an empty
// index.
type Harness struct {
	// Write indexes docs, in order: the order of the calls and of each
	// slice is the ingestion order. It fails t on any error.
	Write func(t testing.TB, docs []*model.IndexDoc)
	// Settle makes everything written visible to queries (an OpenSearch
	// refresh); nil when writes are visible at once.
	Settle func(t testing.TB)
	// Open opens a reader over the index; the suite closes it.
	Open func(t testing.TB, opts query.Options) query.Reader
}

// Size is the number of documents the suite writes (about: Generate adds
// a turn or two).
const Size = 300

type suite struct {
	h    Harness
	docs []*model.IndexDoc // everything written, in ingestion order
	all  query.Reader
	ctx  context.Context
}

// Run runs the contract suite against h.
func Run(t *testing.T, h Harness) {
	s := &suite{h: h, docs: Generate(time.Now(), Size), ctx: context.Background()}
	first := len(s.docs) * 5 / 6

	// Written in batches of different sizes.
	for i := 0; i < first; {
		n := min(1+i%37, first-i)
		h.Write(t, s.docs[i:i+n])
		i += n
	}
	s.settle(t)
	s.all = h.Open(t, query.Options{})
	defer s.all.Close()
	start, err := s.all.TailStart(s.ctx)
	if err != nil {
		t.Fatalf("TailStart: %v", err)
	}
	h.Write(t, s.docs[first:])
	s.settle(t)

	t.Run("Count", s.testCount)
	t.Run("Document", s.testDocument)
	t.Run("Recent", s.testRecent)
	t.Run("Tail", func(t *testing.T) { s.testTail(t, start, first) })
	t.Run("Turn", s.testTurn)
	t.Run("Turns", s.testTurns)
	t.Run("Search", s.testSearch)
	t.Run("Match", s.testMatch)
	t.Run("SearchRanking", s.testRanking)
	t.Run("Similar", s.testSimilar)
	t.Run("Stats", s.testStats)
	t.Run("Order", s.testOrder)
	t.Run("Tenant", s.testTenant)
	t.Run("Errors", s.testErrors)
}

func (s *suite) settle(t testing.TB) {
	if s.h.Settle != nil {
		s.h.Settle(t)
	}
}

func ids(docs []*model.IndexDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.EventID
	}
	return out
}

// diff describes how got differs from want (ordered lists of ids), "" when
// they are equal.
func diff(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("%d ids, want %d; first difference at %d: %s, want %s", len(got), len(want), i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d ids, want %d", len(got), len(want))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// pages lists everything through a paged call, checking the pages.
func pages(t *testing.T, what string, limit int, call func(after query.Cursor, limit int) (query.Page, error)) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	var after query.Cursor
	for n := 0; ; n++ {
		p, err := call(after, limit)
		if err != nil {
			t.Fatalf("%s page %d: %v", what, n, err)
		}
		if len(p.Docs) > limit {
			t.Fatalf("%s page %d: %d docs, limit %d", what, n, len(p.Docs), limit)
		}
		for _, d := range p.Docs {
			if seen[d.EventID] {
				t.Fatalf("%s page %d: %s again", what, n, d.EventID)
			}
			seen[d.EventID] = true
			out = append(out, d.EventID)
		}
		if p.Next == "" {
			return out
		}
		if len(p.Docs) == 0 {
			t.Fatalf("%s page %d: empty page with a next cursor", what, n)
		}
		if n > 1000 {
			t.Fatalf("%s: too many pages", what)
		}
		after = p.Next
	}
}

func (s *suite) testCount(t *testing.T) {
	n, err := s.all.Count(s.ctx)
	if err != nil || n != int64(len(s.docs)) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(s.docs))
	}
}

// sameDoc compares a returned document with the written one (ingested_at
// is the backend's; the embedding at float32 precision, which is what the
// embedded index keeps: the archive keeps the event's JSON numbers).
func sameDoc(got, want *model.IndexDoc) string {
	g, w := *got, *want
	g.IngestedAt, w.IngestedAt = "", ""
	g.Embedding, w.Embedding = float32s(g.Embedding), float32s(w.Embedding)
	var gs, ws bytes.Buffer
	_ = json.Compact(&gs, g.Structured)
	_ = json.Compact(&ws, w.Structured)
	g.Structured, w.Structured = gs.Bytes(), ws.Bytes()
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if !bytes.Equal(gj, wj) {
		return fmt.Sprintf("got  %s\nwant %s", gj, wj)
	}
	return ""
}

func (s *suite) testDocument(t *testing.T) {
	for _, want := range s.docs {
		got, err := s.all.Document(s.ctx, want.EventID)
		if err != nil {
			t.Fatalf("Document(%s): %v", want.EventID, err)
		}
		if d := sameDoc(got, want); d != "" {
			t.Errorf("Document(%s):\n%s", want.EventID, d)
		}
	}
	for _, id := range []string{"no-such-event", "", "evt-%", "EVT-00001"} {
		if _, err := s.all.Document(s.ctx, id); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("Document(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func (s *suite) testRecent(t *testing.T) {
	for _, src := range []string{"", "tag:demo", "memory", "-type:user_input success:false", "tenant:" + TenantB + " importance>=0.5"} {
		e := mustParse(t, src)
		for _, limit := range []int{1, 7, 50, 1000} {
			got := pages(t, fmt.Sprintf("Recent(%q)", src), limit, func(after query.Cursor, limit int) (query.Page, error) {
				return s.all.Recent(s.ctx, src, after, limit)
			})
			want := ids(reversed(filter(s.docs, e, time.Now())))
			if d := diff(got, want); d != "" {
				t.Errorf("Recent(%q) limit %d: %s", src, limit, d)
			}
		}
	}
}

func (s *suite) testTail(t *testing.T, start query.Cursor, first int) {
	want := ids(s.docs[first:])
	p, err := s.all.Tail(s.ctx, start, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(ids(p.Docs), want); d != "" {
		t.Fatalf("Tail(TailStart before the last %d writes): %s", len(want), d)
	}
	again, err := s.all.Tail(s.ctx, p.Next, 10)
	if err != nil || len(again.Docs) != 0 || again.Next != p.Next {
		t.Errorf("Tail at the end = %d docs, next changed %v, %v; want nothing, the same cursor", len(again.Docs), again.Next != p.Next, err)
	}
	end, err := s.all.TailStart(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.all.Tail(s.ctx, end, 10); err != nil || len(p.Docs) != 0 {
		t.Errorf("Tail(TailStart) = %d docs, %v; want none", len(p.Docs), err)
	}
	// Polling in small steps from the start sees everything, in order.
	var got []string
	cur := query.Cursor("")
	for range 1000 {
		p, err := s.all.Tail(s.ctx, cur, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Docs) > 7 {
			t.Fatalf("Tail returned %d docs, limit 7", len(p.Docs))
		}
		if len(p.Docs) == 0 {
			break
		}
		got = append(got, ids(p.Docs)...)
		cur = p.Next
	}
	if d := diff(got, ids(s.docs)); d != "" {
		t.Errorf("Tail from the start: %s", d)
	}
}

func (s *suite) turnKeys(docs []*model.IndexDoc) []string {
	var keys []string
	seen := map[string]bool{}
	for _, d := range docs {
		if !seen[d.TurnKey()] {
			seen[d.TurnKey()] = true
			keys = append(keys, d.TurnKey())
		}
	}
	return keys
}

func (s *suite) testTurn(t *testing.T) {
	inverted, equal := 0, 0
	for _, key := range s.turnKeys(s.docs) {
		want := causal(s.docs, key)
		got, err := s.all.Turn(s.ctx, key)
		if err != nil {
			t.Fatalf("Turn(%s): %v", key, err)
		}
		if d := diff(ids(got), ids(want)); d != "" {
			t.Errorf("Turn(%s): %s", key, d)
		}
		for i := 1; i < len(want); i++ {
			a, b := millis(want[i-1].Timestamp), millis(want[i].Timestamp)
			if a > b {
				inverted++
			}
			if a == b {
				equal++
			}
		}
	}
	if inverted == 0 || equal == 0 {
		t.Errorf("the data set has %d inverted and %d equal timestamps within turns; want some of each", inverted, equal)
	}
	if _, err := s.all.Turn(s.ctx, "no-such-turn"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Turn(unknown) = %v, want ErrNotFound", err)
	}
}

func turnString(r query.TurnSummary) string {
	return fmt.Sprintf("{%s session=%s agent=%s tenant=%s events=%d first=%s last=%s failed=%v max=%v failures=%d successes=%d latency=%d summary=%q}",
		r.Key, r.SessionID, r.AgentID, r.TenantID, r.Events, r.First.UTC().Format(time.RFC3339Nano),
		r.Last.UTC().Format(time.RFC3339Nano), r.AnyFailed, r.MaxImportance, r.Failures, r.Successes, r.LatencyMs, r.Summary)
}

func sameTurn(a, b query.TurnSummary) bool {
	return a.Key == b.Key && a.SessionID == b.SessionID && a.AgentID == b.AgentID && a.TenantID == b.TenantID &&
		a.Events == b.Events && a.First.Equal(b.First) && a.Last.Equal(b.Last) && a.AnyFailed == b.AnyFailed &&
		math.Abs(a.MaxImportance-b.MaxImportance) < 1e-6 &&
		a.Failures == b.Failures && a.Successes == b.Successes && a.LatencyMs == b.LatencyMs && a.Summary == b.Summary
}

// checkTurns pages through r.Turns(src) and compares with the reference
// over docs (the reader's visible documents): the turns with a match, with
// their whole totals.
func (s *suite) checkTurns(t *testing.T, r query.Reader, docs []*model.IndexDoc, src string, limit int) {
	t.Helper()
	want := wholeTurns(turnRows(filter(docs, mustParse(t, src), time.Now())), docs)
	var got []query.TurnSummary
	var after query.Cursor
	for n := 0; ; n++ {
		p, err := r.Turns(s.ctx, src, after, limit)
		if err != nil {
			t.Fatalf("Turns(%q) page %d: %v", src, n, err)
		}
		if len(p.Turns) > limit {
			t.Fatalf("Turns(%q) page %d: %d rows, limit %d", src, n, len(p.Turns), limit)
		}
		got = append(got, p.Turns...)
		if p.Next == "" || n > 1000 {
			break
		}
		if len(p.Turns) == 0 {
			t.Fatalf("Turns(%q) page %d: empty page with a next cursor", src, n)
		}
		after = p.Next
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("Turns(%q) limit %d: %d rows, want %d; missing %s", src, limit, len(got), len(want), turnString(want[i]))
			return
		case i >= len(want):
			t.Errorf("Turns(%q) limit %d: %d rows, want %d; extra %s", src, limit, len(got), len(want), turnString(got[i]))
			return
		case !sameTurn(got[i], want[i]):
			t.Errorf("Turns(%q) limit %d row %d:\n got %s\nwant %s", src, limit, i, turnString(got[i]), turnString(want[i]))
			return
		}
	}
}

func (s *suite) testTurns(t *testing.T) {
	for _, src := range []string{"", "tag:demo", "success:false", "agent:agent-a importance>=0.5", topWord,
		"-tenant:" + TenantA, "since:1d", "type:" + model.TypeToolResult, "turn:" + sharedTrace} {
		for _, limit := range []int{1, 4, 1000} {
			s.checkTurns(t, s.all, s.docs, src, limit)
		}
	}
	// Some turns failed, some have several events.
	var failed, multi bool
	for _, r := range turnRows(s.docs) {
		failed = failed || r.AnyFailed
		multi = multi || r.Events > 2
	}
	if !failed || !multi {
		t.Error("the data set lacks failed or multi-event turns")
	}
	s.checkWholeTurns(t)
}

func mustParse(t testing.TB, src string) *expr.Expr {
	t.Helper()
	e, err := expr.Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return e
}

// searchExprs is one or more expressions for every construct of the
// language.
func (s *suite) searchExprs() []string {
	now := time.Now().UTC()
	d := s.docs[len(s.docs)/3]
	var turnDoc, sourceDoc, traced *model.IndexDoc
	for _, x := range s.docs {
		if x.TraceID != "" && x.TraceID != sharedTrace && traced == nil {
			traced = x
		}
		if x.TurnID != "" && turnDoc == nil {
			turnDoc = x
		}
		if x.TurnID == "" && x.TraceID == "" && sourceDoc == nil {
			sourceDoc = x
		}
	}
	return []string{
		"",
		"memory", "Memory", "memory agent", "MEMORY -agent", `"` + phrase + `"`, phrase, `-"` + phrase + `"`,
		"-memory", uniqueWord, topWord, "nosuchword", `"!!!"`, `-"!!!"`, `"Falcon, HARBOR!"`,
		"type:" + model.TypeToolResult, "type:" + model.TypeObservation, "-type:" + model.TypeUserInput,
		"session:sess-2", "-session:sess-2",
		"turn:" + turnDoc.TurnKey(), "turn:" + sourceDoc.EventID, "turn:" + sharedTrace,
		"agent:agent-a", "-agent:agent-a",
		"tenant:" + TenantA, "-tenant:" + TenantA, "tenant:nobody",
		"trace:" + sharedTrace, "trace:" + traced.TraceID, "-trace:" + sharedTrace,
		`tool:"web search"`, "tool:search", "-tool:search",
		"tag:demo", "-tag:demo", "tag:demo tag:prod", "tag:demo -tag:prod",
		"id:" + d.EventID, "-id:" + d.EventID,
		"source:system", "source:ambient", "source:session", "-source:system", "source:system type:" + model.TypeUserInput,
		"source:system -tenant:" + TenantA, "-source:ambient -source:session",
		"success:true", "success:false", "-success:true", "-success:false",
		"importance>=0.7", "importance>0.7", "importance=0.79", "importance<0.25", "importance<=0.25", "-importance<0.5",
		"reward<0.3", "reward>=0.5", "confidence>=0.8", "confidence=0.5",
		"latency>500", "latency<=500", "latency=500", "-latency>500",
		"since:45m", "since:6h", "since:1d", "since:2d", "until:1d", "since:2d until:1d", "since:1d until:2d", "-since:1d",
		"since:" + now.Add(-24*time.Hour).Format(time.DateOnly),
		"until:" + now.Add(-20*time.Hour).In(time.FixedZone("", 3*3600)).Format(time.RFC3339),
		"memory since:2d tag:demo", "agent:agent-b type:" + model.TypeAction + " -success:false",
		topWord + " importance>=0.5", "planner -tag:demo tenant:" + TenantB,
	}
}

func (s *suite) testSearch(t *testing.T) {
	nonEmpty := 0
	for _, src := range s.searchExprs() {
		e := mustParse(t, src)
		now := time.Now()
		got := pages(t, fmt.Sprintf("Search(%q)", src), 11, func(after query.Cursor, limit int) (query.Page, error) {
			return s.all.Search(s.ctx, src, after, limit)
		})
		want := ids(reversed(filter(s.docs, e, now)))
		if len(want) > 0 && len(want) < len(s.docs) {
			nonEmpty++
		} else if strings.HasPrefix(src, "source:") {
			t.Errorf("Search(%q) selects %d of %d documents: the data set should give it some", src, len(want), len(s.docs))
		}
		if e.HasText() {
			if d := diff(sorted(got), sorted(want)); d != "" {
				t.Errorf("Search(%q), as sets: %s", src, d)
			}
		} else if d := diff(got, want); d != "" {
			t.Errorf("Search(%q): %s", src, d)
		}
	}
	if nonEmpty < len(s.searchExprs())/2 {
		t.Errorf("only %d expressions select some but not all documents", nonEmpty)
	}
}

// testMatch asks, for every expression, which of a spread of documents
// match it (with ids that do not exist and repeats among them).
func (s *suite) testMatch(t *testing.T) {
	var asked []string
	for i := 0; i < len(s.docs); i += 3 {
		asked = append(asked, s.docs[i].EventID)
	}
	asked = append(asked, "no-such-event", s.docs[0].EventID)
	for _, src := range s.searchExprs() {
		e := mustParse(t, src)
		got, err := s.all.Match(s.ctx, src, asked)
		if err != nil {
			t.Fatalf("Match(%q): %v", src, err)
		}
		var want []string
		for _, d := range filter(s.docs, e, time.Now()) {
			if slices.Contains(asked, d.EventID) {
				want = append(want, d.EventID)
			}
		}
		if d := diff(sorted(slices.Collect(maps.Keys(got))), sorted(want)); d != "" {
			t.Errorf("Match(%q): %s", src, d)
		}
	}
	if got, err := s.all.Match(s.ctx, "", nil); err != nil || len(got) != 0 {
		t.Errorf("Match of no ids = %v, %v; want none", got, err)
	}
}

func (s *suite) testRanking(t *testing.T) {
	top := ""
	n := 0
	for _, d := range s.docs {
		if c := strings.Count(d.Summary, topWord); c == 3 {
			top = d.EventID
		} else if c > 0 {
			n++
		}
	}
	if top == "" || n == 0 {
		t.Fatal("the data set lacks its ranking documents")
	}
	for _, src := range []string{topWord, strings.ToUpper(topWord), topWord + " -nosuchword"} {
		p, err := s.all.Search(s.ctx, src, "", 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Docs) == 0 || p.Docs[0].EventID != top {
			t.Errorf("Search(%q) top hit = %v, want %s (the summary with the word three times)", src, ids(p.Docs), top)
		}
	}
	p, err := s.all.Search(s.ctx, uniqueWord, "", 10)
	if err != nil || len(p.Docs) != 1 || !strings.Contains(p.Docs[0].Summary, uniqueWord) || p.Next != "" {
		t.Errorf("Search(%q) = %v, %v; want the one document", uniqueWord, ids(p.Docs), err)
	}
	// A ranked search says what it ranked; here every match (the data set
	// is smaller than any window), so nothing was cut.
	if p.Ranking == nil || p.Ranking.Cut || p.Ranking.Window > 0 && p.Ranking.Ranked != 1 {
		t.Errorf("Search(%q) ranking = %+v; want one of every match, not cut", uniqueWord, p.Ranking)
	}
	if p, err := s.all.Search(s.ctx, "type:"+model.TypeToolResult, "", 3); err != nil || p.Ranking != nil {
		t.Errorf("Search without words: ranking %+v, %v; want none (newest first)", p.Ranking, err)
	}
}

func (s *suite) checkSimilar(t *testing.T, r query.Reader, docs []*model.IndexDoc, target *model.IndexDoc, k int) {
	t.Helper()
	got, err := r.Similar(s.ctx, target.EventID, k)
	if err != nil {
		t.Fatalf("Similar(%s): %v", target.EventID, err)
	}
	var want []float64
	for _, d := range docs {
		if d.EventID != target.EventID {
			want = append(want, Cosine(target.Embedding, d.Embedding))
		}
	}
	slices.Sort(want)
	slices.Reverse(want)
	if len(got) != min(k, len(want)) {
		t.Fatalf("Similar(%s, %d): %d results, want %d", target.EventID, k, len(got), min(k, len(want)))
	}
	vis := map[string]bool{}
	for _, d := range docs {
		vis[d.EventID] = true
	}
	for i, sc := range got {
		if sc.Doc == nil || sc.Doc.EventID == target.EventID || !vis[sc.Doc.EventID] {
			t.Fatalf("Similar(%s) result %d: %v is not another visible document", target.EventID, i, sc.Doc)
		}
		c := Cosine(target.Embedding, sc.Doc.Embedding)
		if math.Abs(c-want[i]) > 1e-4 {
			t.Errorf("Similar(%s) result %d: %s at cosine %.5f, want the neighbour at %.5f", target.EventID, i, sc.Doc.EventID, c, want[i])
		}
		if i > 0 && sc.Score > got[i-1].Score {
			t.Errorf("Similar(%s): scores increase at %d", target.EventID, i)
		}
	}
}

func (s *suite) testSimilar(t *testing.T) {
	for _, i := range []int{0, 17, len(s.docs) / 2, len(s.docs) - 1} {
		s.checkSimilar(t, s.all, s.docs, s.docs[i], 5)
	}
	s.checkSimilar(t, s.all, s.docs, s.docs[3], 1)
	if _, err := s.all.Similar(s.ctx, "no-such-event", 5); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Similar(unknown) = %v, want ErrNotFound", err)
	}
}

func (s *suite) testTenant(t *testing.T) {
	r := s.h.Open(t, query.Options{Tenant: TenantA})
	defer r.Close()
	vis := visible(s.docs, TenantA)
	if len(vis) == 0 || len(vis) == len(s.docs) {
		t.Fatal("the data set lacks tenants")
	}
	if n, err := r.Count(s.ctx); err != nil || n != int64(len(vis)) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(vis))
	}
	got := pages(t, "Recent", 13, func(after query.Cursor, limit int) (query.Page, error) { return r.Recent(s.ctx, "", after, limit) })
	if d := diff(got, ids(reversed(vis))); d != "" {
		t.Errorf("Recent: %s", d)
	}
	for _, src := range []string{"tenant:" + TenantB, "-tenant:" + TenantA, "memory", "tag:demo", "-tag:demo", "trace:" + sharedTrace} {
		got := pages(t, "Search", 13, func(after query.Cursor, limit int) (query.Page, error) { return r.Search(s.ctx, src, after, limit) })
		if d := diff(sorted(got), sorted(ids(filter(vis, mustParse(t, src), time.Now())))); d != "" {
			t.Errorf("Search(%q): %s", src, d)
		}
	}
	p, err := r.Tail(s.ctx, "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(ids(p.Docs), ids(vis)); d != "" {
		t.Errorf("Tail: %s", d)
	}
	for _, src := range []string{"", "success:false", "turn:" + sharedTrace} {
		s.checkTurns(t, r, vis, src, 6)
	}
	shared, err := r.Turn(s.ctx, sharedTrace)
	if err != nil || len(shared) != 1 || shared[0].TenantID != TenantA {
		t.Errorf("Turn(%s) = %d docs, %v; want its one %s document", sharedTrace, len(shared), err, TenantA)
	}
	for _, d := range s.docs {
		if d.TenantID == TenantA {
			continue
		}
		if _, err := r.Document(s.ctx, d.EventID); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("Document(%s of tenant %q) = %v, want ErrNotFound", d.EventID, d.TenantID, err)
		}
		if _, err := r.Similar(s.ctx, d.EventID, 3); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("Similar(%s of tenant %q) = %v, want ErrNotFound", d.EventID, d.TenantID, err)
		}
		if d.TenantID == TenantB && d.TurnKey() != sharedTrace {
			if _, err := r.Turn(s.ctx, d.TurnKey()); !errors.Is(err, backend.ErrNotFound) {
				t.Fatalf("Turn(%s of tenant %q) = %v, want ErrNotFound", d.TurnKey(), d.TenantID, err)
			}
		}
	}
	s.checkSimilar(t, r, vis, vis[len(vis)/2], 7)
	for _, d := range vis[:5] {
		got, err := r.Document(s.ctx, d.EventID)
		if err != nil || got.EventID != d.EventID {
			t.Errorf("Document(%s) = %v", d.EventID, err)
		}
	}
}

func (s *suite) testErrors(t *testing.T) {
	var se *expr.SyntaxError
	if _, err := s.all.Search(s.ctx, "importance>=high", "", 10); !errors.As(err, &se) || se.Col != 13 {
		t.Errorf("Search(bad expression) = %v, want a *expr.SyntaxError at column 13", err)
	}
	if _, err := s.all.Recent(s.ctx, "foo:bar", "", 10); !errors.As(err, &se) {
		t.Errorf("Recent(bad expression) = %v, want a *expr.SyntaxError", err)
	}
	if _, err := s.all.Turns(s.ctx, `"open`, "", 10); !errors.As(err, &se) {
		t.Errorf("Turns(bad expression) = %v, want a *expr.SyntaxError", err)
	}
	for _, c := range []query.Cursor{"!!not a cursor!!", "AAAA"} {
		if _, err := s.all.Recent(s.ctx, "", c, 10); err == nil {
			t.Errorf("Recent(cursor %q) did not fail", c)
		}
		if _, err := s.all.Tail(s.ctx, c, 10); err == nil {
			t.Errorf("Tail(cursor %q) did not fail", c)
		}
		if _, err := s.all.Search(s.ctx, "memory", c, 10); err == nil {
			t.Errorf("Search(cursor %q) did not fail", c)
		}
	}
	if _, err := s.all.Match(s.ctx, "tag:", []string{s.docs[0].EventID}); !errors.As(err, &se) {
		t.Errorf("Match(bad expression) = %v, want a *expr.SyntaxError", err)
	}
	if s.all.Describe() == "" {
		t.Error("Describe is empty")
	}
}

// float32s is v rounded to float32 precision (nil stays nil).
func float32s(v []float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}
