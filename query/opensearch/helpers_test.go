package opensearch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"engram/ingest/osindex"
	"engram/model"
	"engram/query"
)

// osURL is the test cluster's URL; without ENGRAM_TEST_OPENSEARCH_URL the
// test is skipped (failed with ENGRAM_REQUIRE_SERVICES=1).
func osURL(t testing.TB) string {
	t.Helper()
	const name = "ENGRAM_TEST_OPENSEARCH_URL"
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is not set and ENGRAM_REQUIRE_SERVICES=1 (source .ci/services/.env)", name)
		}
		t.Skipf("%s not set: no OpenSearch to test against (bash .ci/services/up.sh && source .ci/services/.env)", name)
	}
	return v
}

// testIndex is a fresh index name, deleted when the test ends.
func testIndex(t testing.TB) string {
	t.Helper()
	u := osURL(t)
	b := make([]byte, 6)
	rand.Read(b)
	name := "engram-test-q-" + hex.EncodeToString(b)
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

func mustAdmin(t testing.TB, base, method, path, body string) []byte {
	t.Helper()
	code, data := admin(t, base, method, path, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, code, data)
	}
	return data
}

// openIndex opens (creating) the index through osindex.
func openIndex(t testing.TB, name string, mod func(*osindex.Config)) *osindex.Index {
	t.Helper()
	cfg := osindex.Config{URLs: []string{osURL(t)}, Index: name, Dimension: 8, Logf: t.Logf}
	if mod != nil {
		mod(&cfg)
	}
	ix, err := osindex.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func writeDocs(t testing.TB, ix *osindex.Index, docs []*model.IndexDoc) {
	t.Helper()
	for i, res := range ix.Write(context.Background(), docs) {
		if res.Err != nil || !res.Created {
			t.Fatalf("write %s: created=%v err=%v", docs[i].EventID, res.Created, res.Err)
		}
	}
}

func newReader(t testing.TB, ix *osindex.Index, opts query.Options) *Reader {
	t.Helper()
	r, err := New(context.Background(), ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
