package osindex

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// searchBodies records the bodies of the _search requests it carries.
type searchBodies struct {
	mu     sync.Mutex
	bodies []string
}

func (s *searchBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/_search") && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// last is the body of the last _search request, "" without one.
func (s *searchBodies) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		return ""
	}
	return s.bodies[len(s.bodies)-1]
}

func recordSearches(t testing.TB, r *Reader) *searchBodies {
	t.Helper()
	s := &searchBodies{}
	api, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{
		Addresses: []string{osURL(t)}, Transport: s, DisableRetry: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.api = api
	return s
}

// TestSimilarGraph: on an l2 index (the source system's mapping) of
// normalized embeddings, Similar is a k-NN query on the HNSW graph and
// finds the exact cosine neighbours with their cosines, within a tenant
// too; a target whose embedding is not of unit length is scored by the
// exact scan, as is every target on an index in another space.
func TestSimilarGraph(t *testing.T) {
	if !knnCluster(t) {
		t.Skip("needs the k-NN plugin")
	}
	const n, dim = 600, 64
	name := testIndex(t)
	ix := openTest(t, Config{URLs: []string{osURL(t)}, Index: name, Dimension: dim, Refresh: "true"})
	var docs []*model.IndexDoc
	if err := querytest.SimDocs(n, dim, 200, func(d []*model.IndexDoc) error {
		writeDocs(t, ix, d)
		docs = append(docs, d...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// One document of another length: the exact scan's.
	odd := docs[5]
	mustAdmin(t, osURL(t), "DELETE", "/"+name+"/_doc/"+odd.EventID+"?refresh=true", "")
	odd.Embedding = slices.Clone(odd.Embedding)
	for i := range odd.Embedding {
		odd.Embedding[i] *= 3
	}
	writeDocs(t, ix, []*model.IndexDoc{odd})
	ctx := context.Background()
	check := func(r *Reader, rec *searchBodies, visible []*model.IndexDoc, target *model.IndexDoc, k int, wantPath string) {
		t.Helper()
		got, err := r.Similar(ctx, target.EventID, k)
		if err != nil {
			t.Fatal(err)
		}
		if body := rec.last(); !strings.Contains(body, wantPath) {
			t.Errorf("Similar(%s): request %.200s, want %s", target.EventID, body, wantPath)
		}
		var want []float64
		for _, d := range visible {
			if d.EventID != target.EventID {
				want = append(want, querytest.Cosine(target.Embedding, d.Embedding))
			}
		}
		slices.Sort(want)
		slices.Reverse(want)
		if len(got) != k {
			t.Fatalf("Similar(%s): %d results, want %d", target.EventID, len(got), k)
		}
		for i, s := range got {
			c := querytest.Cosine(target.Embedding, s.Doc.Embedding)
			if math.Abs(c-want[i]) > 1e-4 || math.Abs(s.Score-c) > 1e-4 {
				t.Errorf("Similar(%s) result %d: %s score %.5f cosine %.5f, want %.5f", target.EventID, i, s.Doc.EventID, s.Score, c, want[i])
			}
		}
	}
	r := newReader(t, ix, query.Options{})
	rec := recordSearches(t, r)
	for _, i := range []int{0, 1, 77, n / 2, n - 1} {
		check(r, rec, docs, docs[i], 10, `"knn"`)
	}
	check(r, rec, docs, odd, 10, `"script_score"`)

	rt := newReader(t, ix, query.Options{Tenant: "acme"})
	rect := recordSearches(t, rt)
	var acme []*model.IndexDoc
	for _, d := range docs {
		if d.TenantID == "acme" {
			acme = append(acme, d)
		}
	}
	check(rt, rect, acme, acme[3], 10, `"knn"`)
}

func TestCosOfScore(t *testing.T) {
	for _, c := range []float64{-1, -0.5, 0, 0.3, 0.99, 1} {
		d2 := 2 - 2*c
		for space, s := range map[string]float64{
			"cosinesimil":  (1 + c) / 2,
			"l2":           1 / (1 + d2),
			"innerproduct": map[bool]float64{true: 1 + c, false: 1 / (1 - c)}[c >= 0],
		} {
			if got := cosOfScore(space, s); math.Abs(got-c) > 1e-12 {
				t.Errorf("cosOfScore(%s, %g) = %g, want %g", space, s, got, c)
			}
		}
	}
}
