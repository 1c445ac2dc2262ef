package ingest

import (
	"bytes"
	"encoding/json"
	"testing"

	"engram/model"
)

// TestHeldLineAsMarshalled: the outbox line put together around the
// notifications' JSON is byte for byte json.Marshal's of the line, encoded
// once or not, and reads back as the announcement it holds.
func TestHeldLineAsMarshalled(t *testing.T) {
	base := Announcement{
		Enriched: model.Enriched{EventID: "ev-<1>&\"2\"", Timestamp: "2026-03-01T00:00:01Z", ImportanceScore: 0.1 + 0.2,
			EmbeddingDimension: 8, ObjectStorageKey: "events/2026/03/01/ev.json", Tags: []string{"a", "é\u2028"}},
		Indexed: model.Indexed{EventID: "ev-<1>&\"2\"", Timestamp: "2026-03-01T00:00:01Z", Index: "experiences", ObjectStorageKey: "k"},
	}
	traced := base
	traced.TraceID, traced.SpanID, traced.TraceState = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "k=v,<x>=\"y\""
	spanOnly := base
	spanOnly.SpanID = "00f067aa0ba902b7"
	for name, a := range map[string]Announcement{"plain": base, "traced": traced, "span only": spanOnly, "empty": {}} {
		want, err := json.Marshal(outboxLine{Announcement: &a})
		if err != nil {
			t.Fatal(err)
		}
		enc, err := a.Encoded()
		if err != nil {
			t.Fatal(err)
		}
		for form, a := range map[string]Announcement{"as built": a, "encoded": enc} {
			got, err := appendHeld([]byte("x"), a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[1:], want) || got[0] != 'x' {
				t.Errorf("%s, %s:\n got %s\nwant %s", name, form, got, want)
			}
			// Hold sizes its buffer by heldSize: exact for an encoded
			// announcement whose trace fields need no escaping.
			if form == "encoded" && name != "traced" && heldSize(&a) != len(want)+1 {
				t.Errorf("%s: heldSize %d, the line and its newline are %d", name, heldSize(&a), len(want)+1)
			}
			var back outboxLine
			if err := json.Unmarshal(got[1:], &back); err != nil || back.Announcement == nil {
				t.Fatalf("%s, %s: %v", name, form, err)
			}
			e1, _ := back.EnrichedJSON()
			e2, _ := a.EnrichedJSON()
			i1, _ := back.IndexedJSON()
			i2, _ := a.IndexedJSON()
			if !bytes.Equal(e1, e2) || !bytes.Equal(i1, i2) || back.TraceID != a.TraceID || back.SpanID != a.SpanID || back.TraceState != a.TraceState {
				t.Errorf("%s, %s: read back as %+v", name, form, *back.Announcement)
			}
		}
	}
}
