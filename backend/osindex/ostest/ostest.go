package ostest

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Service returns the environment variable name, or skips the test (fails
// it with ENGRAM_REQUIRE_SERVICES=1) when it is not set.
func Service(t testing.TB, name string) string {
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

// KNN reports whether the test cluster has the k-NN plugin
// (ENGRAM_TEST_OPENSEARCH_KNN=1). Under ENGRAM_REQUIRE_SERVICES=1 it must:
// CI installs the plugin, and tests that need it may not quietly skip.
func KNN(t testing.TB) bool {
	t.Helper()
	if os.Getenv("ENGRAM_TEST_OPENSEARCH_KNN") == "1" {
		return true
	}
	if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
		t.Fatal("ENGRAM_TEST_OPENSEARCH_KNN is not 1 but ENGRAM_REQUIRE_SERVICES=1: the test cluster lacks the k-NN plugin")
	}
	return false
}

// URL is the plain-HTTP test cluster.
func URL(t testing.TB) string { return Service(t, "ENGRAM_TEST_OPENSEARCH_URL") }

// Index is a fresh index name starting with prefix, deleted when the test
// ends.
func Index(t testing.TB, prefix string) string {
	t.Helper()
	u := URL(t)
	b := make([]byte, 6)
	rand.Read(b)
	name := prefix + hex.EncodeToString(b)
	t.Cleanup(func() { Admin(t, u, "DELETE", "/"+name, "") })
	return name
}

// Admin sends a request straight to the cluster at base.
func Admin(t testing.TB, base, method, path, body string) (int, []byte) {
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
		ct := "application/json"
		if strings.HasSuffix(path, "_bulk") || strings.Contains(path, "_bulk?") {
			ct = "application/x-ndjson"
		}
		req.Header.Set("Content-Type", ct)
	}
	c := &http.Client{Timeout: 120 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// MustAdmin is Admin that wants a 2xx answer.
func MustAdmin(t testing.TB, base, method, path, body string) []byte {
	t.Helper()
	code, data := Admin(t, base, method, path, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, code, data)
	}
	return data
}

// SourceIndexBody is the source system's own index definition
// (docs/data-contract.md, The index document) with 1 shard, no replica, lucene instead of faiss and
// dimension 8: no extension fields.
const SourceIndexBody = `{
  "settings": {"index": {"knn": true, "number_of_shards": 1, "number_of_replicas": 0, "knn.algo_param.ef_search": 100}},
  "mappings": {"properties": {
    "event_id": {"type": "keyword"},
    "timestamp": {"type": "date"},
    "event_type": {"type": "keyword"},
    "session_id": {"type": "keyword"},
    "user_id": {"type": "keyword"},
    "agent_id": {"type": "keyword"},
    "summary": {"type": "text", "analyzer": "english"},
    "embedding": {"type": "knn_vector", "dimension": 8,
      "method": {"name": "hnsw", "engine": "lucene", "space_type": "l2", "parameters": {"m": 16, "ef_construction": 128}}},
    "structured": {"type": "object"},
    "importance_score": {"type": "float"},
    "reward_score": {"type": "float"},
    "confidence": {"type": "float"},
    "retrieval_count": {"type": "integer"},
    "decay_factor": {"type": "float"},
    "object_storage_key": {"type": "keyword"},
    "tags": {"type": "keyword"},
    "retrieval_priority": {"type": "float"},
    "reinforcement_score": {"type": "float"},
    "embedding_meta": {"type": "object"}
  }}
}`
