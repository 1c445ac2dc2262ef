package osindex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/ingest/embed"
	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// textCorpus makes texts with the statistics of real prose about many
// subjects, as the embedded index's similarity benchmarks do (the same
// generator and seeds, so both backends are measured on the same
// documents): a Zipf-distributed vocabulary, topics of 60 words each
// with their own Zipf weights, and each text 8 to 40 words drawn from one
// or two topics (70%) and the whole vocabulary (30%). Embedded by
// embed.Hashed they are unit vectors, dense, clustered and anisotropic, as
// a real model's embeddings are, unlike i.i.d. noise.
type textCorpus struct {
	rng    *rand.Rand
	vocab  []string
	topics [][]int
	zv     *rand.Zipf
	zt     *rand.Zipf
	zw     *rand.Zipf
}

func newTextCorpus(seed uint64, vocab, topics int) *textCorpus {
	rng := rand.New(rand.NewPCG(seed, 39))
	c := &textCorpus{rng: rng}
	syl := []string{"ka", "lo", "mi", "ren", "sa", "tu", "vo", "ex", "qu", "di", "an", "or", "pel", "zi", "nu", "bra"}
	for i := range vocab {
		var b strings.Builder
		for n := i; ; n /= len(syl) {
			b.WriteString(syl[n%len(syl)])
			if n < len(syl) {
				break
			}
		}
		c.vocab = append(c.vocab, b.String())
	}
	for range topics {
		words := make([]int, 60)
		for j := range words {
			words[j] = rng.IntN(vocab)
		}
		c.topics = append(c.topics, words)
	}
	c.zv = rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	c.zt = rand.NewZipf(rng, 1.05, 4, uint64(topics-1))
	c.zw = rand.NewZipf(rng, 1.2, 1, 59)
	return c
}

func (c *textCorpus) text() string {
	t1, t2 := c.topics[c.zt.Uint64()], c.topics[c.rng.IntN(len(c.topics))]
	n := 8 + c.rng.IntN(33)
	words := make([]string, n)
	for i := range words {
		switch p := c.rng.Float64(); {
		case p < 0.55:
			words[i] = c.vocab[t1[c.zw.Uint64()]]
		case p < 0.7:
			words[i] = c.vocab[t2[c.zw.Uint64()]]
		default:
			words[i] = c.vocab[c.zv.Uint64()]
		}
	}
	return strings.Join(words, " ")
}

var simTypes = []string{model.TypeUserInput, "agent_action", "tool_result", "observation", "action", "outcome"}

// simDocs calls fn with batches of n documents embedded at dim by the
// hashed embedder over textCorpus texts, in 3 tenants (one none), 6 types
// and a minute apart; fn's time is not the generator's.
func simDocs(n, dim, batch int, fn func([]*model.IndexDoc) error) error {
	c := newTextCorpus(7, 30000, 2000)
	h := embed.Hashed{Dim: dim}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]*model.IndexDoc, 0, batch)
	texts := make([]string, 0, batch)
	for i := range n {
		t := c.text()
		id := fmt.Sprintf("v%07d", i)
		ts := start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		key, _ := model.ArchiveKey(id, ts)
		d := &model.IndexDoc{
			EventID: id, Timestamp: ts, EventType: simTypes[(i/3)%len(simTypes)],
			SessionID: fmt.Sprintf("sess-%d", i/30), AgentID: "agent-1", Summary: t,
			Structured: []byte(`{}`), ImportanceScore: 0.5, RewardScore: 0.5, Confidence: 0.5,
			DecayFactor: 1, ObjectStorageKey: key, Tags: []string{},
			TurnID: fmt.Sprintf("turn-%d", i/3), TenantID: []string{"", "acme", "globex"}[i%3],
		}
		docs, texts = append(docs, d), append(texts, t)
		if len(docs) == batch || i == n-1 {
			vs, _ := h.Embed(context.Background(), texts)
			for j, v := range vs {
				docs[j].Embedding = v
			}
			if err := fn(docs); err != nil {
				return err
			}
			docs, texts = make([]*model.IndexDoc, 0, batch), texts[:0]
		}
	}
	return nil
}

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
	if err := simDocs(n, dim, 200, func(d []*model.IndexDoc) error {
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
