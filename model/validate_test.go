package model_test

import (
	"strings"
	"testing"

	"engram/model"
)

const typeList = "user_input, tool_result, system_event, agent_action, environmental_observation, consolidation_output, observation, action, outcome"

func TestValidate(t *testing.T) {
	tags := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = "t"
		}
		return out
	}
	type P = model.Problems
	cases := []struct {
		name   string
		mutate func(ev map[string]any)
		want   P // nil: valid
	}{
		{"base event", nil, nil},

		// eventId
		{"eventId absent", func(ev map[string]any) { delete(ev, "eventId") }, P{{"eventId", "required"}}},
		{"eventId empty", func(ev map[string]any) { ev["eventId"] = "" }, P{{"eventId", "required"}}},
		{"eventId null", func(ev map[string]any) { ev["eventId"] = nil }, P{{"eventId", "required"}}},
		{"eventId 1 char", func(ev map[string]any) { ev["eventId"] = "x" }, nil},
		{"eventId 200 chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("a", 200) }, nil},
		{"eventId 125 two-byte chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("é", 125) }, nil},
		// 252 bytes: with ".json" more than a file name can hold (255 bytes).
		{"eventId 126 two-byte chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("é", 126) },
			P{{"eventId", "252 bytes in UTF-8, at most 250 allowed (<eventId>.json is a file name, at most 255 bytes)"}}},
		{"eventId 200 two-byte chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("é", 200) },
			P{{"eventId", "400 bytes in UTF-8, at most 250 allowed (<eventId>.json is a file name, at most 255 bytes)"}}},
		{"eventId 201 chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("a", 201) },
			P{{"eventId", "201 characters, at most 200 allowed"}}},
		{"eventId 201 two-byte chars", func(ev map[string]any) { ev["eventId"] = strings.Repeat("é", 201) },
			P{{"eventId", "201 characters, at most 200 allowed"}}},
		{"eventId slash", func(ev map[string]any) { ev["eventId"] = "a/b" },
			P{{"eventId", `"a/b" must not contain / or \ (it is the last part of an object key)`}}},
		{"eventId backslash", func(ev map[string]any) { ev["eventId"] = `a\b` },
			P{{"eventId", `"a\\b" must not contain / or \ (it is the last part of an object key)`}}},
		{"eventId dot-dot", func(ev map[string]any) { ev["eventId"] = "a..b" },
			P{{"eventId", `"a..b" must not contain ".."`}}},
		{"eventId is dot-dot", func(ev map[string]any) { ev["eventId"] = ".." },
			P{{"eventId", `".." must not contain ".."`}}},
		{"eventId leading dot", func(ev map[string]any) { ev["eventId"] = ".hidden" },
			P{{"eventId", `".hidden" must not start with a dot`}}},
		{"eventId inner and trailing dots", func(ev map[string]any) { ev["eventId"] = "a.b.c." }, nil},
		{"eventId tab", func(ev map[string]any) { ev["eventId"] = "a\tb" },
			P{{"eventId", `"a\tb" must not contain control characters`}}},
		{"eventId ESC", func(ev map[string]any) { ev["eventId"] = "a\x1b[2Jb" },
			P{{"eventId", `"a\x1b[2Jb" must not contain control characters`}}},
		{"eventId DEL", func(ev map[string]any) { ev["eventId"] = "a\x7fb" },
			P{{"eventId", `"a\x7fb" must not contain control characters`}}},
		{"eventId C1 control", func(ev map[string]any) { ev["eventId"] = "a\u0085b" },
			P{{"eventId", `"a\u0085b" must not contain control characters`}}},
		{"eventId uuid and colons", func(ev map[string]any) { ev["eventId"] = "0196b3c2-7e1a-7000-8000-000000000001:x" }, nil},

		// timestamp
		{"timestamp absent", func(ev map[string]any) { delete(ev, "timestamp") }, P{{"timestamp", "required"}}},
		{"timestamp empty", func(ev map[string]any) { ev["timestamp"] = "" }, P{{"timestamp", "required"}}},
		{"timestamp without zone", func(ev map[string]any) { ev["timestamp"] = "2026-05-08T10:00:00" },
			P{{"timestamp", `"2026-05-08T10:00:00" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`}}},
		{"timestamp date only", func(ev map[string]any) { ev["timestamp"] = "2026-05-08" },
			P{{"timestamp", `"2026-05-08" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`}}},
		{"timestamp month 13", func(ev map[string]any) { ev["timestamp"] = "2026-13-08T10:00:00Z" },
			P{{"timestamp", `"2026-13-08T10:00:00Z" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`}}},
		{"timestamp February 30", func(ev map[string]any) { ev["timestamp"] = "2026-02-30T10:00:00Z" },
			P{{"timestamp", `"2026-02-30T10:00:00Z" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`}}},
		{"timestamp prose", func(ev map[string]any) { ev["timestamp"] = "May 8, 2026" },
			P{{"timestamp", `"May 8, 2026" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`}}},
		{"timestamp Z millis", func(ev map[string]any) { ev["timestamp"] = "2026-05-08T22:31:25.237Z" }, nil},
		{"timestamp offset", func(ev map[string]any) { ev["timestamp"] = "2026-05-08T10:00:00-05:00" }, nil},
		{"timestamp nanos half-hour offset", func(ev map[string]any) { ev["timestamp"] = "2026-05-08T10:00:00.123456789+05:30" }, nil},

		// type
		{"type absent", func(ev map[string]any) { delete(ev, "type") }, P{{"type", "required"}}},
		{"type unknown", func(ev map[string]any) { ev["type"] = "thought" },
			P{{"type", `"thought" is not one of ` + typeList}}},
		{"type wrong case", func(ev map[string]any) { ev["type"] = "USER_INPUT" },
			P{{"type", `"USER_INPUT" is not one of ` + typeList}}},

		// context
		{"context absent", func(ev map[string]any) { delete(ev, "context") }, P{{"context", "required"}}},
		{"context null", func(ev map[string]any) { ev["context"] = nil }, P{{"context", "required"}}},
		{"context empty", func(ev map[string]any) { ev["context"] = map[string]any{} }, P{{"context.sessionId", "required"}}},
		{"context.sessionId empty", func(ev map[string]any) { block(ev, "context")["sessionId"] = "" }, P{{"context.sessionId", "required"}}},
		{"context.sessionId null", func(ev map[string]any) { block(ev, "context")["sessionId"] = nil }, P{{"context.sessionId", "required"}}},
		{"context extensions", func(ev map[string]any) {
			c := block(ev, "context")
			c["turnId"], c["tenantId"], c["traceId"], c["spanId"] = "t", "acme", "tr", "sp"
		}, nil},

		// input
		{"input absent", func(ev map[string]any) { delete(ev, "input") }, P{{"input", "required"}}},
		{"input null", func(ev map[string]any) { ev["input"] = nil }, P{{"input", "required"}}},
		{"input empty", func(ev map[string]any) { ev["input"] = map[string]any{} }, P{{"input.text", "required"}}},
		{"input.text empty", func(ev map[string]any) { block(ev, "input")["text"] = "" }, P{{"input.text", "required"}}},
		{"input.text blank", func(ev map[string]any) { block(ev, "input")["text"] = " \t\n\u00a0" }, P{{"input.text", "required"}}},
		{"input.text null", func(ev map[string]any) { block(ev, "input")["text"] = nil }, P{{"input.text", "required"}}},
		{"input.embedding absent", func(ev map[string]any) { delete(block(ev, "input"), "embedding") }, nil},
		{"input.embedding given", func(ev map[string]any) { block(ev, "input")["embedding"] = []any{0.1, -2, 3e5} }, nil},
		{"input.structured absent", func(ev map[string]any) { delete(block(ev, "input"), "structured") }, nil},
		{"input.structured null", func(ev map[string]any) { block(ev, "input")["structured"] = nil }, nil},
		{"input.structured empty object", func(ev map[string]any) { block(ev, "input")["structured"] = map[string]any{} }, nil},
		{"input.structured array", func(ev map[string]any) { block(ev, "input")["structured"] = []any{1} },
			P{{"input.structured", "expected an object"}}},
		{"input.structured string", func(ev map[string]any) { block(ev, "input")["structured"] = "x" },
			P{{"input.structured", "expected an object"}}},
		{"input.structured number", func(ev map[string]any) { block(ev, "input")["structured"] = 3 },
			P{{"input.structured", "expected an object"}}},

		// internalState
		{"internalState absent", func(ev map[string]any) { delete(ev, "internalState") }, nil},
		{"internalState empty", func(ev map[string]any) { ev["internalState"] = map[string]any{} },
			P{{"internalState.confidence", "required when internalState is present"}}},
		{"internalState.confidence null", func(ev map[string]any) { block(ev, "internalState")["confidence"] = nil },
			P{{"internalState.confidence", "required when internalState is present"}}},
		{"internalState.confidence 0", func(ev map[string]any) { block(ev, "internalState")["confidence"] = 0 }, nil},
		{"internalState.confidence 1", func(ev map[string]any) { block(ev, "internalState")["confidence"] = 1 }, nil},
		{"internalState.confidence 1.2", func(ev map[string]any) { block(ev, "internalState")["confidence"] = 1.2 },
			P{{"internalState.confidence", "1.2 is outside [0, 1]"}}},
		{"internalState.confidence -0.1", func(ev map[string]any) { block(ev, "internalState")["confidence"] = -0.1 },
			P{{"internalState.confidence", "-0.1 is outside [0, 1]"}}},
		{"internalState optional members", func(ev map[string]any) {
			s := block(ev, "internalState")
			s["workingMemorySnapshot"], s["activePlan"] = "wm", "plan"
			s["emotionalVector"] = map[string]any{"joy": 0.2, "fear": -3}
		}, nil},

		// action
		{"action absent", func(ev map[string]any) { delete(ev, "action") }, nil},
		{"action empty", func(ev map[string]any) { ev["action"] = map[string]any{} }, nil},
		{"action.parameters null", func(ev map[string]any) { block(ev, "action")["parameters"] = nil }, nil},
		{"action.parameters array", func(ev map[string]any) { block(ev, "action")["parameters"] = []any{"a"} },
			P{{"action.parameters", "expected an object"}}},
		{"action.parameters string", func(ev map[string]any) { block(ev, "action")["parameters"] = "a=1" },
			P{{"action.parameters", "expected an object"}}},
		{"action.parameters boolean", func(ev map[string]any) { block(ev, "action")["parameters"] = true },
			P{{"action.parameters", "expected an object"}}},

		// result
		{"result absent", func(ev map[string]any) { delete(ev, "result") }, nil},
		{"result empty", func(ev map[string]any) { ev["result"] = map[string]any{} },
			P{{"result.output", "required when result is present"}}},
		{"result.output null", func(ev map[string]any) { block(ev, "result")["output"] = nil },
			P{{"result.output", "required when result is present"}}},
		{"result.output empty string is present", func(ev map[string]any) { block(ev, "result")["output"] = "" }, nil},
		{"result.success absent", func(ev map[string]any) { delete(block(ev, "result"), "success") }, nil},
		{"result.success false", func(ev map[string]any) { block(ev, "result")["success"] = false }, nil},
		{"result.latencyMs 0", func(ev map[string]any) { block(ev, "result")["latencyMs"] = 0 }, nil},
		{"result.latencyMs fraction", func(ev map[string]any) { block(ev, "result")["latencyMs"] = 0.25 }, nil},
		{"result.latencyMs negative", func(ev map[string]any) { block(ev, "result")["latencyMs"] = -1 },
			P{{"result.latencyMs", "-1 is negative"}}},
		{"result.latencyMs negative fraction", func(ev map[string]any) { block(ev, "result")["latencyMs"] = -0.5 },
			P{{"result.latencyMs", "-0.5 is negative"}}},
		{"result.errorCode", func(ev map[string]any) { block(ev, "result")["errorCode"] = "E42" }, nil},

		// evaluation
		{"evaluation absent", func(ev map[string]any) { delete(ev, "evaluation") }, nil},
		{"evaluation empty", func(ev map[string]any) { ev["evaluation"] = map[string]any{} },
			P{{"evaluation.rewardScore", "required when evaluation is present"},
				{"evaluation.selfAssessedQuality", "required when evaluation is present"}}},
		{"evaluation.rewardScore absent", func(ev map[string]any) { delete(block(ev, "evaluation"), "rewardScore") },
			P{{"evaluation.rewardScore", "required when evaluation is present"}}},
		{"evaluation.selfAssessedQuality null", func(ev map[string]any) { block(ev, "evaluation")["selfAssessedQuality"] = nil },
			P{{"evaluation.selfAssessedQuality", "required when evaluation is present"}}},
		{"evaluation zeros", func(ev map[string]any) {
			e := block(ev, "evaluation")
			e["rewardScore"], e["selfAssessedQuality"] = 0, 0
		}, nil},
		{"evaluation.rewardScore 1.7", func(ev map[string]any) { block(ev, "evaluation")["rewardScore"] = 1.7 },
			P{{"evaluation.rewardScore", "1.7 is outside [0, 1]"}}},
		{"evaluation.rewardScore -1", func(ev map[string]any) { block(ev, "evaluation")["rewardScore"] = -1 },
			P{{"evaluation.rewardScore", "-1 is outside [0, 1]"}}},
		{"evaluation.selfAssessedQuality 1.01", func(ev map[string]any) { block(ev, "evaluation")["selfAssessedQuality"] = 1.01 },
			P{{"evaluation.selfAssessedQuality", "1.01 is outside [0, 1]"}}},
		{"userFeedback negative", func(ev map[string]any) { block(ev, "evaluation")["userFeedback"] = "negative" }, nil},
		{"userFeedback neutral", func(ev map[string]any) { block(ev, "evaluation")["userFeedback"] = "neutral" }, nil},
		{"userFeedback absent", func(ev map[string]any) { delete(block(ev, "evaluation"), "userFeedback") }, nil},
		{"userFeedback unknown", func(ev map[string]any) { block(ev, "evaluation")["userFeedback"] = "great" },
			P{{"evaluation.userFeedback", `"great" is not one of positive, negative, neutral`}}},
		{"userFeedback wrong case", func(ev map[string]any) { block(ev, "evaluation")["userFeedback"] = "Positive" },
			P{{"evaluation.userFeedback", `"Positive" is not one of positive, negative, neutral`}}},
		{"evaluation.hallucinated", func(ev map[string]any) { block(ev, "evaluation")["hallucinated"] = true }, nil},

		// importanceScore
		{"importanceScore 1", func(ev map[string]any) { ev["importanceScore"] = 1 }, nil},
		{"importanceScore 0.5", func(ev map[string]any) { ev["importanceScore"] = 0.5 }, nil},
		{"importanceScore 1.5", func(ev map[string]any) { ev["importanceScore"] = 1.5 },
			P{{"importanceScore", "1.5 is outside [0, 1]"}}},
		{"importanceScore -0.01", func(ev map[string]any) { ev["importanceScore"] = -0.01 },
			P{{"importanceScore", "-0.01 is outside [0, 1]"}}},

		// tags
		{"tags empty", func(ev map[string]any) { ev["tags"] = []any{} }, nil},
		{"tags 1000", func(ev map[string]any) { ev["tags"] = tags(1000) }, nil},
		{"tags 1001", func(ev map[string]any) { ev["tags"] = tags(1001) },
			P{{"tags", "1001 tags, at most 1000 allowed"}}},
		{"tag empty", func(ev map[string]any) { ev["tags"] = []any{"a", "", "b", ""} },
			P{{"tags[1]", "empty tag"}, {"tags[3]", "empty tag"}}},
		{"tag 256 chars", func(ev map[string]any) { ev["tags"] = []any{strings.Repeat("ü", 256)} }, nil},
		{"tag 257 chars", func(ev map[string]any) { ev["tags"] = []any{"ok", strings.Repeat("ü", 257)} },
			P{{"tags[1]", "257 characters, at most 256 allowed"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := decode(t, mutated(t, c.mutate))
			got := e.Validate()
			sameProblems(t, got, c.want)
			if (got.Err() == nil) != (len(c.want) == 0) {
				t.Errorf("Err() = %v with %d problems", got.Err(), len(got))
			}
		})
	}
}

func TestValidateEveryType(t *testing.T) {
	want := []string{"user_input", "tool_result", "system_event", "agent_action",
		"environmental_observation", "consolidation_output", "observation", "action", "outcome"}
	if strings.Join(model.EventTypes, ", ") != strings.Join(want, ", ") {
		t.Fatalf("EventTypes = %v", model.EventTypes)
	}
	for _, typ := range want {
		e := decode(t, mutated(t, func(ev map[string]any) { ev["type"] = typ }))
		if ps := e.Validate(); len(ps) > 0 {
			t.Errorf("type %s: %v", typ, ps)
		}
	}
}

// One broken event reports every problem at once, in a stable order, each
// with its JSON path.
func TestValidateReportsAllProblems(t *testing.T) {
	in := `{
	  "eventId": "../etc/passwd",
	  "timestamp": "2026-05-08T10:00:00",
	  "type": "thought",
	  "context": {"userId": "u"},
	  "input": {"text": "   ", "structured": [1, 2]},
	  "internalState": {"confidence": 2},
	  "action": {"parameters": "x"},
	  "result": {"latencyMs": -5},
	  "evaluation": {"rewardScore": 1.7, "userFeedback": "meh"},
	  "importanceScore": -1,
	  "tags": ["", "ok"]
	}`
	e := decode(t, []byte(in))
	ps := e.Validate()
	want := model.Problems{
		{"eventId", `"../etc/passwd" must not contain / or \ (it is the last part of an object key)`},
		{"timestamp", `"2026-05-08T10:00:00" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`},
		{"type", `"thought" is not one of ` + typeList},
		{"context.sessionId", "required"},
		{"input.text", "required"},
		{"input.structured", "expected an object"},
		{"internalState.confidence", "2 is outside [0, 1]"},
		{"action.parameters", "expected an object"},
		{"result.output", "required when result is present"},
		{"result.latencyMs", "-5 is negative"},
		{"evaluation.rewardScore", "1.7 is outside [0, 1]"},
		{"evaluation.selfAssessedQuality", "required when evaluation is present"},
		{"evaluation.userFeedback", `"meh" is not one of positive, negative, neutral`},
		{"importanceScore", "-1 is outside [0, 1]"},
		{"tags[0]", "empty tag"},
	}
	sameProblems(t, ps, want)

	msg := ps.Error()
	for _, s := range []string{
		"context.sessionId: required",
		"evaluation.rewardScore: 1.7 is outside [0, 1]",
		"result.latencyMs: -5 is negative",
		"; ",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("Error() lacks %q: %s", s, msg)
		}
	}
	if n := strings.Count(msg, "; "); n != len(want)-1 {
		t.Errorf("Error() joins %d problems with %d separators: %s", len(want), n, msg)
	}
}

func TestValidateMissingEverything(t *testing.T) {
	ps := decode(t, []byte(`{}`)).Validate()
	sameProblems(t, ps, model.Problems{
		{"eventId", "required"},
		{"timestamp", "required"},
		{"type", "required"},
		{"context", "required"},
		{"input", "required"},
	})
}

func TestCheckEventID(t *testing.T) {
	cases := []struct {
		id, want string // want "": accepted
	}{
		{"demo-event-001", ""},
		{"a", ""},
		{strings.Repeat("x", 200), ""},
		{strings.Repeat("日", 83), ""},
		{strings.Repeat("日", 84), "252 bytes in UTF-8, at most 250 allowed (<eventId>.json is a file name, at most 255 bytes)"},
		{"", "required"},
		{strings.Repeat("日", 201), "201 characters, at most 200 allowed"},
		{"a\xffb", "not valid UTF-8"},
		{"a/b", `"a/b" must not contain / or \ (it is the last part of an object key)`},
		{`\`, `"\\" must not contain / or \ (it is the last part of an object key)`},
		{"x..", `"x.." must not contain ".."`},
		{".", `"." must not start with a dot`},
		{"a\x00b", `"a\x00b" must not contain control characters`},
		{"line\nbreak", `"line\nbreak" must not contain control characters`},
		{"a\u009bb", `"a\u009bb" must not contain control characters`},
	}
	for _, c := range cases {
		err := model.CheckEventID(c.id)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckEventID(%q) = %v, want nil", c.id, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("CheckEventID(%q) = %v, want %q", c.id, err, c.want)
		}
	}
}

func TestProblemsError(t *testing.T) {
	var none model.Problems
	if none.Err() != nil {
		t.Error("empty Problems.Err() is not nil")
	}
	ps := model.Problems{{"", "expected a JSON object"}, {"tags[2]", "empty tag"}}
	if got := ps.Error(); got != "expected a JSON object; tags[2]: empty tag" {
		t.Errorf("Error() = %q", got)
	}
	if ps.Err() == nil {
		t.Error("non-empty Problems.Err() is nil")
	}
}

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"esc\x1b[31m", `"esc\x1b[31m"`},
		{strings.Repeat("ä", 80), `"` + strings.Repeat("ä", 80) + `"`},
		{strings.Repeat("ä", 81), `"` + strings.Repeat("ä", 80) + `…"`},
	}
	for _, c := range cases {
		if got := model.Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
