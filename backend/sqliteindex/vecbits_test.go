package sqliteindex

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// TestSimilarBits: at 256 dimensions Similar picks its candidates from the
// sign-bit file, finds the exact scan's neighbours (recall@10 >= 0.95),
// with the tenant, type and time filters applied exactly; documents the
// file lacks (written after it, or while it was gone) are still found,
// and a writer opening the index catches the file up.
func TestSimilarBits(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 6000 documents of 256 dimensions")
	}
	const n, dim = 6000, 768
	db, path := openTest(t)
	db.SetEmbedder("hashed")
	if err := querytest.SimDocs(n, dim, 500, func(d []*model.IndexDoc) error { mustWrite(t, db, d...); return nil }); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepathAbs(path)
	st, err := os.Stat(bitsPath(abs, dim))
	if err != nil || st.Size() != bitsHeader+int64(n)*int64(8*(bitsRecFixed+bitsWords(dim))) {
		t.Fatalf("sign-bit file: %v, %v (want %d records)", st, err, n)
	}
	ctx := context.Background()
	defer func(m int) { bitsPartMin = m }(bitsPartMin)
	bitsPartMin = 1000 // scanned in parts
	from := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	filters := []SimilarFilter{{}, {Types: []string{"tool_result", "action"}}, {From: from, To: from.Add(24 * time.Hour)},
		{Types: []string{"outcome"}, From: from}}
	for _, tenant := range []string{"", "acme"} {
		r, err := OpenReader(path, query.Options{Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		if name, err := r.Embedder(ctx, dim); name != "hashed" || err != nil {
			t.Errorf("Embedder(%d) = %q, %v", dim, name, err)
		}
		if note := r.ScoresNote(ctx, dim); note != "" {
			t.Errorf("ScoresNote = %q", note)
		}
		for _, f := range filters {
			if got := filteredRecall(t, r, f, 30, n); got < 0.95 {
				t.Errorf("tenant %q, filter %+v: recall@10 %.3f", tenant, f, got)
			}
		}
		r.Close()
	}
	// The file loses its last 1000 records: those documents are ranked
	// exactly as newer than the file; a writer's open catches it up.
	_ = os.Truncate(bitsPath(abs, dim), bitsHeader+int64(n-1000)*int64(8*(bitsRecFixed+bitsWords(dim))))
	r, _ := OpenReader(path, query.Options{})
	if got := filteredRecall(t, r, SimilarFilter{}, 30, n); got < 0.95 {
		t.Errorf("file behind: recall@10 %.3f", got)
	}
	r.Close()
	db.Close()
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if st, _ := os.Stat(bitsPath(abs, dim)); st.Size() != bitsHeader+int64(n)*int64(8*(bitsRecFixed+bitsWords(dim))) {
		t.Errorf("not caught up on open: %d bytes", st.Size())
	}
}

// filteredRecall is the mean recall@10 of SimilarIn with f against the
// exact scan with f over m of the n documents of querytest.SimDocs, tie-aware; it fails the test when
// a result does not pass f.
func filteredRecall(t *testing.T, r *Reader, f SimilarFilter, m, n int) float64 {
	t.Helper()
	ctx := context.Background()
	var found, want int
	for i := range m {
		id := fmt.Sprintf("v%07d", (i*7919)%n)
		seq, dim, target, err := r.embeddingOf(ctx, id)
		if err != nil {
			continue // another tenant's
		}
		exact, err := r.nearestIn(ctx, seq, dim, target, 10, false, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.SimilarIn(ctx, id, 10, f)
		if err != nil {
			t.Fatal(err)
		}
		want += len(exact)
		if len(exact) == 0 {
			continue
		}
		floor := exact[len(exact)-1].score
		for _, g := range got {
			ts, _ := model.ParseTimestamp(g.Doc.Timestamp)
			if (r.tenant != "" && g.Doc.TenantID != r.tenant) || (len(f.Types) > 0 && !contains(f.Types, g.Doc.EventType)) ||
				(!f.From.IsZero() && ts.Before(f.From)) || (!f.To.IsZero() && !ts.Before(f.To)) {
				t.Fatalf("%s: %s does not pass the filter %+v", id, g.Doc.EventID, f)
			}
			if g.Score >= floor-1e-9 && !math.IsNaN(g.Score) {
				found++
			}
		}
	}
	return float64(found) / float64(max(want, 1))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStubNote: an index the stub embedder wrote says its scores are not
// semantic.
func TestStubNote(t *testing.T) {
	db, path := openTest(t)
	db.SetEmbedder("stub")
	mustWrite(t, db, testDoc("a"), testDoc("b"))
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if note := r.ScoresNote(context.Background(), 8); note != stubNote {
		t.Errorf("ScoresNote = %q", note)
	}
	if note := r.ScoresNote(context.Background(), 16); note != "" {
		t.Errorf("ScoresNote(16) = %q", note)
	}
}

func filepathAbs(p string) (string, error) { return filepath.Abs(p) }

// TestBitsUpgrade: an index of version 7 (float64 copies, no meta, no
// sign-bit files) is upgraded in place by a writer's open: embedding64
// cleared, the sign-bit file built, Similar served from it.
func TestBitsUpgrade(t *testing.T) {
	db, path := openTest(t)
	var docs []*model.IndexDoc
	_ = querytest.SimDocs(300, 256, 100, func(d []*model.IndexDoc) error {
		docs = append(docs, d...)
		mustWrite(t, db, d...)
		return nil
	})
	abs, _ := filepathAbs(path)
	// Back to version 7: float64 copies, no meta, no file.
	for _, d := range docs {
		b := make([]byte, 8*len(d.Embedding))
		for i, x := range d.Embedding {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		if _, err := db.w.Exec("UPDATE docs SET embedding64 = ? WHERE event_id = ?", b, d.EventID); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"DROP TABLE meta", "DELETE FROM vec_dirty", "PRAGMA user_version = 7"} {
		if _, err := db.w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	os.Remove(bitsPath(abs, 256))
	r, err := OpenReader(path, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bf, err := r.openBits(context.Background(), 256); bf != nil || err != nil {
		t.Fatalf("version 7: sign bits %v, %v", bf, err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n64 int
	if err := db.SQL().QueryRow("SELECT count(*) FROM docs WHERE embedding64 IS NOT NULL").Scan(&n64); err != nil {
		t.Fatal(err)
	}
	if n64 != 0 {
		t.Errorf("%d float64 copies left", n64)
	}
	checkBits(t, db)
	if recall := filteredRecall(t, r, SimilarFilter{}, 20, len(docs)); recall < 0.95 {
		t.Errorf("upgraded: recall@10 %.3f", recall)
	}
	r.Close()
}

// TestBitsHeadUpgrade: an index whose sign-bit file of 768 dimensions has
// no head file (written before it existed) is served from the sign-bit
// file alone, and a writer's open builds the head in place; a head behind
// its sign-bit file, or no longer its own (the sign-bit file rebuilt
// under it), is caught up or rebuilt, and read meanwhile without a wrong
// answer.
func TestBitsHeadUpgrade(t *testing.T) {
	const n, dim = 1500, 768
	db, path := openTest(t)
	if err := querytest.SimDocs(n, dim, 500, func(d []*model.IndexDoc) error { mustWrite(t, db, d...); return nil }); err != nil {
		t.Fatal(err)
	}
	checkBits(t, db)
	db.Close()
	abs, _ := filepathAbs(path)
	hp := headPath(abs, dim)
	hrec := int64(8 * (headFixed + headWords))
	reopen := func(what string) {
		t.Helper()
		r, err := OpenReader(path, query.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := filteredRecall(t, r, SimilarFilter{}, 20, n); got < 0.95 {
			t.Errorf("%s: recall@10 %.3f", what, got)
		}
		r.Close()
		db, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkBits(t, db)
		db.Close()
	}
	if err := os.Remove(hp); err != nil {
		t.Fatal(err)
	}
	reopen("no head")
	if err := os.Truncate(hp, bitsHeader+(n-700)*hrec+5); err != nil {
		t.Fatal(err)
	}
	reopen("head behind")
	// Another index's sign bits under this head: its last record is not
	// the head of the sign-bit record at its place.
	f, err := os.OpenFile(hp, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, hrec), bitsHeader+(n-1)*hrec); err != nil {
		t.Fatal(err)
	}
	f.Close()
	reopen("stale head")
	if err := os.WriteFile(hp, []byte("not a head file"), 0o644); err != nil {
		t.Fatal(err)
	}
	reopen("damaged head")
}
