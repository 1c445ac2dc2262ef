package osindex

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/model"
	"engram/query"
)

func tailID(w, i int) string { return fmt.Sprintf("tail-%d-%05d", w, i) }

func tailDoc(w, i int) *model.IndexDoc {
	ts := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	return &model.IndexDoc{
		EventID: tailID(w, i), Timestamp: ts, EventType: model.TypeObservation, SessionID: "s",
		Summary: "tail document", Embedding: []float64{1, 0, 0, 0, 0, 0, 0, float64(i%7) + 1}, Structured: []byte("{}"),
		ImportanceScore: 0.5, RewardScore: 0.5, Confidence: 0.5, DecayFactor: 1, Tags: []string{},
		TurnID: fmt.Sprintf("t-%d-%d", w, i/3),
	}
}

// writeTail writes total documents of writer w through ix in batches of
// 1 to 250 (no refresh: they appear with the periodic refresh).
func writeTail(ctx context.Context, ix *Index, w, total int) error {
	for i := 0; i < total; {
		n := min(1+(i*7919+w*31)%250, total-i)
		docs := make([]*model.IndexDoc, n)
		for k := range docs {
			docs[k] = tailDoc(w, i+k)
		}
		for k, res := range ix.Write(ctx, docs) {
			if res.Err != nil || !res.Created {
				return fmt.Errorf("write %s: created=%v err=%w", docs[k].EventID, res.Created, res.Err)
			}
		}
		i += n
		time.Sleep(time.Duration(10+i%20) * time.Millisecond) // writing spans several polls
	}
	return nil
}

// pollTail calls Tail every 200 ms from cur until it has seen want
// documents, checking each is new; it returns them in the order seen.
func pollTail(t *testing.T, r *Reader, cur query.Cursor, want int, limit int, errs <-chan error) []string {
	t.Helper()
	ctx := context.Background()
	seen := map[string]bool{}
	var got []string
	deadline := time.Now().Add(3 * time.Minute)
	polls, maxCursor, late := 0, 0, 0
	var lastK string
	for len(got) < want {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of %d documents before the deadline", len(got), want)
		}
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		default:
		}
		p, err := r.Tail(ctx, cur, limit)
		if err != nil {
			t.Fatal(err)
		}
		polls++
		for _, d := range p.Docs {
			if seen[d.EventID] {
				t.Fatalf("%s again (after %d documents)", d.EventID, len(got))
			}
			seen[d.EventID] = true
			got = append(got, d.EventID)
			if d.IngestedAt < lastK {
				late++ // visible after a document ingested later
			}
			lastK = max(lastK, d.IngestedAt)
		}
		if len(p.Docs) == 0 && p.Next != cur {
			t.Fatal("an empty poll moved the cursor")
		}
		cur = p.Next
		maxCursor = max(maxCursor, len(cur))
		if len(p.Docs) < limit {
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("%d documents in %d polls; largest cursor %d bytes; %d came after a document ingested later", len(got), polls, maxCursor, late)
	// Everything indexed is seen: one more refresh brings nothing new.
	time.Sleep(1500 * time.Millisecond)
	if p, err := r.Tail(ctx, cur, limit); err != nil || len(p.Docs) != 0 {
		t.Fatalf("after the last document: %d more, %v", len(p.Docs), err)
	}
	return got
}

// TestTailWhileWriting polls Tail every 200 ms while a goroutine writes
// 10,000 documents through osindex in batches, relying on the periodic
// refresh: the poller sees every document exactly once, in the order
// written.
func TestTailWhileWriting(t *testing.T) {
	const total = 10000
	ix := openIndex(t, testIndex(t), nil)
	writeDocs(t, ix, []*model.IndexDoc{tailDoc(9, 0)})
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	cur, err := r.TailStart(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		errs <- writeTail(context.Background(), ix, 0, total)
		t.Logf("written in %v", time.Since(start).Round(time.Millisecond))
	}()
	got := pollTail(t, r, cur, total, 1000, errs)
	wg.Wait()
	for i, id := range got {
		if want := tailID(0, i); id != want {
			t.Fatalf("document %d: %s, want %s", i, id, want)
		}
	}
}

// TestTailConcurrentWriters: four writers at once, so documents become
// visible out of ingested_at order; the overlap window still gives every
// document exactly once, each writer's in its order.
func TestTailConcurrentWriters(t *testing.T) {
	const writers, each = 4, 2500
	ix := openIndex(t, testIndex(t), nil)
	r := newReader(t, ix, query.Options{})
	cur, err := r.TailStart(context.Background())
	if err != nil || cur != "" {
		t.Fatalf("TailStart of an empty index = %q, %v", cur, err)
	}
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := writeTail(context.Background(), ix, w, each); err != nil {
				errs <- err
			}
		}()
	}
	got := pollTail(t, r, cur, writers*each, 1000, errs)
	wg.Wait()
	next := make([]int, writers)
	for _, id := range got {
		var w, i int
		if _, err := fmt.Sscanf(id, "tail-%d-%d", &w, &i); err != nil {
			t.Fatal(err)
		}
		if i != next[w] {
			t.Fatalf("writer %d: document %d, want %d", w, i, next[w])
		}
		next[w]++
	}
}

// bulkRaw indexes docs with the ingested_at given (as a writer that
// stamped them then would), refreshing.
func bulkRaw(t testing.TB, u, index string, docs []*model.IndexDoc, ingested []time.Time) {
	t.Helper()
	var b strings.Builder
	for i, d := range docs {
		c := *d
		c.IngestedAt = ingested[i].UTC().Format(ingestedAtLayout)
		src, _ := json.Marshal(&c)
		fmt.Fprintf(&b, `{"create":{"_id":%q}}`+"\n%s\n", d.EventID, src)
	}
	data := mustAdmin(t, u, "POST", "/"+index+"/_bulk?refresh=true", b.String())
	if strings.Contains(string(data), `"errors":true`) {
		t.Fatalf("bulk: %s", data)
	}
}

// TestTailLateDocument: a document stamped before the last one delivered
// that becomes visible later comes in the next poll, once, if it is within
// the overlap window; one further behind is missed (documented).
func TestTailLateDocument(t *testing.T) {
	u := osURL(t)
	name := testIndex(t)
	ix := openIndex(t, name, nil)
	r := newReader(t, ix, query.Options{})
	now := time.Now()
	var first []*model.IndexDoc
	var at []time.Time
	for i := range 5 {
		first = append(first, tailDoc(0, i))
		at = append(at, now.Add(time.Duration(i)*time.Millisecond))
	}
	bulkRaw(t, u, name, first, at)
	got := tailAll(t, r, "", 3)
	if d := diffIDs(got, idsOf(first)); d != "" {
		t.Fatal(d)
	}
	// tailAll's last cursor is lost; poll again to get it.
	p, err := r.Tail(context.Background(), "", 100)
	if err != nil || len(p.Docs) != 5 {
		t.Fatalf("Tail = %d, %v", len(p.Docs), err)
	}
	cur := p.Next
	bulkRaw(t, u, name, []*model.IndexDoc{tailDoc(1, 0), tailDoc(1, 1), tailDoc(1, 2)},
		[]time.Time{now.Add(-3 * time.Second), now.Add(10 * time.Millisecond), now.Add(-time.Minute)})
	if d := diffIDs(tailAll(t, r, cur, 10), []string{tailID(1, 0), tailID(1, 1)}); d != "" {
		t.Errorf("after a late document: %s (want the late one first, the one a minute late missed)", d)
	}
}

// TestTailSmallSeenCap: with a cursor that keeps only 5 ids, the window
// shrinks (and closes, for groups of equal ingested_at larger than 5)
// but polling still sees everything once, in order.
func TestTailSmallSeenCap(t *testing.T) {
	ix := openIndex(t, testIndex(t), nil)
	r := newReader(t, ix, query.Options{})
	r.seenCap = 5
	var all []*model.IndexDoc
	for i := 0; i < 60; {
		n := []int{1, 2, 12, 3, 7}[i%5]
		docs := make([]*model.IndexDoc, n)
		for k := range docs {
			docs[k] = tailDoc(0, i+k)
		}
		writeDocs(t, ix, docs)
		all = append(all, docs...)
		i += n
		time.Sleep(2 * time.Millisecond)
	}
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 3, 8} {
		if d := diffIDs(tailAll(t, r, "", limit), idsOf(all)); d != "" {
			t.Errorf("limit %d: %s", limit, d)
		}
	}
	start, err := r.TailStart(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := tailAll(t, r, start, 10); len(got) != 0 {
		t.Errorf("Tail(TailStart) = %v", got)
	}
}

// TestThreeShards: on an index of three shards, where the documents of
// one request share ingested_at and _seq_no repeats across shards, Recent
// and Tail still list every document once, in opposite orders.
func TestThreeShards(t *testing.T) {
	ix := openIndex(t, testIndex(t), func(c *Config) { c.Shards = 3 })
	var all []*model.IndexDoc
	for b := range 4 {
		docs := make([]*model.IndexDoc, 150)
		for k := range docs {
			docs[k] = tailDoc(b, k)
		}
		writeDocs(t, ix, docs)
		all = append(all, docs...)
	}
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	tail := tailAll(t, r, "", 13)
	if d := diffIDs(sortedIDs(tail), sortedIDs(idsOf(all))); d != "" {
		t.Fatalf("Tail as a set: %s", d)
	}
	recent := pageAll(t, 17, func(c query.Cursor, n int) (query.Page, error) {
		return r.Recent(context.Background(), "", c, n)
	})
	slices.Reverse(recent)
	if d := diffIDs(recent, tail); d != "" {
		t.Errorf("Recent reversed vs Tail: %s", d)
	}
	// Requests stay in order: each batch after the one before.
	batch := func(id string) int {
		var w, i int
		if _, err := fmt.Sscanf(id, "tail-%d-%d", &w, &i); err != nil {
			t.Fatal(err)
		}
		return w
	}
	for i := 1; i < len(tail); i++ {
		if batch(tail[i]) < batch(tail[i-1]) {
			t.Fatalf("Tail: %s after %s", tail[i], tail[i-1])
		}
	}
}
