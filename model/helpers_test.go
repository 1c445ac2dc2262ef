package model_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"engram/model"
)

// baseEvent is a valid event with every block, as a JSON object the tests
// mutate one member at a time.
const baseEvent = `{
  "eventId": "evt-1",
  "timestamp": "2026-05-08T10:00:00Z",
  "type": "tool_result",
  "context": {"sessionId": "s-1", "userId": "u-1", "agentId": "a-1"},
  "input": {"text": "list the files", "embedding": [], "structured": {"k": "v"}},
  "internalState": {"confidence": 0.5},
  "action": {"tool": "ls", "parameters": {"dir": "/"}, "reasoning": "look first"},
  "result": {"output": "a b c", "success": true, "latencyMs": 12},
  "evaluation": {"rewardScore": 0.9, "selfAssessedQuality": 0.8, "userFeedback": "positive"},
  "importanceScore": 0,
  "tags": ["fs"]
}`

// mutated returns baseEvent with f applied to its decoded form.
func mutated(t *testing.T, f func(ev map[string]any)) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(baseEvent), &ev); err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f(ev)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// block is the nested object called name, created when absent.
func block(ev map[string]any, name string) map[string]any {
	m, ok := ev[name].(map[string]any)
	if !ok {
		m = map[string]any{}
		ev[name] = m
	}
	return m
}

func decode(t *testing.T, data []byte) *model.Event {
	t.Helper()
	e, err := model.Decode(data, model.DecodeOptions{})
	if err != nil {
		t.Fatalf("Decode(%s): %v", data, err)
	}
	return e
}

// problemsOf returns err as Problems, failing the test when it is not.
func problemsOf(t *testing.T, err error) model.Problems {
	t.Helper()
	var ps model.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v (%T) is not model.Problems", err, err)
	}
	return ps
}

func sameProblems(t *testing.T, got, want model.Problems) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got  %q\n want %q", got, want)
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("compact %s: %v", s, err)
	}
	return b.String()
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memberNames lists the member names of a JSON object in document order.
func memberNames(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// member is the raw value of the member called name (the last one, if repeated).
func member(t *testing.T, raw []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}
