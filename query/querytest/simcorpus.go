package querytest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"engram/ingest/embed"
	"engram/model"
)

// textCorpus makes texts with the statistics of real prose about many
// subjects: a Zipf-distributed vocabulary, topics of 60 words each with
// their own Zipf weights, and each text 8 to 40 words drawn from one or
// two topics (70%) and the whole vocabulary (30%). Embedded by
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

// simTypes are the event types SimDocs cycles through.
var simTypes = []string{model.TypeUserInput, "agent_action", "tool_result", "observation", "action", "outcome"}

// simTenants are the tenants SimDocs cycles through (one none).
var simTenants = []string{"", "acme", "globex"}

// SimStart is the time of SimDocs' first document; each next one is a
// minute later.
var SimStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// SimDocs calls fn with batches of n documents whose summaries are
// textCorpus texts, embedded at dim by the hashed embedder, in the
// tenants of simTenants and the types of simTypes, a minute apart: the
// same documents on every backend, for the similarity benchmarks and
// tests. fn may keep the batch.
func SimDocs(n, dim, batch int, fn func([]*model.IndexDoc) error) error {
	c := newTextCorpus(7, 30000, 2000)
	h := embed.Hashed{Dim: dim}
	docs := make([]*model.IndexDoc, 0, batch)
	texts := make([]string, 0, batch)
	for i := range n {
		t := c.text()
		id := fmt.Sprintf("v%07d", i)
		ts := SimStart.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		key, _ := model.ArchiveKey(id, ts)
		docs = append(docs, &model.IndexDoc{
			EventID: id, Timestamp: ts, EventType: simTypes[(i/3)%len(simTypes)],
			SessionID: fmt.Sprintf("sess-%d", i/30), AgentID: "agent-1", Summary: t,
			Structured: []byte(`{}`), ImportanceScore: 0.5, RewardScore: 0.5, Confidence: 0.5,
			DecayFactor: 1, ObjectStorageKey: key, Tags: []string{},
			TurnID: fmt.Sprintf("turn-%d", i/3), TenantID: simTenants[i%len(simTenants)],
		})
		texts = append(texts, t)
		if len(docs) == batch || i == n-1 {
			vs, err := h.Embed(context.Background(), texts)
			if err != nil {
				return err
			}
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
