package querytest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"engram/model"
)

// BenchWords is the vocabulary of the benchmark data set: made-up words (no stop words, distinct
// stems).
var BenchWords = func() []string {
	cons, vows := "bdfgklmnprstvz", "aeiou"
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	var out []string
	for len(out) < 2000 {
		var b strings.Builder
		for range 3 {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		b.WriteByte(cons[rng.IntN(len(cons))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// BenchTurnKey is the turn of benchmark turn i.
func BenchTurnKey(i int) string { return fmt.Sprintf("bt-%06d", i) }

// BenchID is the event id of benchmark document i.
func BenchID(i int) string { return fmt.Sprintf("b-%07d", i) }

// BenchDoc is document i of the data set both readers are benchmarked on:
// turns of four events (every tenth a single source-system shaped document
// without extension fields), 3 tenants, 20 agents, 5,000 sessions, 10 tags,
// summaries of 8 to 14 Zipf-distributed words, 8-dimensional embeddings,
// timestamps step apart. zipf draws indexes into BenchWords.
func BenchDoc(rng *rand.Rand, zipf *rand.Zipf, i int, start time.Time, step time.Duration) *model.IndexDoc {
	ts := start.Add(time.Duration(i) * step)
	words := make([]string, 8+rng.IntN(7))
	for k := range words {
		words[k] = BenchWords[zipf.Uint64()]
	}
	emb := make([]float64, 8)
	for k := range emb {
		emb[k] = math.Round((rng.Float64()*2-1)*1000) / 1000
	}
	var tags []string
	for k := range 10 {
		if rng.IntN(5) == 0 {
			tags = append(tags, fmt.Sprintf("tag%d", k))
		}
	}
	if tags == nil {
		tags = []string{}
	}
	turn := i / 4
	d := &model.IndexDoc{
		EventID:          BenchID(i),
		Timestamp:        ts.Format(time.RFC3339Nano),
		SessionID:        fmt.Sprintf("sess-%04d", turn%5000),
		AgentID:          fmt.Sprintf("agent-%d", turn%20),
		Summary:          strings.Join(words, " "),
		Embedding:        emb,
		Structured:       json.RawMessage(`{}`),
		ImportanceScore:  math.Round(rng.Float64()*1000) / 1000,
		RewardScore:      math.Round(rng.Float64()*100) / 100,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: model.ArchivePrefix(ts) + BenchID(i) + ".json",
		Tags:             tags,
	}
	if turn%10 == 9 { // source-system shaped, alone in its turn
		d.EventType = model.TypeUserInput
		return d
	}
	d.TurnID = BenchTurnKey(turn)
	d.TenantID = fmt.Sprintf("tenant-%d", turn%3)
	switch i % 4 {
	case 0:
		d.EventType = model.TypeUserInput
	case 1, 2:
		d.EventType = model.TypeAgentAction
		d.Tool = []string{"search", "web search", "calculator"}[rng.IntN(3)]
		lat := int64(rng.IntN(2000))
		d.LatencyMs = &lat
	case 3:
		d.EventType = model.TypeToolResult
		ok := rng.IntN(5) != 0
		d.Success = &ok
	}
	return d
}

// BenchCorpusDocs is the size of the benchmark index: documents of
// BenchDoc, the same for every benchmark that builds it.
const BenchCorpusDocs = 1_000_000

// BenchCorpusStart is the benchmark index's first timestamp (one document
// every 2.592 s: 30 days).
var BenchCorpusStart = time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC)

// BenchCorpus calls write with the first n documents of the benchmark
// data set, in batches of 10,000: summaries of 8 to 14 words drawn from a
// Zipf distribution (s = 1.1) over BenchWords, so the most frequent words
// are in most documents, as "error" or "timeout" are in agents' logs.
func BenchCorpus(n int, write func([]*model.IndexDoc) error) error {
	rng := rand.New(rand.NewPCG(1, 1))
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(BenchWords)-1))
	const batch = 10000
	for i := 0; i < n; i += batch {
		docs := make([]*model.IndexDoc, min(batch, n-i))
		for k := range docs {
			docs[k] = BenchDoc(rng, zipf, i+k, BenchCorpusStart, 2592*time.Millisecond)
		}
		if err := write(docs); err != nil {
			return err
		}
	}
	return nil
}
