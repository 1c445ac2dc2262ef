package sqliteindex

import (
	"context"
	"fmt"
	"math"
	"testing"

	"engram/model"
	"engram/query/expr"
)

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		v    uint64
		size int
	}{
		{[]byte{0x05}, 5, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0xbd, 0x84, 0x40}, 0xbd&0x7f<<14 | 0x04<<7 | 0x40, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		if v, n := varint(c.b); v != c.v || n != c.size {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", c.b, v, n, c.v, c.size)
		}
	}
}

// TestRankIsBM25: on an index small enough for every document count to
// be exact, a window's rank is FTS5's bm25() of the same documents, for
// words, stems, phrases and several of them.
func TestRankIsBM25(t *testing.T) {
	db, path := openIndex(t)
	summaries := []string{
		"retry the payment client", "retrying payment after a timeout", "payment client timeout retry retry",
		"the client retried the payment", "nothing to see here", "Retry: payment-client (timeout)",
		"a long summary about many things where retry appears once among a lot of other words",
		"timeout timeout timeout", "payment", "client payment client payment retry",
	}
	var docs []*model.IndexDoc
	for i := range 40 {
		d := testDoc(fmt.Sprintf("r-%02d", i))
		d.Summary = summaries[i%len(summaries)] + fmt.Sprintf(" n%d", i%7)
		docs = append(docs, d)
	}
	write(t, db, docs)
	r := openWindowed(t, path, 1000)
	ctx := context.Background()
	st, err := r.stats(ctx)
	if err != nil || st.docs != 40 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	var tokensTotal int
	for _, d := range docs {
		tokensTotal += len(tokens(d.Summary))
	}
	if want := float64(tokensTotal) / 40; math.Abs(st.avgdl-want) > 1e-9 {
		t.Errorf("mean length %v, want %v", st.avgdl, want)
	}
	for _, s := range []string{"retry", "payment client", `"payment client"`, "timeout retry", "retrying", "n3 payment"} {
		e, err := expr.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		p := newPlan(e, r.now(), "", true)
		sc, err := r.newScorer(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.window1(ctx, p, math.MaxInt64, sc)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]float64{}
		rows, err := r.q.QueryContext(ctx, "SELECT rowid, bm25(docs_fts) FROM docs_fts WHERE docs_fts MATCH ?", p.match)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var seq int64
			var rank float64
			if err := rows.Scan(&seq, &rank); err != nil {
				t.Fatal(err)
			}
			want[seq] = rank
		}
		rows.Close()
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d ranked, bm25 matches %d", s, len(got), len(want))
		}
		for _, c := range got {
			if w, ok := want[c.seq]; !ok || math.Abs(c.rank-w) > 1e-9*math.Abs(w)+1e-12 {
				t.Errorf("%s: seq %d ranked %v, bm25 %v", s, c.seq, c.rank, w)
			}
		}
	}
}

// TestIDFEstimate: on a larger index than dfSample seqs, a phrase's
// document count is its count among the newest dfSample seqs, scaled.
func TestIDFEstimate(t *testing.T) {
	defer func(n int) { dfSample = n }(dfSample)
	dfSample = 40
	db, path := openIndex(t)
	var docs []*model.IndexDoc
	for i := range 200 {
		d := testDoc(fmt.Sprintf("e-%03d", i))
		d.Summary = "filler"
		if i%4 == 0 || i < 100 && i%2 == 0 {
			d.Summary = "common filler" // 75 documents, 10 of the newest 40
		}
		docs = append(docs, d)
	}
	write(t, db, docs)
	r := openWindowed(t, path, 1000)
	st, err := r.stats(context.Background())
	if err != nil || st.maxSeq != 200 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	for _, c := range []struct {
		phrase string
		df     float64
	}{{`"common"`, 10 * 200 / 40.0}, {`"absent"`, 1}, {`"filler"`, 200}} {
		v, err := r.idf(context.Background(), c.phrase, st)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Max(1e-6, math.Log((200-c.df+0.5)/(c.df+0.5)))
		if math.Abs(v-want) > 1e-9 {
			t.Errorf("%s: idf %v, want %v", c.phrase, v, want)
		}
	}
}
