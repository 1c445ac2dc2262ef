package model

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Enrich sets what the pipeline adds to an event: the embedding, the
// importance prior and the archive key.
func (e *Event) Enrich(embedding []float64, importance float64, key string) {
	e.Input.Embedding = embedding
	e.ImportanceScore = importance
	e.ObjectStorageKey = key
}

// ArchiveJSON is the archived event: the event as it arrived, with
// input.embedding, importanceScore and objectStorageKey set, every other
// member (unknown ones included) kept in its place, compacted. It is written
// in one walk over the event's bytes: splitting the object and encoding it
// again cost three copies of the event and a tenth of the stage's CPU.
func (e *Event) ArchiveJSON() ([]byte, error) {
	raw := e.raw
	if raw == nil {
		return json.Marshal(e)
	}
	emb, err := json.Marshal(nonNil(e.Input.Embedding))
	if err != nil {
		return nil, fmt.Errorf("input.embedding: %w", err)
	}
	derived := [...]member{
		{"input", nil}, // written from the event's own input
		{"importanceScore", mustJSON(e.ImportanceScore)},
		{"objectStorageKey", mustJSON(e.ObjectStorageKey)},
		// The source system's readers take tags.length: give them [] rather
		// than an absent member.
		{"tags", json.RawMessage("[]")},
	}
	var seen [len(derived)]bool
	out := make([]byte, 0, len(raw)+len(emb)+len(derived[2].value)+48)
	out = append(out, '{')
	var inputErr error
	err = eachMember(raw, func(quoted, value []byte) bool { // raw was decoded: valid JSON
		name, err := memberName(quoted)
		if err != nil {
			inputErr = err
			return false
		}
		out = appendName(appendComma(out), name)
		out = append(out, ':')
		switch name {
		case "input":
			seen[0] = true
			out, inputErr = appendWithEmbedding(out, value, emb)
			return inputErr == nil
		case "importanceScore", "objectStorageKey":
			i := 1
			if name == "objectStorageKey" {
				i = 2
			}
			seen[i] = true
			out = append(out, derived[i].value...)
			return true
		case "tags":
			seen[3] = true
		}
		out = compactValid(out, value)
		return true
	})
	if err == nil {
		err = inputErr
	}
	if err == nil && !seen[0] {
		err = fmt.Errorf("input: %w", errNotObject)
	}
	if err != nil {
		return nil, err
	}
	for i, m := range derived[1:] {
		if !seen[i+1] {
			out = append(appendName(appendComma(out), m.name), ':')
			out = append(out, m.value...)
		}
	}
	return append(out, '}'), nil
}

// appendWithEmbedding appends the input object with its embedding member
// set to emb (every member so called, or one added at its end).
func appendWithEmbedding(out, input, emb []byte) ([]byte, error) {
	out = append(out, '{')
	found := false
	var nameErr error
	err := eachMember(input, func(quoted, value []byte) bool {
		var name string
		if name, nameErr = memberName(quoted); nameErr != nil {
			return false
		}
		out = append(appendName(appendComma(out), name), ':')
		if name == "embedding" {
			found = true
			out = append(out, emb...)
		} else {
			out = compactValid(out, value)
		}
		return true
	})
	if err == nil {
		err = nameErr
	}
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if !found {
		out = append(appendName(appendComma(out), "embedding"), ':')
		out = append(out, emb...)
	}
	return append(out, '}'), nil
}

// appendComma appends the comma that separates a member from the one
// before it: none after the object's opening brace.
func appendComma(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		return append(b, ',')
	}
	return b
}

func nonNil(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with strings and finite floats
	}
	return b
}

// member is one name/value pair of a JSON object, in document order.
type member struct {
	name  string
	value json.RawMessage
}

type object []member

func (o object) get(name string) json.RawMessage {
	for _, m := range o {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

// put replaces every member called name, or appends one.
func (o *object) put(name string, v json.RawMessage) {
	found := false
	for i := range *o {
		if (*o)[i].name == name {
			(*o)[i].value, found = v, true
		}
	}
	if !found {
		*o = append(*o, member{name, v})
	}
}

func (o object) encode() json.RawMessage {
	n := 2
	for _, m := range o {
		n += len(m.name) + len(m.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendName(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// appendName appends name as a JSON string, as json.Marshal writes it.
func appendName(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(b, mustJSON(name)...) // escapes, non-ASCII: let encoding/json decide
		}
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"')
}

// SameEvent reports whether two archived objects hold the same event,
// ignoring what the pipeline derives (embedding, importance, key): a real
// embedder need not return bit-identical vectors for a re-ingested event.
func SameEvent(a, b []byte) bool {
	ca, errA := canonicalWithoutDerived(a)
	cb, errB := canonicalWithoutDerived(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}

func canonicalWithoutDerived(raw []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	delete(v, "importanceScore")
	delete(v, "objectStorageKey")
	if in, ok := v["input"].(map[string]any); ok {
		delete(in, "embedding")
	}
	return json.Marshal(v) // map keys are sorted: a canonical form
}

// DecodeArchived reads an archived object as every reader of the archive
// must (reindex, verify, recovery, the inspector): with Decode's rule for
// member names, exact and each known one at most once, so that all of them
// see the event ingest archived.
func DecodeArchived(body []byte) (*Event, error) {
	ev, err := Decode(body, DecodeOptions{})
	if err != nil {
		return nil, fmt.Errorf("not a valid event: %w", err)
	}
	if ev.EventID == "" {
		return nil, fmt.Errorf("not a valid event: no eventId")
	}
	return ev, nil
}

// ImportanceGiven reports whether the event carried importanceScore (an
// archived event always does; one that lacks it cannot be compared on it).
func (e *Event) ImportanceGiven() bool { return e.present.importance }
