package model_test

import (
	"reflect"
	"testing"

	"engram/model"
)

const demoText = "Design a memory system that preserves complete experience while supporting fast associative retrieval."

// The source system's own demo event (docs/data-contract.md, The
// experience event, and the experience-capture article) run through the
// pipeline's pure steps: every value the article states must come out
// exactly.
func TestDemoEvent(t *testing.T) {
	raw := readFile(t, "testdata/demo-event.json")
	e := decode(t, raw)
	if ps := e.Validate(); len(ps) > 0 {
		t.Fatalf("demo event invalid: %v", ps)
	}
	if e.Input.Text != demoText {
		t.Fatalf("demo text = %q", e.Input.Text)
	}

	seed := 0
	for _, r := range e.Input.Text {
		seed += int(r)
	}
	if seed != 10051 {
		t.Errorf("seed = %d, want 10051", seed)
	}
	emb := model.StubEmbedding(e.Input.Text, model.StubDimension)
	if want := []float64{0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7}; !reflect.DeepEqual(emb, want) {
		t.Errorf("embedding = %v, want %v", emb, want)
	}
	imp := model.Importance(e)
	if imp != 0.79 {
		t.Errorf("importance = %v, want 0.79", imp)
	}
	key, err := model.ArchiveKey(e.EventID, e.Timestamp)
	if err != nil || key != "events/2026/05/08/demo-event-001.json" {
		t.Errorf("key = %q, %v", key, err)
	}
	if e.TurnKey() != "demo-trace-001" {
		t.Errorf("turn key = %q, want the trace id", e.TurnKey())
	}
	if model.PhaseOf(e.Type) != model.PhaseObservation {
		t.Errorf("phase = %v", model.PhaseOf(e.Type))
	}

	e.Enrich(emb, imp, key)

	// archivedEvent = {...rawEvent, input: {...rawEvent.input, embedding},
	// importanceScore, objectStorageKey}: members in place, the key last.
	arch, err := e.ArchiveJSON()
	if err != nil {
		t.Fatal(err)
	}
	wantArch := compact(t, `{
	  "eventId": "demo-event-001",
	  "timestamp": "2026-05-08T22:31:25.237Z",
	  "type": "user_input",
	  "context": {"sessionId": "demo-session-001", "traceId": "demo-trace-001"},
	  "input": {
	    "text": "`+demoText+`",
	    "embedding": [0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7]
	  },
	  "internalState": {
	    "confidence": 0.72,
	    "activePlan": "Compare object storage truth with OpenSearch retrieval metadata."
	  },
	  "action": {
	    "tool": "architecture_note",
	    "reasoning": "Capture the event before downstream learning changes its priority."
	  },
	  "result": {"output": "Experience archived and indexed.", "success": true, "latencyMs": 42},
	  "evaluation": {"rewardScore": 0.81, "selfAssessedQuality": 0.76},
	  "importanceScore": 0.79,
	  "tags": ["memory", "ingestion", "demo"],
	  "objectStorageKey": "events/2026/05/08/demo-event-001.json"
	}`)
	if string(arch) != wantArch {
		t.Errorf("archive\n got  %s\n want %s", arch, wantArch)
	}
	if !model.SameEvent(raw, arch) {
		t.Error("SameEvent(raw, archive) = false")
	}

	// The index document: the article's fields, then engram's extensions.
	doc := model.NewIndexDoc(e, 240) // the demo cut at 240; the text is shorter
	wantDoc := compact(t, `{
	  "event_id": "demo-event-001",
	  "timestamp": "2026-05-08T22:31:25.237Z",
	  "event_type": "user_input",
	  "session_id": "demo-session-001",
	  "summary": "`+demoText+`",
	  "embedding": [0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7],
	  "structured": {},
	  "importance_score": 0.79,
	  "reward_score": 0.81,
	  "confidence": 0.72,
	  "retrieval_count": 0,
	  "decay_factor": 1,
	  "object_storage_key": "events/2026/05/08/demo-event-001.json",
	  "tags": ["memory", "ingestion", "demo"],
	  "trace_id": "demo-trace-001",
	  "tool": "architecture_note",
	  "success": true,
	  "latency_ms": 42
	}`)
	if got := marshal(t, doc); got != wantDoc {
		t.Errorf("index doc\n got  %s\n want %s", got, wantDoc)
	}

	wantEnriched := compact(t, `{
	  "eventId": "demo-event-001",
	  "timestamp": "2026-05-08T22:31:25.237Z",
	  "importanceScore": 0.79,
	  "embeddingDimension": 8,
	  "objectStorageKey": "events/2026/05/08/demo-event-001.json",
	  "tags": ["memory", "ingestion", "demo"]
	}`)
	if got := marshal(t, model.NewEnriched(e)); got != wantEnriched {
		t.Errorf("experience.enriched\n got  %s\n want %s", got, wantEnriched)
	}
	wantIndexed := compact(t, `{
	  "eventId": "demo-event-001",
	  "timestamp": "2026-05-08T22:31:25.237Z",
	  "index": "experience_events",
	  "objectStorageKey": "events/2026/05/08/demo-event-001.json"
	}`)
	if got := marshal(t, model.NewIndexed(e, model.IndexName)); got != wantIndexed {
		t.Errorf("memory.indexed\n got  %s\n want %s", got, wantIndexed)
	}
}
