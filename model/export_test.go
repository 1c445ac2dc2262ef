package model

import (
	"encoding/json"
	"fmt"
)

// DecodeFastAndSlow decodes data, as Decode would see it, both ways: fast
// is nil where decodeFast leaves the event to decodeSlow.
func DecodeFastAndSlow(data []byte, opt DecodeOptions) (fast, slow *Event, slowErr error) {
	data, lead := trimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, nil, nil
	}
	slow, slowErr = decodeSlow(data, lead, opt)
	return decodeFast(data), slow, slowErr
}

// ArchiveJSONReference is ArchiveJSON as it was written before its one-pass
// form: the object split into members, patched and encoded again.
func ArchiveJSONReference(e *Event) ([]byte, error) {
	raw := e.raw
	if raw == nil {
		return json.Marshal(e)
	}
	emb, err := json.Marshal(nonNil(e.Input.Embedding))
	if err != nil {
		return nil, fmt.Errorf("input.embedding: %w", err)
	}
	members, err := splitValid(raw)
	if err != nil {
		return nil, err
	}
	input, err := splitValid(members.get("input"))
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	input.put("embedding", emb)
	members.put("input", input.encode())
	members.put("importanceScore", mustJSON(e.ImportanceScore))
	members.put("objectStorageKey", mustJSON(e.ObjectStorageKey))
	if members.get("tags") == nil {
		members.put("tags", json.RawMessage("[]"))
	}
	enc := members.encode()
	return compactValid(make([]byte, 0, len(enc)), enc), nil
}
