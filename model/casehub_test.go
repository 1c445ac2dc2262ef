package model_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"engram/model"
)

var caseHubOpts = model.DecodeOptions{
	// 10:00 at +02:00: the filled-in timestamp must be in UTC.
	Now:   func() time.Time { return time.Date(2026, 5, 8, 10, 0, 0, 123_000_000, time.FixedZone("+02", 2*3600)) },
	NewID: func() string { return "0196b3c2-7e1a-7000-8000-000000000001" },
}

func TestCaseHubMapping(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		in   string
		want model.Event
	}{
		{
			name: "observation",
			in: `{"kind":"observation","eventId":"ch-1","timestamp":"2026-05-08T10:00:00Z","agentId":"agent-7",
				"tenantId":"acme","caseId":"case-42","turnId":"turn-3","description":"Saw a failing build",
				"importance":0.8,"metadata":{"source":"ci"},"subject":"build #12"}`,
			want: model.Event{EventID: "ch-1", Timestamp: "2026-05-08T10:00:00Z", Type: "observation",
				Context: model.Context{SessionID: "case-42", AgentID: "agent-7", TenantID: "acme", TurnID: "turn-3"},
				Input: model.Input{Text: "Saw a failing build", Embedding: []float64{},
					Structured: json.RawMessage(`{"importance":0.8,"metadata":{"source":"ci"},"subject":"build #12"}`)},
				Tags: []string{}},
		},
		{
			name: "action with capability",
			in: `{"kind":"action","eventId":"ch-2","timestamp":"2026-05-08T10:00:01Z","agentId":"a","tenantId":"t",
				"caseId":"c","turnId":"turn-3","description":"Re-ran the build","capability":"ci.rerun"}`,
			want: model.Event{EventID: "ch-2", Timestamp: "2026-05-08T10:00:01Z", Type: "action",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t", TurnID: "turn-3"},
				Input:   model.Input{Text: "Re-ran the build", Embedding: []float64{}},
				Action:  &model.Action{Tool: "ci.rerun"}, Tags: []string{}},
		},
		{
			// An action is an action even without a capability: it has an
			// action block (and so scores a = 1).
			name: "action without capability, importance null",
			in: `{"kind":"action","eventId":"ch-3","timestamp":"2026-05-08T10:00:01Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"Thought about it","importance":null}`,
			want: model.Event{EventID: "ch-3", Timestamp: "2026-05-08T10:00:01Z", Type: "action",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input:   model.Input{Text: "Thought about it", Embedding: []float64{}},
				Action:  &model.Action{}, Tags: []string{}},
		},
		{
			name: "outcome SUCCESS",
			in: `{"kind":"outcome","eventId":"ch-4","timestamp":"2026-05-08T10:00:02Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"Build passed","result":"exit 0","capability":"ci.rerun",
				"metadata":{"outcome-status":"SUCCESS"}}`,
			want: model.Event{EventID: "ch-4", Timestamp: "2026-05-08T10:00:02Z", Type: "outcome",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input: model.Input{Text: "Build passed", Embedding: []float64{},
					Structured: json.RawMessage(`{"metadata":{"outcome-status":"SUCCESS"}}`)},
				Action: &model.Action{Tool: "ci.rerun"},
				Result: &model.Result{Output: "exit 0", Success: &yes}, Tags: []string{}},
		},
		{
			name: "outcome FAILURE, no capability",
			in: `{"kind":"outcome","eventId":"ch-5","timestamp":"2026-05-08T10:00:02Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"Build failed","result":"exit 1","metadata":{"outcome-status":"FAILURE"}}`,
			want: model.Event{EventID: "ch-5", Timestamp: "2026-05-08T10:00:02Z", Type: "outcome",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input: model.Input{Text: "Build failed", Embedding: []float64{},
					Structured: json.RawMessage(`{"metadata":{"outcome-status":"FAILURE"}}`)},
				Result: &model.Result{Output: "exit 1", Success: &no}, Tags: []string{}},
		},
		{
			name: "outcome status of another spelling leaves success unknown",
			in: `{"kind":"outcome","eventId":"ch-6","timestamp":"2026-05-08T10:00:02Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"Done","result":"ok","metadata":{"outcome-status":"success"}}`,
			want: model.Event{EventID: "ch-6", Timestamp: "2026-05-08T10:00:02Z", Type: "outcome",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input: model.Input{Text: "Done", Embedding: []float64{},
					Structured: json.RawMessage(`{"metadata":{"outcome-status":"success"}}`)},
				Result: &model.Result{Output: "ok"}, Tags: []string{}},
		},
		{
			name: "outcome without status",
			in: `{"kind":"outcome","eventId":"ch-7","timestamp":"2026-05-08T10:00:02Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"Done","result":"ok"}`,
			want: model.Event{EventID: "ch-7", Timestamp: "2026-05-08T10:00:02Z", Type: "outcome",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input:   model.Input{Text: "Done", Embedding: []float64{}},
				Result:  &model.Result{Output: "ok"}, Tags: []string{}},
		},
		{
			name: "kind given as eventType, upper case; id and time filled in",
			in: `{"eventType":"OBSERVATION","agentId":"a","tenantId":"t","caseId":"c","description":"d",
				"subject":"s","importance":0}`,
			want: model.Event{EventID: "0196b3c2-7e1a-7000-8000-000000000001", Timestamp: "2026-05-08T08:00:00.123Z",
				Type: "observation", Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input: model.Input{Text: "d", Embedding: []float64{},
					Structured: json.RawMessage(`{"importance":0,"subject":"s"}`)},
				Tags: []string{}},
		},
		{
			name: "kind given as type",
			in: `{"type":"action","eventId":"ch-8","timestamp":"2026-05-08T10:00:00Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"d"}`,
			want: model.Event{EventID: "ch-8", Timestamp: "2026-05-08T10:00:00Z", Type: "action",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input:   model.Input{Text: "d", Embedding: []float64{}}, Action: &model.Action{}, Tags: []string{}},
		},
		{
			name: "turn-id in metadata is allowed when the event sets no turnId",
			in: `{"kind":"action","eventId":"ch-9","timestamp":"2026-05-08T10:00:00Z","agentId":"a","tenantId":"t",
				"caseId":"c","description":"d","metadata":{"turn-id":"x","subject":"y","result":"z"}}`,
			want: model.Event{EventID: "ch-9", Timestamp: "2026-05-08T10:00:00Z", Type: "action",
				Context: model.Context{SessionID: "c", AgentID: "a", TenantID: "t"},
				Input: model.Input{Text: "d", Embedding: []float64{},
					Structured: json.RawMessage(`{"metadata":{"result":"z","subject":"y","turn-id":"x"}}`)},
				Action: &model.Action{}, Tags: []string{}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := model.Decode([]byte(c.in), caseHubOpts)
			if err != nil {
				t.Fatal(err)
			}
			if ps := e.Validate(); len(ps) > 0 {
				t.Fatalf("mapped event invalid: %v", ps)
			}
			// Compare as JSON: Event has unexported bookkeeping.
			if got, want := marshal(t, e), marshal(t, &c.want); got != want {
				t.Errorf("mapped\n got  %s\n want %s", got, want)
			}
			if e.ImportanceScore != 0 {
				t.Errorf("importanceScore = %v: the pipeline scores its own prior", e.ImportanceScore)
			}
			// The mapped event archives and reads back as itself.
			key, err := model.ArchiveKey(e.EventID, e.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			e.Enrich(model.StubEmbedding(e.Input.Text, 8), model.Importance(e), key)
			arch, err := e.ArchiveJSON()
			if err != nil {
				t.Fatal(err)
			}
			back := decode(t, arch)
			if ps := back.Validate(); len(ps) > 0 {
				t.Fatalf("archive %s invalid: %v", arch, ps)
			}
			if got, want := marshal(t, back), marshal(t, e); got != want {
				t.Errorf("archive reads back\n got  %s\n want %s", got, want)
			}
		})
	}
}

func TestCaseHubErrors(t *testing.T) {
	type P = model.Problems
	cases := []struct {
		name string
		in   string
		want P
	}{
		{"caseId missing", `{"kind":"observation","agentId":"a","tenantId":"t","description":"d","subject":"s"}`,
			P{{"caseId", "required (it becomes context.sessionId)"}}},
		{"caseId empty", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"","description":"d"}`,
			P{{"caseId", "required (it becomes context.sessionId)"}}},
		{"agentId and tenantId missing", `{"kind":"action","caseId":"c","description":"d"}`,
			P{{"agentId", "required"}, {"tenantId", "required"}}},
		{"agentId empty, tenantId null", `{"kind":"action","agentId":"","tenantId":null,"caseId":"c","description":"d"}`,
			P{{"agentId", "required"}, {"tenantId", "required"}}},
		{"description blank", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":" \n "}`,
			P{{"description", "required and must not be blank"}}},
		{"kind missing", `{"agentId":"a","tenantId":"t","caseId":"c","description":"d"}`,
			P{{"kind", "required for a CaseHub event (observation, action or outcome)"}}},
		{"kind unknown", `{"kind":"Thought","agentId":"a","tenantId":"t","caseId":"c","description":"d"}`,
			P{{"kind", `"thought" is not one of observation, action, outcome`}}},
		{"observation without subject", `{"kind":"observation","agentId":"a","tenantId":"t","caseId":"c","description":"d"}`,
			P{{"subject", "required for an observation"}}},
		{"observation with empty subject", `{"kind":"observation","agentId":"a","tenantId":"t","caseId":"c","description":"d","subject":""}`,
			P{{"subject", "required for an observation"}}},
		{"outcome without result", `{"kind":"outcome","agentId":"a","tenantId":"t","caseId":"c","description":"d"}`,
			P{{"result", "required for an outcome"}}},
		{"importance above 1", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","importance":1.5}`,
			P{{"importance", "1.5 is outside [0, 1]"}}},
		{"importance below 0", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","importance":-0.2}`,
			P{{"importance", "-0.2 is outside [0, 1]"}}},
		{"importance 1e999", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","importance":1e999}`,
			P{{"importance", "1e999 is not a finite number"}}},
		{"metadata value not a string", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","metadata":{"n":1}}`,
			P{{"metadata", "expected a string, got number"}}},
		{"metadata not an object", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d","metadata":["x"]}`,
			P{{"metadata", "expected an object, got array"}}},

		// Reserved keys the converter sets for this event.
		{"event-type always collides", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d",
			"metadata":{"event-type":"x"}}`,
			P{{"metadata.event-type", "collides with a reserved attribute this action sets"}}},
		{"turn-id collides when turnId is set", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","turnId":"tu",
			"description":"d","metadata":{"turn-id":"x"}}`,
			P{{"metadata.turn-id", "collides with a reserved attribute this action sets"}}},
		{"subject collides on an observation", `{"kind":"observation","agentId":"a","tenantId":"t","caseId":"c",
			"description":"d","subject":"s","metadata":{"subject":"x"}}`,
			P{{"metadata.subject", "collides with a reserved attribute this observation sets"}}},
		{"capability collides when set", `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c",
			"description":"d","capability":"c","metadata":{"capability":"x"}}`,
			P{{"metadata.capability", "collides with a reserved attribute this action sets"}}},
		{"result collides on an outcome", `{"kind":"outcome","agentId":"a","tenantId":"t","caseId":"c",
			"description":"d","result":"r","metadata":{"result":"x"}}`,
			P{{"metadata.result", "collides with a reserved attribute this outcome sets"}}},

		{"everything wrong at once", `{"kind":"outcome","description":"  ","metadata":{"event-type":"x","result":"y"},"result":"","importance":2}`,
			P{{"agentId", "required"}, {"tenantId", "required"}, {"caseId", "required (it becomes context.sessionId)"},
				{"description", "required and must not be blank"}, {"result", "required for an outcome"},
				{"importance", "2 is outside [0, 1]"},
				{"metadata.event-type", "collides with a reserved attribute this outcome sets"},
				{"metadata.result", "collides with a reserved attribute this outcome sets"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := model.Decode([]byte(c.in), caseHubOpts)
			if err == nil {
				t.Fatalf("Decode = %+v, want an error", e)
			}
			sameProblems(t, problemsOf(t, err), c.want)
		})
	}
}

// Without DecodeOptions, a CaseHub event lacking id and time decodes but
// does not validate: nothing is invented.
func TestCaseHubWithoutOptions(t *testing.T) {
	in := `{"kind":"action","agentId":"a","tenantId":"t","caseId":"c","description":"d"}`
	e, err := model.Decode([]byte(in), model.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameProblems(t, e.Validate(), model.Problems{{"eventId", "required"}, {"timestamp", "required"}})

	// A given id and timestamp win over the options.
	in = `{"kind":"action","eventId":"mine","timestamp":"2026-01-01T00:00:00Z","agentId":"a","tenantId":"t","caseId":"c","description":"d"}`
	e, err = model.Decode([]byte(in), caseHubOpts)
	if err != nil || e.EventID != "mine" || e.Timestamp != "2026-01-01T00:00:00Z" {
		t.Errorf("Decode = %+v, %v", e, err)
	}
}

// An object with input is a native event: description, kind and caseId
// are then unknown members.
func TestCaseHubShapeDetection(t *testing.T) {
	e := decode(t, mutated(t, func(ev map[string]any) {
		ev["description"], ev["kind"], ev["caseId"] = "not CaseHub", "outcome", "c"
	}))
	if ps := e.Validate(); len(ps) > 0 || e.Input.Text != "list the files" || e.Type != "tool_result" {
		t.Errorf("native event with CaseHub members: %+v, %v", e, ps)
	}
	// Without input, any member only CaseHub has makes it CaseHub, so a
	// CaseHub event lacking its description is told about that (and its
	// result, a string, is not a wrong type).
	for _, in := range []string{
		`{"kind":"outcome","agentId":"a","tenantId":"t","caseId":"c","result":"r"}`,
		`{"kind":"outcome","agentId":"a","tenantId":"t","caseId":"c","result":"r","description":null,"input":null}`,
		`{"agentId":"a","tenantId":"t","caseId":"c","result":"r","eventType":"outcome"}`,
	} {
		_, err := model.Decode([]byte(in), caseHubOpts)
		sameProblems(t, problemsOf(t, err), model.Problems{{"description", "required and must not be blank"}})
	}
	// Neither input nor a CaseHub member: a native event lacking input.
	e = decode(t, []byte(`{"agentId":"a","tenantId":"t"}`))
	if !reflect.DeepEqual(e.Validate(), model.Problems{
		{"eventId", "required"}, {"timestamp", "required"}, {"type", "required"},
		{"context", "required"}, {"input", "required"},
	}) {
		t.Errorf("Validate = %v", e.Validate())
	}
}
