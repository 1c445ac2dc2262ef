package model_test

import (
	"strings"
	"testing"

	"engram/model"
)

func TestDecodeErrors(t *testing.T) {
	type P = model.Problems
	cases := []struct {
		name string
		in   string
		want P
	}{
		// Not an object at all.
		{"empty", ``, P{{"", "expected a JSON object"}}},
		{"blank", " \n\t ", P{{"", "expected a JSON object"}}},
		{"array", `[{"eventId":"x"}]`, P{{"", "expected a JSON object"}}},
		{"null", `null`, P{{"", "expected a JSON object"}}},
		{"number", `42`, P{{"", "expected a JSON object"}}},
		{"string", `"{}"`, P{{"", "expected a JSON object"}}},
		{"true", `true`, P{{"", "expected a JSON object"}}},
		{"byte order mark", "\ufeff{}", P{{"", "expected a JSON object"}}},
		{"leading NBSP is not JSON space", "\u00a0{}", P{{"", "expected a JSON object"}}},

		// Syntax, with the byte offset encoding/json reports (bytes read,
		// so the offending byte's 1-based position).
		{"trailing comma", `{"eventId": "a",}`,
			P{{"", "invalid JSON at byte 17: invalid character '}' looking for beginning of object key string"}}},
		{"trailing comma after leading space", "\n  \t" + `{"eventId": "a",}`,
			P{{"", "invalid JSON at byte 21: invalid character '}' looking for beginning of object key string"}}},
		{"single quotes", `{'eventId': 1}`,
			P{{"", "invalid JSON at byte 2: invalid character '\\'' looking for beginning of object key string"}}},
		{"truncated", `{"eventId":`,
			P{{"", "invalid JSON at byte 11: unexpected end of JSON input"}}},
		{"two values", `{} {}`,
			P{{"", "invalid JSON at byte 4: invalid character '{' after top-level value"}}},
		{"NaN literal", `{"importanceScore": NaN}`,
			P{{"", "invalid JSON at byte 21: invalid character 'N' looking for beginning of value"}}},

		// Wrong types, located by JSON path.
		{"tags string", `{"tags": "memory"}`, P{{"tags", "expected an array, got string"}}},
		{"tags of numbers", `{"tags": ["a", 1]}`, P{{"tags", "expected a string, got number"}}},
		{"result.success string", `{"result": {"output": "x", "success": "true"}}`,
			P{{"result.success", "expected a boolean, got string"}}},
		{"context.sessionId number", `{"context": {"sessionId": 42}}`,
			P{{"context.sessionId", "expected a string, got number"}}},
		{"eventId number", `{"eventId": 7}`, P{{"eventId", "expected a string, got number"}}},
		{"timestamp number", `{"timestamp": 1778279485237}`, P{{"timestamp", "expected a string, got number"}}},
		{"type array", `{"type": ["user_input"]}`, P{{"type", "expected a string, got array"}}},
		{"importanceScore string", `{"importanceScore": "0.5"}`, P{{"importanceScore", "expected a number, got string"}}},
		{"context string", `{"context": "s-1"}`, P{{"context", "expected an object, got string"}}},
		{"input string", `{"input": "hello"}`, P{{"input", "expected an object, got string"}}},
		{"input array", `{"input": ["hello"]}`, P{{"input", "expected an object, got array"}}},
		{"input.text number", `{"input": {"text": 5}}`, P{{"input.text", "expected a string, got number"}}},
		{"input.embedding string", `{"input": {"text": "t", "embedding": "0.1,0.2"}}`,
			P{{"input.embedding", "expected an array, got string"}}},
		{"input.embedding of strings", `{"input": {"text": "t", "embedding": [0.1, "0.2"]}}`,
			P{{"input.embedding", "expected a number, got string"}}},
		{"internalState string", `{"internalState": "calm"}`, P{{"internalState", "expected an object, got string"}}},
		{"internalState.confidence string", `{"internalState": {"confidence": "high"}}`,
			P{{"internalState.confidence", "expected a number, got string"}}},
		{"emotionalVector array", `{"internalState": {"confidence": 1, "emotionalVector": [1]}}`,
			P{{"internalState.emotionalVector", "expected an object, got array"}}},
		{"action number", `{"action": 1}`, P{{"action", "expected an object, got number"}}},
		{"action.tool object", `{"action": {"tool": {}}}`, P{{"action.tool", "expected a string, got object"}}},
		{"result array", `{"result": []}`, P{{"result", "expected an object, got array"}}},
		{"result.latencyMs string", `{"result": {"output": "", "latencyMs": "42ms"}}`,
			P{{"result.latencyMs", "expected a number, got string"}}},
		{"evaluation boolean", `{"evaluation": true}`, P{{"evaluation", "expected an object, got bool"}}},
		{"evaluation.hallucinated string", `{"evaluation": {"hallucinated": "no"}}`,
			P{{"evaluation.hallucinated", "expected a boolean, got string"}}},

		// Numbers too large for a float64.
		{"importanceScore 1e999", `{"importanceScore": 1e999}`, P{{"importanceScore", "1e999 is not a finite number"}}},
		{"rewardScore -1e999", `{"evaluation": {"rewardScore": -1e999}}`,
			P{{"evaluation.rewardScore", "-1e999 is not a finite number"}}},
		{"confidence 1e999", `{"internalState": {"confidence": 1e999}}`,
			P{{"internalState.confidence", "1e999 is not a finite number"}}},
		{"latencyMs 1e999", `{"result": {"output": "x", "latencyMs": 1e999}}`,
			P{{"result.latencyMs", "1e999 is not a finite number"}}},
		{"embedding element 1e999", `{"input": {"text": "t", "embedding": [0, 1e999]}}`,
			P{{"input.embedding", "1e999 is not a finite number"}}},
		{"emotionalVector 1e999", `{"internalState": {"confidence": 1, "emotionalVector": {"joy": 1e999}}}`,
			P{{"internalState.emotionalVector", "1e999 is not a finite number"}}},

		// A known member twice: encoding/json would merge the two, the
		// source system (JavaScript) keeps the last.
		{"input twice", `{"input": {"text": "a"}, "input": {"text": "b"}}`,
			P{{"input", "given more than once"}}},
		{"context.sessionId twice", `{"context": {"sessionId": "a", "sessionId": "b"}}`,
			P{{"context.sessionId", "given more than once"}}},
		{"eventId twice", `{"eventId": "a", "eventId": "b"}`, P{{"eventId", "given more than once"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := model.Decode([]byte(c.in), model.DecodeOptions{})
			if err == nil {
				t.Fatalf("Decode(%s) = %+v, want an error", c.in, e)
			}
			if e != nil {
				t.Errorf("Decode returned an event with its error")
			}
			// The decoding problems come first; validation's of the rest
			// of these (incomplete) events follow them.
			got := problemsOf(t, err)
			sameProblems(t, got[:min(len(got), len(c.want))], c.want)
			for _, p := range got[min(len(got), len(c.want)):] {
				if strings.HasPrefix(p.Reason, "expected ") || strings.Contains(p.Reason, "finite") {
					t.Errorf("a second decoding problem %v for %s", p, c.in)
				}
			}
		})
	}
}

// TestDecodeReportsEveryProblem: several members of the wrong type, and
// validation's problems with the rest, all at once.
func TestDecodeReportsEveryProblem(t *testing.T) {
	in := `{"eventId":"e3","timestamp":"2026-05-08T10:00:00Z","type":"bogus","context":{"sessionId":7,"agentId":false},` +
		`"input":{"text":"hi","embedding":"no"},"importanceScore":"0","tags":[1]}`
	_, err := model.Decode([]byte(in), model.DecodeOptions{})
	sameProblems(t, problemsOf(t, err), model.Problems{
		{"context.agentId", "expected a string, got bool"},
		{"context.sessionId", "expected a string, got number"},
		{"importanceScore", "expected a number, got string"},
		{"input.embedding", "expected an array, got string"},
		{"tags", "expected a string, got number"},
		{"type", `"bogus" is not one of user_input, tool_result, system_event, agent_action, environmental_observation, consolidation_output, observation, action, outcome`},
	})
}

// Member names match exactly, as in the source system: "Input" is an unknown
// member, not input, and it is kept in the archive like any other.
func TestDecodeMemberNamesAreCaseSensitive(t *testing.T) {
	t.Run("variant beside the real member", func(t *testing.T) {
		in := `{"eventId":"e1","EventID":"shadow","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"sessionId":"s","SessionId":"shadow"},
			"Input":{"text":"shadow"},"input":{"text":"real","TEXT":"shadow"},"tags":[],"Tags":["shadow"]}`
		e := decode(t, []byte(in))
		if ps := e.Validate(); len(ps) > 0 {
			t.Fatal(ps)
		}
		if e.EventID != "e1" || e.Context.SessionID != "s" || e.Input.Text != "real" || len(e.Tags) != 0 {
			t.Errorf("case variants were read: %+v", e)
		}
		e.Enrich([]float64{1}, 0.5, "events/2026/05/08/e1.json")
		arch, err := e.ArchiveJSON()
		if err != nil {
			t.Fatal(err)
		}
		want := compact(t, `{"eventId":"e1","EventID":"shadow","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"sessionId":"s","SessionId":"shadow"},
			"Input":{"text":"shadow"},"input":{"text":"real","TEXT":"shadow","embedding":[1]},"tags":[],"Tags":["shadow"],
			"importanceScore":0.5,"objectStorageKey":"events/2026/05/08/e1.json"}`)
		if string(arch) != want {
			t.Errorf("archive\n got  %s\n want %s", arch, want)
		}
	})
	t.Run("variant alone", func(t *testing.T) {
		in := `{"EventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"SESSIONID":"s"},"Input":{"text":"hello"},"tags":[]}`
		sameProblems(t, decode(t, []byte(in)).Validate(), model.Problems{
			{"eventId", "required"},
			{"context.sessionId", "required"},
			{"input", "required"},
		})
		// Spacing before a nested object does not hide its members.
		in = `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":   ` + "\n\t" + `{"SessionId":"s"},"input":{"text":"hello"},"tags":[]}`
		sameProblems(t, decode(t, []byte(in)).Validate(), model.Problems{{"context.sessionId", "required"}})
		// encoding/json folds beyond ASCII too: ſ (U+017F) matches s.
		in = `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"ſessionId":"s"},"input":{"text":"hello"},"tags":[]}`
		sameProblems(t, decode(t, []byte(in)).Validate(), model.Problems{{"context.sessionId", "required"}})
	})
	t.Run("variant of a known name with a wrong type is not read", func(t *testing.T) {
		in := `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"sessionId":"s"},"input":{"text":"hi"},"tags":[],"TAGS":"not an array","Result":7}`
		if ps := decode(t, []byte(in)).Validate(); len(ps) > 0 {
			t.Fatal(ps)
		}
	})
	t.Run("unknown member twice is kept", func(t *testing.T) {
		in := `{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input",
			"context":{"sessionId":"s"},"input":{"text":"hi"},"tags":[],"x":1,"x":2}`
		e := decode(t, []byte(in))
		if ps := e.Validate(); len(ps) > 0 {
			t.Fatal(ps)
		}
		arch, err := e.ArchiveJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(arch), `"x":1,"x":2`) {
			t.Errorf("archive lost a repeated unknown member: %s", arch)
		}
	})
}

func TestDecodeKeepsRawAndCopies(t *testing.T) {
	buf := []byte("  \n" + baseEvent + "\n\n")
	e := decode(t, buf)
	if string(e.Raw()) != baseEvent {
		t.Errorf("Raw() is not the event without surrounding space:\n%s", e.Raw())
	}
	for i := range buf {
		buf[i] = 'x'
	}
	if string(e.Raw()) != baseEvent {
		t.Error("Raw() shares the caller's buffer")
	}
	if (&model.Event{}).Raw() != nil {
		t.Error("Raw() of an event built in code is not nil")
	}
}

func TestDecodeFields(t *testing.T) {
	e := decode(t, []byte(baseEvent))
	switch {
	case e.EventID != "evt-1", e.Timestamp != "2026-05-08T10:00:00Z", e.Type != model.TypeToolResult:
		t.Errorf("header: %+v", e)
	case e.Context.SessionID != "s-1" || e.Context.UserID != "u-1" || e.Context.AgentID != "a-1":
		t.Errorf("context: %+v", e.Context)
	case e.Input.Text != "list the files" || string(e.Input.Structured) != `{"k": "v"}` || len(e.Input.Embedding) != 0:
		t.Errorf("input: %+v", e.Input)
	case e.InternalState == nil || e.InternalState.Confidence != 0.5:
		t.Errorf("internalState: %+v", e.InternalState)
	case e.Action == nil || e.Action.Tool != "ls" || string(e.Action.Parameters) != `{"dir": "/"}` || e.Action.Reasoning != "look first":
		t.Errorf("action: %+v", e.Action)
	case e.Result == nil || e.Result.Output != "a b c" || e.Result.Success == nil || !*e.Result.Success ||
		e.Result.LatencyMs == nil || *e.Result.LatencyMs != 12:
		t.Errorf("result: %+v", e.Result)
	case e.Evaluation == nil || e.Evaluation.RewardScore != 0.9 || e.Evaluation.SelfAssessedQuality != 0.8 ||
		e.Evaluation.UserFeedback != "positive" || e.Evaluation.Hallucinated != nil:
		t.Errorf("evaluation: %+v", e.Evaluation)
	case len(e.Tags) != 1 || e.Tags[0] != "fs":
		t.Errorf("tags: %v", e.Tags)
	}

	// Absent blocks stay nil: absent and zero mean different things.
	e = decode(t, mutated(t, func(ev map[string]any) {
		for _, k := range []string{"internalState", "action", "result", "evaluation"} {
			delete(ev, k)
		}
	}))
	if e.InternalState != nil || e.Action != nil || e.Result != nil || e.Evaluation != nil {
		t.Errorf("absent blocks decoded as present: %+v", e)
	}
	e = decode(t, mutated(t, func(ev map[string]any) { delete(block(ev, "result"), "success") }))
	if e.Result == nil || e.Result.Success != nil {
		t.Errorf("absent result.success decoded as %v", e.Result.Success)
	}
}
