package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

func openIndex(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func write(t testing.TB, db *DB, docs []*model.IndexDoc) {
	t.Helper()
	for i, r := range db.Write(context.Background(), docs) {
		if r.Err != nil || !r.Created {
			t.Fatalf("write %s: created=%v err=%v", docs[i].EventID, r.Created, r.Err)
		}
	}
}

func TestContract(t *testing.T) { runContract(t) }

// TestContractPlans runs the contract with each way of probing equalities,
// with and without the time driver forced and with and without time
// ranges bounding the seqs, so every SQL shape is checked against the
// reference.
func TestContractPlans(t *testing.T) {
	defer func(m, n, b int) { probeMode, maxTimeDriven, maxTimeBounded = m, n, b }(probeMode, maxTimeDriven, maxTimeBounded)
	for _, c := range []struct {
		name          string
		mode, time, b int
	}{{"exists", probeAlwaysExists, 0, 1 << 30}, {"in", probeAlwaysIn, 1 << 30, 1 << 30}, {"unbounded time", 0, 0, 0}} {
		probeMode, maxTimeDriven, maxTimeBounded = c.mode, c.time, c.b
		t.Run(c.name, runContract)
	}
}

func runContract(t *testing.T) {
	db, path := openIndex(t)
	querytest.Run(t, querytest.Harness{
		Write: func(t testing.TB, docs []*model.IndexDoc) { write(t, db, docs) },
		Open: func(t testing.TB, opts query.Options) query.Reader {
			r, err := OpenReader(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	})
}

// TestTailWhileWriting polls Tail every few milliseconds while another
// goroutine writes 10,000 documents in batches through its own connection:
// the poller sees every document exactly once, in ingestion order.
func TestTailWhileWriting(t *testing.T) {
	const total = 10000
	db, path := openIndex(t)
	write(t, db, []*model.IndexDoc{tailDoc(-1)}) // the schema exists before the reader opens
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	cur, err := r.TailStart(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	writeErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		for i := 0; i < total; {
			n := min(1+(i*7919)%250, total-i)
			docs := make([]*model.IndexDoc, n)
			for k := range docs {
				docs[k] = tailDoc(i + k)
			}
			for _, res := range db.Write(ctx, docs) {
				if res.Err != nil || !res.Created {
					writeErr <- fmt.Errorf("write: %v %w", res.Created, res.Err)
					return
				}
			}
			i += n
			time.Sleep(time.Duration(i%3) * time.Millisecond)
		}
	}()

	next := 0
	deadline := time.Now().Add(2 * time.Minute)
	for next < total {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of %d documents before the deadline", next, total)
		}
		select {
		case err := <-writeErr:
			t.Fatal(err)
		default:
		}
		p, err := r.Tail(ctx, cur, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Docs {
			if want := tailID(next); d.EventID != want {
				t.Fatalf("document %d: %s, want %s", next, d.EventID, want)
			}
			next++
		}
		if len(p.Docs) == 0 && p.Next != cur {
			t.Fatal("an empty poll moved the cursor")
		}
		cur = p.Next
		if len(p.Docs) < 500 {
			time.Sleep(3 * time.Millisecond)
		}
	}
	wg.Wait()
	if p, err := r.Tail(ctx, cur, 500); err != nil || len(p.Docs) != 0 {
		t.Fatalf("after the last document: %d more, %v", len(p.Docs), err)
	}
}

func tailID(i int) string { return fmt.Sprintf("tail-%05d", i) }

func tailDoc(i int) *model.IndexDoc {
	ts := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	return &model.IndexDoc{
		EventID: tailID(i), Timestamp: ts, EventType: model.TypeObservation, SessionID: "s",
		Summary: "tail document", Embedding: []float64{1, 0}, Structured: []byte("{}"),
		ImportanceScore: 0.5, RewardScore: 0.5, Confidence: 0.5, DecayFactor: 1, Tags: []string{},
		TurnID: fmt.Sprintf("t-%d", i/3),
	}
}

func TestOpenMissing(t *testing.T) {
	if _, err := OpenReader(filepath.Join(t.TempDir(), "none.db"), query.Options{}); err == nil {
		t.Fatal("Open of a missing file did not fail")
	}
}

func TestCursors(t *testing.T) {
	for _, seq := range []int64{0, 1, math.MaxInt64} {
		if got, err := parseSeq(seqCursor(seq)); err != nil || got != seq {
			t.Errorf("seq cursor %d: %d %v", seq, got, err)
		}
	}
	for _, rank := range []float64{0, -1.5e-6, -12.25, math.Inf(-1)} {
		r, s, err := parseRank(rankCursor(rank, 42))
		if err != nil || r != rank || s != 42 {
			t.Errorf("rank cursor %v: %v %v %v", rank, r, s, err)
		}
	}
	if _, err := parseSeq(rankCursor(1, 2)); err == nil {
		t.Error("a rank cursor read as a seq cursor")
	}
	if _, _, err := parseRank(seqCursor(2)); err == nil {
		t.Error("a seq cursor read as a rank cursor")
	}
}

func TestFTSString(t *testing.T) {
	for in, want := range map[string]string{
		`memory`: `"memory"`, `say "hi"`: `"say ""hi"""`, "a\x00b": `"a b"`, `OR`: `"OR"`,
	} {
		if got := ftsString(in); got != want {
			t.Errorf("ftsString(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]bool{"!!!": false, "": false, " - ": false, "c++": true, "é": true, "٣": true} {
		if hasToken(in) != want {
			t.Errorf("hasToken(%q) = %v", in, !want)
		}
	}
}

func TestCeilMillis(t *testing.T) {
	base := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
	if got := ceilMillis(base); got != base.UnixMilli() {
		t.Errorf("whole ms: %d", got)
	}
	if got := ceilMillis(base.Add(500 * time.Microsecond)); got != base.UnixMilli()+1 {
		t.Errorf("half ms: %d", got)
	}
	old := time.Date(1960, 1, 1, 0, 0, 0, 500000, time.UTC)
	if got := ceilMillis(old); got != old.Truncate(time.Millisecond).UnixMilli()+1 {
		t.Errorf("before 1970: %d", got)
	}
}

// TestReaderOnOlderSchema: a reader opened on an index of schema version 3
// (no embedding64 column, every embedding in the document JSON) reads it,
// and keeps reading, embeddings included, once a writer has upgraded it
// and written documents the version-4 way.
func TestReaderOnOlderSchema(t *testing.T) {
	db, path := openIndex(t)
	write(t, db, []*model.IndexDoc{tailDoc(1)})
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to version 3's layout: the vector goes into the JSON.
	asVersion5(t, raw)
	for _, s := range []string{
		`UPDATE docs SET doc = json_set(doc, '$.embedding', json('[1,0]'))`,
		`ALTER TABLE docs DROP COLUMN embedding64`,
		`PRAGMA user_version = 3`,
	} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	r, err := OpenReader(path, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	check := func(id string) {
		t.Helper()
		d, err := r.Document(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(d.Embedding) != "[1 0]" {
			t.Fatalf("%s: embedding %v", id, d.Embedding)
		}
		page, err := r.Recent(ctx, "", "", 10)
		if err != nil || len(page.Docs) == 0 || len(page.Docs[0].Embedding) != 2 {
			t.Fatalf("recent: %+v, %v", page, err)
		}
	}
	check(tailID(1))

	w, err := Open(path, Options{}) // upgrades to version 4
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, w, []*model.IndexDoc{tailDoc(2)})
	check(tailID(1))
	check(tailID(2))
}
