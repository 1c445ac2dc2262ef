package ui

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
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

// eventFromDoc gives back what the index document holds of an event, but
// for what the record form makes afresh or cannot hold: an index document
// field NewIndexDoc gains fails here until one side or the other says so.
func TestEventFromDocKeepsWhatTheIndexHolds(t *testing.T) {
	notKept := map[string]string{
		"event_id": "made at submit", "timestamp": "made at submit",
		"object_storage_key": "made by the archive", "importance_score": "scored by the pipeline",
		"user_id": "no form field", "trace_id": "no form field",
		"embedding": "the form sends none", "structured": "the form sends none",
		"reward_score": "0.5 when the event had none: not the event's own", "confidence": "likewise",
	}
	var e model.Event
	if err := json.Unmarshal([]byte(fullEvent), &e); err != nil {
		t.Fatal(err)
	}
	d := model.NewIndexDoc(&e, 0)
	want, got := indexJSON(t, &e), indexJSON(t, eventFromDoc(d))
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, skip := notKept[k]; !skip && !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: a duplicate's index document has %v, the original's %v", k, got[k], want[k])
		}
	}
}

func memberPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}
