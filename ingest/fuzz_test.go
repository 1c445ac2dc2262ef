package ingest

import (
	"context"
	"encoding/json"
	"testing"

	"engram/backend"
	"engram/model"
)

// memArchive is a one-object archive for fuzzing the object reader.
type memArchive struct {
	key  string
	body []byte
}

func (m memArchive) Get(_ context.Context, key string, _ int64) (*Object, error) {
	if key != m.key {
		return nil, backend.ErrNotFound
	}
	return &Object{Key: key, Body: m.body, Size: int64(len(m.body))}, nil
}

func (m memArchive) List(_ context.Context, _ string, fn func(string, int64) error) error {
	return fn(m.key, int64(len(m.body)))
}

// FuzzArchiveObject feeds arbitrary bytes to the archive-object reader that
// reindex uses: it must never panic, and what it accepts must make an index
// document that encodes as JSON.
func FuzzArchiveObject(f *testing.F) {
	f.Add([]byte(`{"eventId":"e1","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{"sessionId":"s"},"input":{"text":"t","embedding":[0.1]},"importanceScore":0.5,"tags":[]}`), "events/2026/05/08/e1.json")
	f.Add([]byte(`{"description":"d","kind":"outcome","agentId":"a","tenantId":"t","caseId":"c","result":"ok"}`), "events/2026/05/08/x.json")
	f.Add([]byte(`not json`), "events/2026/05/08/y.json")
	f.Add([]byte(`{"eventId":"../../x","timestamp":"2026-05-08T10:00:00+05:00"}`), "events/2026/05/08/z.json")
	f.Fuzz(func(t *testing.T, body []byte, key string) {
		r := &reindexer{cfg: ReindexConfig{Archive: memArchive{key, body}}}
		doc, err := r.doc(context.Background(), key)
		if err != nil {
			return
		}
		if doc.ObjectStorageKey != key {
			t.Fatalf("document key %q, object key %q", doc.ObjectStorageKey, key)
		}
		if want, err := model.ArchiveKey(doc.EventID, doc.Timestamp); err != nil || want != key {
			t.Fatalf("accepted an object whose key %q does not match its event (%q, %v)", key, want, err)
		}
		if _, err := json.Marshal(doc); err != nil {
			t.Fatalf("index document does not encode: %v", err)
		}
	})
}
