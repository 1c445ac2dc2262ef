package ui

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"engram/model"
)

// fullEvent is an event with every member set, to a value that an index
// document would show if it took it.
const fullEvent = `{
  "eventId": "ev-full", "timestamp": "2026-05-08T10:00:00Z", "type": "action",
  "context": {"sessionId": "s", "userId": "u", "goalId": "g", "policyVersion": "p", "agentId": "a",
    "traceId": "tr", "spanId": "sp", "turnId": "tu", "tenantId": "te"},
  "input": {"text": "short text", "embedding": [0.25, 0.5], "structured": {"k": "v"}},
  "internalState": {"confidence": 0.25, "workingMemorySnapshot": "w", "activePlan": "ap", "emotionalVector": {"calm": 0.5}},
  "action": {"tool": "grep", "parameters": {"q": "x"}, "reasoning": "why"},
  "result": {"output": "out", "success": true, "latencyMs": 120, "errorCode": "E1"},
  "evaluation": {"rewardScore": 0.25, "selfAssessedQuality": 0.25, "userFeedback": "fb", "hallucinated": false},
  "objectStorageKey": "events/ev-full.json", "importanceScore": 0.25, "tags": ["t1"]
}`

// leaves calls fn with the path (as jnode paths spell it) of every scalar
// under v, and a function that replaces that scalar with another value.
func leaves(v any, path string, fn func(path string, perturb func())) {
	switch x := v.(type) {
	case map[string]any:
		for k, kid := range x {
			k := k
			if isScalar(kid) {
				fn(memberPath(path, k), func() { x[k] = other(kid) })
			} else {
				leaves(kid, memberPath(path, k), fn)
			}
		}
	case []any:
		for i, kid := range x {
			i := i
			if isScalar(kid) {
				fn(fmt.Sprintf("%s[%d]", path, i), func() { x[i] = other(kid) })
			} else {
				leaves(kid, fmt.Sprintf("%s[%d]", path, i), fn)
			}
		}
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func other(v any) any {
	switch x := v.(type) {
	case string:
		return x + "-x"
	case float64:
		return x + 1.125
	case bool:
		return !x
	}
	return "x"
}

func indexJSON(t *testing.T, event any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(event)
	var e model.Event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	b, _ = json.Marshal(model.NewIndexDoc(&e, 0))
	json.Unmarshal(b, &doc)
	return doc
}

// The members the detail leaves unmarked (indexHolds) are exactly those
// model.NewIndexDoc reads: changing one changes the index document.
func TestIndexHeldIsWhatNewIndexDocReads(t *testing.T) {
	var base map[string]any
	json.Unmarshal([]byte(fullEvent), &base)
	want := indexJSON(t, base)
	leaves(base, "", func(path string, _ func()) {
		var ev map[string]any
		json.Unmarshal([]byte(fullEvent), &ev)
		leaves(ev, "", func(p string, perturb func()) {
			if p == path {
				perturb()
			}
		})
		read := !reflect.DeepEqual(indexJSON(t, ev), want)
		if read != indexHolds(path) {
			t.Errorf("%s: NewIndexDoc reads it: %v; indexHeld holds it: %v", path, read, indexHolds(path))
		}
	})
}

func memberPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}
