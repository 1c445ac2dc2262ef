package osindex

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/model"
)

// service returns the value of the environment variable name, or skips the
// test (fails it with ENGRAM_REQUIRE_SERVICES=1) when it is not set.
func service(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is not set and ENGRAM_REQUIRE_SERVICES=1 (source .ci/services/.env)", name)
		}
		t.Skipf("%s not set: no OpenSearch to test against (bash .ci/services/up.sh && source .ci/services/.env)", name)
	}
	return v
}

func osURL(t testing.TB) string { return service(t, "ENGRAM_TEST_OPENSEARCH_URL") }

// testIndex is a fresh index name, deleted when the test ends.
func testIndex(t testing.TB) string {
	t.Helper()
	u := osURL(t)
	b := make([]byte, 6)
	rand.Read(b)
	name := "engram-test-" + hex.EncodeToString(b)
	t.Cleanup(func() { admin(t, u, "DELETE", "/"+name, "") })
	return name
}

// admin sends a request straight to the plain-HTTP test cluster.
func admin(t testing.TB, base, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, strings.TrimRight(base, "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// mustAdmin is admin that wants a 2xx answer.
func mustAdmin(t testing.TB, base, method, path, body string) []byte {
	t.Helper()
	code, data := admin(t, base, method, path, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, code, data)
	}
	return data
}

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
	json.Indent(&out, b, "", " ")
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
