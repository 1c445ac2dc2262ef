package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// texts rebuilds both sides of a word diff.
func texts(spans []Span) (l, r string) {
	for _, s := range spans {
		if s.Op != OpInsert {
			l += s.Text
		}
		if s.Op != OpDelete {
			r += s.Text
		}
	}
	return
}

func TestWords(t *testing.T) {
	cases := []struct {
		a, b string
		want []Span
	}{
		{"the quick brown fox", "the quick red fox", []Span{{OpEqual, "the quick "}, {OpDelete, "brown"}, {OpInsert, "red"}, {OpEqual, " fox"}}},
		{"naïve café", "naïve café au lait", []Span{{OpEqual, "naïve café"}, {OpInsert, " au lait"}}},
		{"日本語 テキスト", "日本語 文章", []Span{{OpEqual, "日本語 "}, {OpDelete, "テキスト"}, {OpInsert, "文章"}}},
		{"retry, then stop.", "retry; then stop.", []Span{{OpEqual, "retry"}, {OpDelete, ","}, {OpInsert, ";"}, {OpEqual, " then stop."}}},
		{"red fox ran", "blue cat ran", []Span{{OpDelete, "red fox"}, {OpInsert, "blue cat"}, {OpEqual, " ran"}}},
		{"", "new", []Span{{OpInsert, "new"}}},
		{"same", "same", []Span{{OpEqual, "same"}}},
		{"a \x1b[31mred\x1b[0m b", "a \x1b[32mgreen\x1b[0m b", nil}, // checked by rebuilding only
	}
	for _, c := range cases {
		got := diffWords(c.a, c.b)
		if l, r := texts(got); l != c.a || r != c.b {
			t.Errorf("Words(%q, %q) rebuilds %q, %q", c.a, c.b, l, r)
		}
		if c.want != nil && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Words(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// A diff stays word-fine however many words changed (a line or bounded
// LCS diff would turn most of the text into one change).
func TestWordsManyChanges(t *testing.T) {
	a, b, changed := reasoningPair(100_000, 0.05, 7)
	spans := wordsWithin(a, b, time.Minute) // however busy the machine
	if l, r := texts(spans); l != a || r != b {
		t.Fatal("the spans do not rebuild the texts")
	}
	deleted := 0
	for _, s := range spans {
		if s.Op == OpDelete {
			deleted += len(tokens(s.Text))
		}
	}
	// Each changed word removes one word; folded spaces between adjacent
	// changes may add a few.
	if deleted < changed || deleted > changed*3 {
		t.Errorf("%d words changed, %d tokens marked removed", changed, deleted)
	}
}

func TestWordsInvalidUTF8(t *testing.T) {
	a, b := "ok \xff\xfe bytes", "ok \xff bytes"
	if l, r := texts(diffWords(a, b)); l != a || r != b {
		t.Errorf("rebuilt %q, %q", l, r)
	}
}

func TestFields(t *testing.T) {
	left := `{"eventId":"e-1","type":"agent_action","context":{"sessionId":"s","agentId":"a"},
		"action":{"tool":"search","reasoning":"look it up in the index first"},
		"result":{"output":"found","latencyMs":120,"errorCode":"E1"},"tags":["x","y"],"importanceScore":0.5}`
	right := `{"eventId":"e-2","type":"agent_action","context":{"sessionId":"s","userId":"u","agentId":"a"},
		"action":{"tool":"search","reasoning":"look it up in the archive first"},
		"result":{"output":"found","latencyMs":150.5},"tags":["y","x"],"importanceScore":0.5,"evaluation":{"hallucinated":true}}`
	fields, c := diffFields([]byte(left), []byte(right))
	var got []string
	by := map[string]Field{}
	for _, f := range fields {
		got = append(got, f.Path+":"+string(f.Status))
		by[f.Path] = f
	}
	want := []string{"eventId:changed", "type:same", "context.sessionId:same", "context.userId:only_right", "context.agentId:same",
		"action.tool:same", "action.reasoning:changed", "result.output:same", "result.latencyMs:changed", "result.errorCode:only_left",
		"tags:changed", "importanceScore:same", "evaluation.hallucinated:only_right"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("fields\n got %v\nwant %v", got, want)
	}
	if c != (Counts{Same: 6, Changed: 4, OnlyLeft: 1, OnlyRight: 2}) {
		t.Errorf("counts %+v", c)
	}
	if d := by["result.latencyMs"].Delta; d == nil || *d != 30.5 {
		t.Errorf("latency delta %v", d)
	}
	if w := by["action.reasoning"].Words; fmt.Sprint(w) != fmt.Sprint([]Span{{OpEqual, "look it up in the "}, {OpDelete, "index"}, {OpInsert, "archive"}, {OpEqual, " first"}}) {
		t.Errorf("reasoning words %v", w)
	}
	ms := measuresOf(fields)
	if ms[0].Name != "latency_ms" || *ms[0].Delta != 30.5 || ms[1].Left != nil || *ms[2].Delta != 0 {
		t.Errorf("measures %+v", ms)
	}
}

func TestFieldsSameIgnoresOrderAndNumberForm(t *testing.T) {
	_, c := diffFields([]byte(`{"a":{"x":1,"y":2},"n":1.0}`), []byte(`{"n":1, "a":{"y":2,"x":1}}`))
	if c.Differ() {
		t.Errorf("counts %+v", c)
	}
}

// memArchive is an archive of fixed objects.
type memArchive map[string][]byte

func (m memArchive) Get(_ context.Context, key string, _ int64) (*ingest.Object, error) {
	b, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, backend.ErrNotFound)
	}
	return &ingest.Object{Key: key, Body: b, Size: int64(len(b))}, nil
}

func (m memArchive) List(context.Context, string, func(string, int64) error) error { return nil }

type memIndex map[string]*model.IndexDoc

func (m memIndex) Document(_ context.Context, id string) (*model.IndexDoc, error) {
	if d, ok := m[id]; ok {
		return d, nil
	}
	return nil, backend.ErrNotFound
}

func TestFetchMissingArchiveObject(t *testing.T) {
	ok, lat := true, int64(42)
	docs := memIndex{
		"a": {EventID: "a", Timestamp: "2026-05-08T10:00:00Z", EventType: "tool_result", SessionID: "s", Summary: "done",
			ObjectStorageKey: "events/2026/05/08/a.json", RewardScore: 0.5, Confidence: 0.5, Success: &ok, LatencyMs: &lat, Tool: "t"},
		"b": {EventID: "b", Timestamp: "2026-05-08T10:00:01Z", EventType: "tool_result", SessionID: "s", Summary: "done",
			ObjectStorageKey: "events/2026/05/08/b.json"},
	}
	ar := memArchive{"events/2026/05/08/b.json": []byte(`{"eventId":"b","timestamp":"2026-05-08T10:00:01Z","type":"tool_result","context":{"sessionId":"s"},` +
		`"input":{"text":"done"},"action":{"tool":"t"},"result":{"output":"all done","success":true,"latencyMs":40},"importanceScore":0.8,"tags":[]}`)}
	a, err := Fetch(context.Background(), docs, ar, "a", "test index")
	if err != nil || a.Source != sourceIndex || !strings.Contains(a.Note, "is missing; compared from the index document") {
		t.Fatalf("a: %+v, %v", a, err)
	}
	b, err := Fetch(context.Background(), docs, ar, "b", "test index")
	if err != nil || b.Source != SourceArchive {
		t.Fatalf("b: %+v, %v", b, err)
	}
	d := Events(a, b)
	by := map[string]Field{}
	for _, f := range d.Fields {
		by[f.Path] = f
	}
	// The index-shaped side lines up with the archived one.
	if by["action.tool"].Status != Same || by["result.latencyMs"].Status != Changed || by["result.output"].Status != OnlyRight {
		t.Errorf("fields %+v", d.Fields)
	}
	_, err = Fetch(context.Background(), docs, ar, "zz", "test index")
	if err == nil || err.Error() != `no event "zz" in test index` {
		t.Errorf("missing id: %v", err)
	}
}

func ev(id, typ, tool, ts string, body string) *Event {
	return &Event{ID: id, Source: SourceArchive, Doc: &model.IndexDoc{EventID: id, EventType: typ, Tool: tool, Timestamp: ts, SessionID: "s"}, Body: []byte(body)}
}

func TestTurnsAlignment(t *testing.T) {
	l := []*Event{
		ev("l1", "user_input", "", "2026-05-08T10:00:00Z", `{"input":{"text":"q"}}`),
		ev("l2", "agent_action", "search", "2026-05-08T10:00:01Z", `{"action":{"tool":"search"}}`),
		ev("l3", "agent_action", "fetch", "2026-05-08T10:00:02Z", `{"action":{"tool":"fetch"}}`),
		ev("l4", "tool_result", "fetch", "2026-05-08T10:00:03Z", `{"result":{"output":"ok","success":true,"latencyMs":100},"evaluation":{"rewardScore":0.9}}`),
	}
	r := []*Event{
		ev("r1", "user_input", "", "2026-05-08T11:00:00Z", `{"input":{"text":"q"}}`),
		ev("r2", "agent_action", "fetch", "2026-05-08T11:00:01Z", `{"action":{"tool":"fetch"}}`),
		ev("r3", "tool_result", "fetch", "2026-05-08T11:00:05Z", `{"result":{"output":"timeout","success":false,"latencyMs":4000},"evaluation":{"rewardScore":0.1}}`),
		ev("r4", "tool_result", "fetch", "2026-05-08T11:00:06Z", `{"result":{"output":"gave up"}}`),
	}
	d := Turns("tl", l, "tr", r)
	var got []string
	for _, p := range d.Steps {
		s := p.Phase + ":" + string(p.Status) + ":"
		if p.Left != nil {
			s += p.Left.ID
		}
		s += "/"
		if p.Right != nil {
			s += p.Right.ID
		}
		got = append(got, s)
	}
	want := "observation:same:l1/r1 action:only_left:l2/ action:same:l3/r2 outcome:changed:l4/r3 outcome:only_right:/r4"
	if strings.Join(got, " ") != want {
		t.Errorf("steps\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	lt, rt := d.Left.Totals, d.Right.Totals
	if lt.Outcome != "ok" || rt.Outcome != "failed" || *lt.LatencyMs != 100 || *rt.LatencyMs != 4000 || *lt.Reward != 0.9 || lt.DurationMs != 3000 || rt.DurationMs != 6000 {
		t.Errorf("totals %+v / %+v", lt, rt)
	}
	if d.Deltas[2].Name != "latency_ms" || *d.Deltas[2].Delta != 3900 {
		t.Errorf("deltas %+v", d.Deltas)
	}
}

func TestTimeline(t *testing.T) {
	doc := func(id, turn, typ, ts string) *model.IndexDoc {
		return &model.IndexDoc{EventID: id, TurnID: turn, EventType: typ, Timestamp: ts, SessionID: "s", AgentID: "a"}
	}
	turns := map[string][]*model.IndexDoc{
		"t2": {doc("b1", "t2", "user_input", "2026-05-08T10:00:10Z"), doc("b2", "t2", "tool_result", "2026-05-08T10:00:12Z")},
		"t1": {doc("a1", "t1", "user_input", "2026-05-08T10:00:00Z"), doc("a2", "t1", "tool_result", "2026-05-08T10:00:02Z")},
		"t3": {doc("c1", "t3", "user_input", "2026-05-08T10:00:20Z")},
		"t4": {doc("d1", "t4", "user_input", "2026-05-08T10:30:00Z")},
	}
	s := Timeline("s", turns)
	var keys []string
	for _, tu := range s.Turns {
		keys = append(keys, fmt.Sprintf("%s@%d+%d idle%d gap%v", tu.Key, tu.OffsetMs, tu.DurationMs, tu.IdleBeforeMs, tu.Gap))
	}
	want := "t1@0+2000 idle0 gapfalse t2@10000+2000 idle8000 gapfalse t3@20000+0 idle8000 gapfalse t4@1800000+0 idle1780000 gaptrue"
	if strings.Join(keys, " ") != want {
		t.Errorf("timeline\n got %s\nwant %s", strings.Join(keys, " "), want)
	}
	if s.SpanMs != 1800000 || len(s.Agents) != 1 {
		t.Errorf("session %+v", s)
	}
}

// reasoningPair is two texts of about size bytes of agent reasoning, the
// second with frac of its words replaced; changed is how many.
func reasoningPair(size int, frac float64, seed int64) (a, b string, changed int) {
	rng := rand.New(rand.NewSource(seed))
	words := strings.Fields("the agent calls the tool because its reward was low; it plans a retry, observes the outcome, " +
		"checks memory and the index, and weighs the archive against what it was told. Évaluation naïve — 日本語 too")
	var wa, wb []string
	n := 0
	for n < size {
		w := words[rng.Intn(len(words))]
		wa = append(wa, w)
		if rng.Float64() < frac {
			wb = append(wb, fmt.Sprintf("changed%d", rng.Intn(1000)))
			changed++
		} else {
			wb = append(wb, w)
		}
		if rng.Intn(12) == 0 {
			wa, wb = append(wa, "\n"), append(wb, "\n")
		}
		n += len(w) + 1
	}
	return strings.Join(wa, " "), strings.Join(wb, " "), changed
}

// BenchmarkWords100KB diffs two 100 KB reasoning texts: a revision (1% and
// 5% of the words changed) and two unrelated texts, whose diff the
// deadline (textTimeout) bounds.
func BenchmarkWords100KB(b *testing.B) {
	for _, c := range []struct {
		name string
		frac float64
	}{{"1pct", 0.01}, {"5pct", 0.05}} {
		x, y, _ := reasoningPair(100_000, c.frac, 1)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(x) + len(y)))
			for b.Loop() {
				diffWords(x, y)
			}
		})
	}
	x, _, _ := reasoningPair(100_000, 0, 1)
	y, _, _ := reasoningPair(100_000, 0, 2)
	b.Run("unrelated", func(b *testing.B) {
		b.SetBytes(int64(len(x) + len(y)))
		for b.Loop() {
			diffWords(x, y)
		}
	})
}

func TestJSONShape(t *testing.T) {
	a := ev("a", "agent_action", "", "2026-05-08T10:00:00Z", `{"action":{"reasoning":"one two three four"},"result":{"latencyMs":10}}`)
	b := ev("b", "agent_action", "", "2026-05-08T10:00:00Z", `{"action":{"reasoning":"one two 3 four"},"result":{"latencyMs":15}}`)
	out, err := json.Marshal(Events(a, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"path":"action.reasoning","status":"changed","words":[{"op":"=","text":"one two "},{"op":"-","text":"three"},{"op":"+","text":"3"}`,
		`{"path":"result.latencyMs","status":"changed","left":10,"right":15,"delta":5}`, `"measures":[{"name":"latency_ms","path":"result.latencyMs","left":10,"right":15,"delta":5}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
}

func TestDeltaText(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		l, r *float64
		want string
	}{
		{f(120), f(480), "+360 (+300%)"},
		{f(0.1), f(0.4), "+0.3 (+300%)"},
		{f(300), f(299), "-1 (-0.33%)"},
		{f(1000), f(2_501_000), "+2500000 (+250000%)"},
		{f(0), f(5), "+5"},
		{f(2), f(2), "0"},
		{f(1), nil, "only left"},
		{nil, f(1), "only right"},
		{nil, nil, ""},
	}
	for _, c := range cases {
		var d *float64
		if c.l != nil && c.r != nil {
			d = f(*c.r - *c.l)
		}
		if got := DeltaText(c.l, c.r, d); got != c.want {
			t.Errorf("DeltaText(%v, %v) = %q, want %q", c.l, c.r, got, c.want)
		}
	}
}
