package model_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"engram/model"
)

func TestNewIndexDoc(t *testing.T) {
	yes, no := true, false
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		e    model.Event
		want string
	}{
		{
			name: "no optional blocks: defaults",
			e: model.Event{EventID: "e1", Timestamp: "2026-05-08T10:00:00Z", Type: "user_input",
				Context: model.Context{SessionID: "s"}, Input: model.Input{Text: "hi"},
				ImportanceScore: 0.24, ObjectStorageKey: "events/2026/05/08/e1.json"},
			want: `{"event_id":"e1","timestamp":"2026-05-08T10:00:00Z","event_type":"user_input","session_id":"s",
				"summary":"hi","embedding":[],"structured":{},"importance_score":0.24,"reward_score":0.5,
				"confidence":0.5,"retrieval_count":0,"decay_factor":1,
				"object_storage_key":"events/2026/05/08/e1.json","tags":[]}`,
		},
		{
			name: "every field",
			e: model.Event{EventID: "e2", Timestamp: "2026-05-08T10:00:00+02:00", Type: "tool_result",
				Context: model.Context{SessionID: "s", UserID: "u", AgentID: "a", GoalID: "g", PolicyVersion: "p",
					TraceID: "tr", SpanID: "sp", TurnID: "tu", TenantID: "acme"},
				Input: model.Input{Text: "hi", Embedding: []float64{0.5, 0.25},
					Structured: []byte(`{"k": [1, 2]}`)},
				InternalState:   &model.InternalState{Confidence: 0.7},
				Action:          &model.Action{Tool: "grep", Reasoning: "not indexed", Parameters: []byte(`{"q":1}`)},
				Result:          &model.Result{Output: "not indexed", Success: &no, LatencyMs: f(42.9)},
				Evaluation:      &model.Evaluation{RewardScore: 0.2, SelfAssessedQuality: 0.3},
				ImportanceScore: 0.73, ObjectStorageKey: "events/2026/05/08/e2.json", Tags: []string{"x", "y"}},
			want: `{"event_id":"e2","timestamp":"2026-05-08T10:00:00+02:00","event_type":"tool_result","session_id":"s",
				"user_id":"u","agent_id":"a","summary":"hi","embedding":[0.5,0.25],"structured":{"k":[1,2]},
				"importance_score":0.73,"reward_score":0.2,"confidence":0.7,"retrieval_count":0,"decay_factor":1,
				"object_storage_key":"events/2026/05/08/e2.json","tags":["x","y"],
				"turn_id":"tu","tenant_id":"acme","trace_id":"tr","tool":"grep","success":false,"latency_ms":42}`,
		},
		{
			name: "zero reward and confidence are not defaulted",
			e: model.Event{EventID: "e3", Type: "agent_action", Context: model.Context{SessionID: "s"},
				InternalState: &model.InternalState{Confidence: 0},
				Evaluation:    &model.Evaluation{RewardScore: 0}},
			want: `{"event_id":"e3","timestamp":"","event_type":"agent_action","session_id":"s","summary":"",
				"embedding":[],"structured":{},"importance_score":0,"reward_score":0,"confidence":0,
				"retrieval_count":0,"decay_factor":1,"object_storage_key":"","tags":[]}`,
		},
		{
			name: "structured null, success true, latency 0, success unknown omitted",
			e: model.Event{EventID: "e4", Type: "outcome", Context: model.Context{SessionID: "s"},
				Input:  model.Input{Text: "t", Structured: []byte("null")},
				Action: &model.Action{},
				Result: &model.Result{Success: &yes, LatencyMs: f(0)}},
			want: `{"event_id":"e4","timestamp":"","event_type":"outcome","session_id":"s","summary":"t",
				"embedding":[],"structured":{},"importance_score":0,"reward_score":0.5,"confidence":0.5,
				"retrieval_count":0,"decay_factor":1,"object_storage_key":"","tags":[],"success":true,"latency_ms":0}`,
		},
		{
			name: "result without success or latency",
			e: model.Event{EventID: "e5", Type: "outcome", Context: model.Context{SessionID: "s"},
				Result: &model.Result{Output: "x"}},
			want: `{"event_id":"e5","timestamp":"","event_type":"outcome","session_id":"s","summary":"",
				"embedding":[],"structured":{},"importance_score":0,"reward_score":0.5,"confidence":0.5,
				"retrieval_count":0,"decay_factor":1,"object_storage_key":"","tags":[]}`,
		},
		{
			// A float64 past the largest long used to convert to a negative
			// number on amd64.
			name: "huge latency is held at the largest long",
			e: model.Event{EventID: "e6", Type: "outcome", Context: model.Context{SessionID: "s"},
				Result: &model.Result{Output: "x", LatencyMs: f(1e300)}},
			want: `{"event_id":"e6","timestamp":"","event_type":"outcome","session_id":"s","summary":"",
				"embedding":[],"structured":{},"importance_score":0,"reward_score":0.5,"confidence":0.5,
				"retrieval_count":0,"decay_factor":1,"object_storage_key":"","tags":[],"latency_ms":9223372036854775807}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := marshal(t, model.NewIndexDoc(&c.e, 0))
			if want := compact(t, c.want); got != want {
				t.Errorf("index doc\n got  %s\n want %s", got, want)
			}
		})
	}
}

func TestNewIndexDocLatencyBoundary(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want int64
	}{
		{0.999, 0},
		{1 << 62, 1 << 62},
		{math.Nextafter(1<<63, 0), 1<<63 - 1024},
		{1 << 63, math.MaxInt64},
		{math.MaxFloat64, math.MaxInt64},
	} {
		e := &model.Event{Result: &model.Result{LatencyMs: &c.ms}}
		d := model.NewIndexDoc(e, 0)
		if d.LatencyMs == nil || *d.LatencyMs != c.want {
			t.Errorf("latency %v → %v, want %d", c.ms, d.LatencyMs, c.want)
		}
	}
}

func TestNewIndexDocSummaryCut(t *testing.T) {
	text := strings.Repeat("é", 1500) // 3000 bytes
	e := &model.Event{Input: model.Input{Text: text}}
	for _, c := range []struct{ n, want int }{{0, 1000}, {-5, 1000}, {240, 240}, {2000, 1500}} {
		s := model.NewIndexDoc(e, c.n).Summary
		if utf8.RuneCountInString(s) != c.want || !utf8.ValidString(s) || !strings.HasPrefix(text, s) {
			t.Errorf("summaryLen %d: summary of %d characters, want %d", c.n, utf8.RuneCountInString(s), c.want)
		}
	}
}

// The document never holds the full raw event: reasoning, outputs and
// parameters live only in the archive.
func TestNewIndexDocHoldsNoRawEvent(t *testing.T) {
	e := decode(t, mutated(t, func(ev map[string]any) {
		block(ev, "action")["reasoning"] = "SECRET-REASONING"
		block(ev, "action")["parameters"] = map[string]any{"p": "SECRET-PARAM"}
		block(ev, "result")["output"] = "SECRET-OUTPUT"
		block(ev, "internalState")["activePlan"] = "SECRET-PLAN"
	}))
	got := marshal(t, model.NewIndexDoc(e, 0))
	if strings.Contains(got, "SECRET") {
		t.Errorf("index document holds raw event content: %s", got)
	}
}

func TestNotifications(t *testing.T) {
	e := &model.Event{EventID: "e1", Timestamp: "2026-05-08T10:00:00Z",
		Input: model.Input{Embedding: make([]float64, 1536)}, ImportanceScore: 0.45,
		ObjectStorageKey: "events/2026/05/08/e1.json"}
	want := `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","importanceScore":0.45,"embeddingDimension":1536,` +
		`"objectStorageKey":"events/2026/05/08/e1.json","tags":[]}`
	if got := marshal(t, model.NewEnriched(e)); got != want {
		t.Errorf("enriched\n got  %s\n want %s", got, want)
	}
	e.Tags = []string{"a"}
	e.Input.Embedding = nil
	want = `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","importanceScore":0.45,"embeddingDimension":0,` +
		`"objectStorageKey":"events/2026/05/08/e1.json","tags":["a"]}`
	if got := marshal(t, model.NewEnriched(e)); got != want {
		t.Errorf("enriched\n got  %s\n want %s", got, want)
	}
	want = `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","index":"engram_test","objectStorageKey":"events/2026/05/08/e1.json"}`
	if got := marshal(t, model.NewIndexed(e, "engram_test")); got != want {
		t.Errorf("indexed\n got  %s\n want %s", got, want)
	}
	if model.IndexName != "experience_events" || model.TopicEnriched != "experience.enriched" || model.TopicIndexed != "memory.indexed" {
		t.Errorf("names: %s %s %s", model.IndexName, model.TopicEnriched, model.TopicIndexed)
	}
}

// A document's notifications are the ones its event makes: a rebuild from
// the index side announces exactly what ingest announced.
func TestDocNotificationsMatchEvent(t *testing.T) {
	for _, raw := range [][]byte{
		[]byte(`{"eventId":"n-1","timestamp":"2026-05-08T10:00:00.5+02:00","type":"tool_result","context":{"sessionId":"s"},"input":{"text":"hi","embedding":[0.5,0.25]},"tags":["a","b"]}`),
		[]byte(`{"eventId":"n-2","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{},"input":{"text":"no tags"}}`),
	} {
		ev, err := model.Decode(raw, model.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		ev.ImportanceScore = model.Importance(ev)
		e, i := model.NewIndexDoc(ev, 0).Notifications("ix")
		if !reflect.DeepEqual(e, model.NewEnriched(ev)) || !reflect.DeepEqual(i, model.NewIndexed(ev, "ix")) {
			t.Errorf("%s: from the document %+v %+v, from the event %+v %+v", ev.EventID, e, i, model.NewEnriched(ev), model.NewIndexed(ev, "ix"))
		}
	}
}
