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
	key := mustJSON(e.ObjectStorageKey)
	patches := []patch{
		{name: "input", inner: []patch{{name: "embedding", value: emb}}},
		{name: "importanceScore", value: mustJSON(e.ImportanceScore)},
		{name: "objectStorageKey", value: key},
		// The source system's readers take tags.length: give them [] rather
		// than an absent member.
		{name: "tags", value: json.RawMessage("[]"), ifAbsent: true},
	}
	out := make([]byte, 0, len(raw)+len(emb)+len(key)+48)
	return appendPatched(out, raw, patches) // raw was decoded: valid JSON
}

// patch is what appendPatched does to one member of an object.
type patch struct {
	name     string
	value    []byte  // the member's new value, or
	inner    []patch // the patches of its value, an object it must have
	ifAbsent bool    // value only where the object has no such member
	seen     bool
}

// appendPatched appends the valid JSON object raw, compacted, with each
// member named in ps patched (every member so called) or, where raw has
// none, added at its end in the order of ps.
func appendPatched(out, raw []byte, ps []patch) ([]byte, error) {
	out = append(out, '{')
	var err error
	walkErr := eachMember(raw, func(quoted, value []byte) bool {
		var name string
		if name, err = memberName(quoted); err != nil {
			return false
		}
		out = append(appendName(appendComma(out), name), ':')
		p := find(ps, name)
		if p == nil {
			out = compactValid(out, value)
			return true
		}
		p.seen = true
		switch {
		case p.inner != nil:
			if out, err = appendPatched(out, value, p.inner); err != nil {
				err = fmt.Errorf("%s: %w", name, err)
			}
		case p.ifAbsent:
			out = compactValid(out, value)
		default:
			out = append(out, p.value...)
		}
		return err == nil
	})
	if walkErr != nil {
		return nil, walkErr
	}
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		switch {
		case p.seen:
		case p.inner != nil:
			return nil, fmt.Errorf("%s: %w", p.name, errNotObject)
		default:
			out = append(appendName(appendComma(out), p.name), ':')
			out = append(out, p.value...)
		}
	}
	return append(out, '}'), nil
}

func find(ps []patch, name string) *patch {
	for i := range ps {
		if ps[i].name == name {
			return &ps[i]
		}
	}
	return nil
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
