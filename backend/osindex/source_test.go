package osindex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/backend/osindex/ostest"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/querytest"
)

// sourceIndexBody is the source system's own index definition: see
// ostest.SourceIndexBody.
const sourceIndexBody = ostest.SourceIndexBody

// sourceDocs are documents as the source system writes them: none of the
// extension fields, plus fields engram does not know.
func sourceDocs(base time.Time, n int) []*model.IndexDoc {
	types := []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult, model.TypeSystemEvent}
	words := strings.Fields("memory agent planner vector cache kafka bucket index query orchid granite meadow")
	var out []*model.IndexDoc
	for i := range n {
		// Every third document shares the timestamp of the one before.
		ts := base.Add(time.Duration(i-i/3) * 1700 * time.Millisecond)
		id := fmt.Sprintf("src-%03d", (i*37)%n) // ids unrelated to time
		stamp := ts.UTC().Format("2006-01-02T15:04:05.000Z")
		key, _ := model.ArchiveKey(id, stamp)
		emb := make([]float64, 8)
		for k := range emb {
			emb[k] = math.Round(math.Sin(float64(i*8+k+1))*1000) / 1000
		}
		tags := []string{}
		if i%2 == 0 {
			tags = append(tags, "demo")
		}
		agent := ""
		if i%4 != 3 {
			agent = fmt.Sprintf("agent-%d", i%3)
		}
		out = append(out, &model.IndexDoc{
			EventID: id, Timestamp: stamp, EventType: types[i%len(types)],
			SessionID: fmt.Sprintf("sess-%d", i%5), AgentID: agent,
			Summary:   words[i%len(words)] + " " + words[(i*5+1)%len(words)] + " " + words[(i*7+2)%len(words)],
			Embedding: emb, Structured: json.RawMessage(`{}`),
			ImportanceScore: math.Round(float64(i%10)*0.1*1000) / 1000, RewardScore: 0.5, Confidence: 0.5,
			DecayFactor: 1, ObjectStorageKey: key, Tags: tags,
		})
	}
	return out
}

// bulkSource writes docs as the source system does: index actions with the
// event id as document id, the compact document plus its own extra fields.
func bulkSource(t testing.TB, u, index string, docs []*model.IndexDoc) {
	t.Helper()
	var b bytes.Buffer
	for _, d := range docs {
		src, _ := json.Marshal(d)
		var m map[string]any
		if err := json.Unmarshal(src, &m); err != nil {
			t.Fatal(err)
		}
		m["retrieval_priority"] = 0.5
		m["reinforcement_score"] = 0
		m["embedding_meta"] = map[string]any{"model": "stub", "dimension": 8}
		src, _ = json.Marshal(m)
		fmt.Fprintf(&b, `{"index":{"_id":%q}}`+"\n%s\n", d.EventID, src)
	}
	data := mustAdmin(t, u, "POST", "/"+index+"/_bulk?refresh=true", b.String())
	if bytes.Contains(data, []byte(`"errors":true`)) {
		t.Fatalf("bulk: %s", data)
	}
}

// TestSourceSystemDocuments reads documents written by the source system
// into its own index (no extension fields): every call works through the
// fallbacks (timestamp for ingested_at, event_id for the turn key), then
// with engram's own documents added to the same index.
func TestSourceSystemDocuments(t *testing.T) {
	u := osURL(t)
	name := testIndex(t)
	ctx := context.Background()
	mustAdmin(t, u, "PUT", "/"+name, sourceIndexBody)
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	docs := sourceDocs(base, 40)
	bulkSource(t, u, name, docs[:25])
	bulkSource(t, u, name, docs[25:])

	ix := openIndex(t, name, nil) // adds the extension fields to the mapping, as it would in production
	r := newReader(t, ix, query.Options{})
	if r.space != "l2" || !r.vector {
		t.Fatalf("space %q vector %v", r.space, r.vector)
	}

	// Ingestion order of source documents: timestamp, then the order the
	// shard indexed them (the order written).
	order := slices.Clone(docs)
	slices.SortStableFunc(order, func(a, b *model.IndexDoc) int {
		return int(millis(t, a.Timestamp) - millis(t, b.Timestamp))
	})
	newest := slices.Clone(order)
	slices.Reverse(newest)

	if n, err := r.Count(ctx); err != nil || n != int64(len(docs)) {
		t.Fatalf("Count = %d, %v", n, err)
	}
	for _, d := range docs {
		got, err := r.Document(ctx, d.EventID)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(d)
		if !bytes.Equal(gj, wj) {
			t.Fatalf("Document(%s):\n got %s\nwant %s", d.EventID, gj, wj)
		}
	}
	for _, limit := range []int{1, 3, 100} {
		if d := diffIDs(pageAll(t, limit, func(c query.Cursor, n int) (query.Page, error) { return r.Recent(ctx, "", c, n) }), idsOf(newest)); d != "" {
			t.Errorf("Recent limit %d: %s", limit, d)
		}
	}
	if d := diffIDs(tailAll(t, r, "", 7), idsOf(order)); d != "" {
		t.Errorf("Tail from the start: %s", d)
	}

	// Turns: each source document is a turn of its own, keyed by its id.
	tp, err := r.Turns(ctx, "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Turns) != len(docs) {
		t.Fatalf("Turns: %d rows", len(tp.Turns))
	}
	for i, row := range tp.Turns {
		d := newest[i]
		ts := time.UnixMilli(millis(t, d.Timestamp)).UTC()
		want := query.TurnSummary{Key: d.EventID, SessionID: d.SessionID, AgentID: d.AgentID, Events: 1,
			First: ts, Last: ts, MaxImportance: d.ImportanceScore}
		if row.Key != want.Key || row.SessionID != want.SessionID || row.AgentID != want.AgentID || row.TenantID != "" ||
			row.Events != 1 || !row.First.Equal(ts) || !row.Last.Equal(ts) || row.AnyFailed ||
			math.Abs(row.MaxImportance-want.MaxImportance) > 1e-6 {
			t.Errorf("Turns row %d = %+v, want %+v", i, row, want)
		}
	}
	var paged []string
	for c := query.Cursor(""); ; {
		p, err := r.Turns(ctx, "tag:demo", c, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range p.Turns {
			paged = append(paged, row.Key)
		}
		if c = p.Next; c == "" {
			break
		}
	}
	var demo []string
	for _, d := range newest {
		if slices.Contains(d.Tags, "demo") {
			demo = append(demo, d.EventID)
		}
	}
	if d := diffIDs(paged, demo); d != "" {
		t.Errorf("Turns(tag:demo) by 4: %s", d)
	}
	for _, d := range docs[:5] {
		got, err := r.Turn(ctx, d.EventID)
		if err != nil || len(got) != 1 || got[0].EventID != d.EventID {
			t.Errorf("Turn(%s) = %v, %v", d.EventID, idsOf(got), err)
		}
	}

	// Search through the fallbacks and on the source system's own fields.
	now := time.Now()
	for _, src := range []string{"", "memory", `"planner vector"`, "type:" + model.TypeToolResult, "session:sess-2",
		"agent:agent-1", "tag:demo", "-tag:demo", "turn:" + docs[7].EventID, "id:" + docs[3].EventID,
		"importance>=0.5", "-success:false", "success:true", "tenant:acme", "-tenant:acme", "since:90m", "until:90m"} {
		e := mustParse(t, src)
		var want []string
		for _, d := range newest {
			if querytest.Match(e, d, now) {
				want = append(want, d.EventID)
			}
		}
		got := pageAll(t, 5, func(c query.Cursor, n int) (query.Page, error) { return r.Search(ctx, src, c, n) })
		if e.HasText() {
			got, want = sortedIDs(got), sortedIDs(want)
		}
		if d := diffIDs(got, want); d != "" {
			t.Errorf("Search(%q): %s", src, d)
		}
	}

	// Similar: exact cosine on the l2 index.
	target := docs[11]
	sim, err := r.Similar(ctx, target.EventID, 5)
	if err != nil {
		t.Fatal(err)
	}
	var cos []float64
	for _, d := range docs {
		if d.EventID != target.EventID {
			cos = append(cos, querytest.Cosine(target.Embedding, d.Embedding))
		}
	}
	slices.Sort(cos)
	slices.Reverse(cos)
	if len(sim) != 5 {
		t.Fatalf("Similar: %d results", len(sim))
	}
	for i, s := range sim {
		c := querytest.Cosine(target.Embedding, s.Doc.Embedding)
		if math.Abs(c-cos[i]) > 1e-4 || math.Abs(s.Score-c) > 1e-4 {
			t.Errorf("Similar result %d: %s score %.5f cosine %.5f, want %.5f", i, s.Doc.EventID, s.Score, c, cos[i])
		}
	}

	// engram writes into the same index: its documents are newer by
	// ingested_at; a source document written meanwhile, stamped now, is
	// tailed too.
	start, err := r.TailStart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mine := sourceDocs(time.Now().Add(-time.Hour), 3)
	for i, d := range mine {
		d.EventID = fmt.Sprintf("engram-%d", i)
		d.TurnID, d.TenantID = "turn-x", "acme"
	}
	writeDocs(t, ix, mine)
	late := sourceDocs(time.Now(), 1)[0]
	late.EventID = "src-late"
	bulkSource(t, u, name, []*model.IndexDoc{late})
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if d := diffIDs(tailAll(t, r, start, 10), []string{"engram-0", "engram-1", "engram-2", "src-late"}); d != "" {
		t.Errorf("Tail after engram's writes: %s", d)
	}
	p, err := r.Recent(ctx, "", "", 5)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffIDs(idsOf(p.Docs), []string{"src-late", "engram-2", "engram-1", "engram-0", newest[0].EventID}); d != "" {
		// src-late's timestamp is later than engram's ingested_at (it was
		// written after them).
		t.Errorf("Recent after engram's writes: %s", d)
	}
	turn, err := r.Turn(ctx, "turn-x")
	if err != nil || len(turn) != 3 {
		t.Errorf("Turn(turn-x) = %d docs, %v", len(turn), err)
	}
	ta := newReader(t, ix, query.Options{Tenant: "acme"})
	if n, err := ta.Count(ctx); err != nil || n != 3 {
		t.Errorf("tenant Count = %d, %v", n, err)
	}
	if _, err := ta.Document(ctx, docs[0].EventID); err == nil {
		t.Error("a tenant reader sees a document without a tenant")
	}
}

func millis(t testing.TB, ts string) int64 {
	tm, err := model.ParseTimestamp(ts)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}

func mustParse(t testing.TB, src string) *expr.Expr {
	t.Helper()
	e, err := parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func idsOf(docs []*model.IndexDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.EventID
	}
	return out
}

func sortedIDs(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func diffIDs(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("%d ids, want %d; first difference at %d: %s, want %s", len(got), len(want), i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d ids, want %d (got %v)", len(got), len(want), got)
}

// pageAll lists everything through a paged call.
func pageAll(t testing.TB, limit int, call func(query.Cursor, int) (query.Page, error)) []string {
	t.Helper()
	var out []string
	var c query.Cursor
	for n := 0; n < 10000; n++ {
		p, err := call(c, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Docs) > limit {
			t.Fatalf("%d docs, limit %d", len(p.Docs), limit)
		}
		out = append(out, idsOf(p.Docs)...)
		if c = p.Next; c == "" {
			return out
		}
	}
	t.Fatal("too many pages")
	return nil
}

// tailAll polls Tail from c until a poll is empty.
func tailAll(t testing.TB, r *Reader, c query.Cursor, limit int) []string {
	t.Helper()
	var out []string
	for range 10000 {
		p, err := r.Tail(context.Background(), c, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Docs) == 0 {
			if p.Next != c {
				t.Fatal("an empty poll moved the cursor")
			}
			return out
		}
		out = append(out, idsOf(p.Docs)...)
		c = p.Next
	}
	t.Fatal("too many polls")
	return nil
}

// TestTurnFirstFields: a turn's session, agent and tenant come from its
// first document (in ingestion order) that has one, also when the first
// document lacks them.
func TestTurnFirstFields(t *testing.T) {
	ix := openIndex(t, testIndex(t), nil)
	ctx := context.Background()
	mk := func(id, session, agent, tenant string) *model.IndexDoc {
		d := sourceDocs(time.Now().Add(-time.Minute), 1)[0]
		d.EventID, d.SessionID, d.AgentID, d.TenantID, d.TurnID = id, session, agent, tenant, "turn-f"
		return d
	}
	writeDocs(t, ix, []*model.IndexDoc{mk("f1", "s1", "", "")})
	writeDocs(t, ix, []*model.IndexDoc{mk("f2", "s2", "agent-x", "")})
	time.Sleep(5 * time.Millisecond)
	writeDocs(t, ix, []*model.IndexDoc{mk("f3", "s3", "agent-y", "acme"), mk("f4", "s4", "agent-z", "globex")})
	if err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	p, err := r.Turns(ctx, "", "", 10)
	if err != nil || len(p.Turns) != 1 {
		t.Fatalf("Turns = %+v, %v", p, err)
	}
	if got := p.Turns[0]; got.SessionID != "s1" || got.AgentID != "agent-x" || got.TenantID != "acme" || got.Events != 4 {
		t.Errorf("row = %+v, want session s1, agent agent-x, tenant acme, 4 events", got)
	}
	p, err = r.Turns(ctx, "-id:f1", "", 10)
	if err != nil || len(p.Turns) != 1 {
		t.Fatalf("Turns = %+v, %v", p, err)
	}
	// A filtered listing's row is the whole turn (the turns with a match).
	if got := p.Turns[0]; got.SessionID != "s1" || got.AgentID != "agent-x" || got.TenantID != "acme" || got.Events != 4 {
		t.Errorf("row of -id:f1 = %+v, want the whole turn: session s1, agent agent-x, tenant acme, 4 events", got)
	}
}
