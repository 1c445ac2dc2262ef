package osindex

import (
	"bytes"
	"context"
	"encoding/json"
	"engram/backend/osindex/ostest"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/model"
)

func osURL(t testing.TB) string { return service(t, "ENGRAM_TEST_OPENSEARCH_URL") }

// logs collects Logf lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func testConfig(t testing.TB, index string) Config {
	return Config{
		URLs:      []string{osURL(t)},
		Index:     index,
		Dimension: 8,
		Logf:      t.Logf,
	}
}

func openTest(t testing.TB, cfg Config) *Index {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ix, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func ptr[T any](v T) *T { return &v }

func testDoc(id string) *model.IndexDoc {
	return &model.IndexDoc{
		EventID:          id,
		Timestamp:        "2026-05-08T22:31:25.5+02:00",
		EventType:        model.TypeUserInput,
		SessionID:        "s1",
		UserID:           "u1",
		AgentID:          "a1",
		Summary:          "Design a memory system <with> fast & associative retrieval",
		Embedding:        []float64{0.51, 0.68, 0.85, 0.02, 0.1234567890123, 0.36, 0.53, 0.7},
		Structured:       json.RawMessage(`{"k":[1,2,3],"o":{"x":"y","n":null}}`),
		ImportanceScore:  0.79,
		RewardScore:      0.5,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: "events/2026/05/08/" + id + ".json",
		Tags:             []string{"memory", "design"},
		TurnID:           "turn-1",
		TenantID:         "t1",
		TraceID:          "trace-1",
		Tool:             "search",
		Success:          ptr(true),
		LatencyMs:        ptr(int64(42)),
	}
}

// sourceDoc is a document as the source system writes it: no extensions.
func sourceDoc(id string) *model.IndexDoc {
	return &model.IndexDoc{
		EventID:          id,
		Timestamp:        "2026-05-08T22:31:25.237Z",
		EventType:        "user_input",
		SessionID:        "demo-session-001",
		Summary:          "Design a memory system that preserves complete experience while supporting fast associative retrieval.",
		Embedding:        []float64{0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7},
		Structured:       json.RawMessage(`{}`),
		ImportanceScore:  0.79,
		RewardScore:      0.81,
		Confidence:       0.72,
		DecayFactor:      1,
		ObjectStorageKey: "events/2026/05/08/" + id + ".json",
		Tags:             []string{"memory", "ingestion", "demo"},
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func mustWrite(t testing.TB, ix *Index, docs ...*model.IndexDoc) {
	t.Helper()
	for i, r := range ix.Write(context.Background(), docs) {
		if r.Err != nil || !r.Created {
			t.Fatalf("doc %d: created=%v err=%v", i, r.Created, r.Err)
		}
	}
}

// mapping is the properties of an index's mapping.
func mapping(t testing.TB, index string) map[string]map[string]any {
	t.Helper()
	var m map[string]struct {
		Mappings struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(mustAdmin(t, osURL(t), "GET", "/"+index+"/_mapping", ""), &m); err != nil {
		t.Fatal(err)
	}
	return m[index].Mappings.Properties
}

// settings is an index's settings, flat ("index.knn": "true").
func settings(t testing.TB, index string) map[string]any {
	t.Helper()
	var m map[string]struct {
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(mustAdmin(t, osURL(t), "GET", "/"+index+"/_settings?flat_settings=true", ""), &m); err != nil {
		t.Fatal(err)
	}
	return m[index].Settings
}

// Shared with the reader's tests: see ostest.
func service(t testing.TB, name string) string { return ostest.Service(t, name) }
func testIndex(t testing.TB) string            { return ostest.Index(t, "engram-test-") }
func knnCluster(t testing.TB) bool             { return ostest.KNN(t) }
func admin(t testing.TB, base, method, path, body string) (int, []byte) {
	return ostest.Admin(t, base, method, path, body)
}
func mustAdmin(t testing.TB, base, method, path, body string) []byte {
	return ostest.MustAdmin(t, base, method, path, body)
}
