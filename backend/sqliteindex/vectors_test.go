package sqliteindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"engram/model"
	"engram/query"
)

// vecDoc is document i with embedding emb, of tenant tenant ("" none).
func vecDoc(i int, tenant string, emb []float64) *model.IndexDoc {
	d := testDoc(fmt.Sprintf("v%06d", i))
	d.TurnID = fmt.Sprintf("turn-%d", i/4)
	d.TenantID = tenant
	d.Embedding = emb
	return d
}

func randVec(rng *rand.Rand, dim int) []float64 {
	v := make([]float64, dim)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	return v
}

// storedVec is one vector of vec_blocks, decoded.
type storedVec struct {
	dim    int
	tenant string
	inv    float32
	q      []int8
}

// readBlocks decodes vec_blocks, checking each row's layout: its seqs
// ascending, in its block, each stored once in the table.
func readBlocks(t *testing.T, db *DB) map[int64]storedVec {
	t.Helper()
	rows, err := db.SQL().Query("SELECT dim, tenant, block, seqs, vecs FROM vec_blocks")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]storedVec{}
	for rows.Next() {
		var dim int
		var tenant string
		var block int64
		var seqs, vecs []byte
		if err := rows.Scan(&dim, &tenant, &block, &seqs, &vecs); err != nil {
			t.Fatal(err)
		}
		n := len(seqs) / 2
		if len(vecs) != n*(4+dim) || n == 0 {
			t.Fatalf("block (%d, %q, %d): %d seqs, %d bytes of vectors", dim, tenant, block, n, len(vecs))
		}
		last := int64(-1)
		for i := range n {
			seq := block<<blockShift(dim) + int64(binary.LittleEndian.Uint16(seqs[2*i:]))
			if seq <= last || seq>>blockShift(dim) != block {
				t.Fatalf("block (%d, %q, %d): seq %d after %d", dim, tenant, block, seq, last)
			}
			if _, dup := out[seq]; dup {
				t.Fatalf("seq %d stored twice", seq)
			}
			last = seq
			v := vecs[i*(4+dim) : (i+1)*(4+dim)]
			q := make([]int8, dim)
			for k := range q {
				q[k] = int8(v[4+k])
			}
			out[seq] = storedVec{dim, tenant, math.Float32frombits(binary.LittleEndian.Uint32(v)), q}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkBlocks: vec_blocks holds every document with a non-zero embedding
// of fewer than bitsMinDim components once, under its dimension and
// tenant, quantized close to it, and nothing else; the sign-bit file of
// each larger dimension holds the others, in seq order, their signs.
func checkBlocks(t *testing.T, db *DB) {
	t.Helper()
	checkBits(t, db)
	got := readBlocks(t, db)
	rows, err := db.SQL().Query("SELECT seq, coalesce(tenant_id, ''), embedding FROM docs WHERE embedding_dim > 0 AND embedding_dim < ?", bitsMinDim)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := 0
	for rows.Next() {
		var seq int64
		var tenant string
		var emb []byte
		if err := rows.Scan(&seq, &tenant, &emb); err != nil {
			t.Fatal(err)
		}
		e := vector(emb, nil)
		if norm(e) == 0 {
			if _, ok := got[seq]; ok {
				t.Errorf("seq %d: a zero embedding is stored", seq)
			}
			continue
		}
		want++
		s, ok := got[seq]
		if !ok || s.dim != len(e) || s.tenant != tenant {
			t.Fatalf("seq %d (dim %d, tenant %q): stored %v %+v", seq, len(e), tenant, ok, s)
		}
		var dot, qn float64
		for i, q := range s.q {
			dot += float64(q) * e[i]
			qn += float64(q) * float64(q)
		}
		if math.Abs(float64(s.inv)*math.Sqrt(qn)-1) > 1e-6 {
			t.Errorf("seq %d: 1/|q| stored as %v, |q| is %v", seq, s.inv, math.Sqrt(qn))
		}
		if c := dot * float64(s.inv) / norm(e); c < 0.99 {
			t.Errorf("seq %d: quantized vector at cosine %.4f of the embedding", seq, c)
		}
	}
	if want != len(got) {
		t.Errorf("vec_blocks holds %d vectors, the documents %d", len(got), want)
	}
}

// TestVecBlocksUnderWrites writes batches of varied sizes that cross block
// boundaries (4096 vectors a block at 8 dimensions, 32 at 1536), mixing
// tenants, dimensions, empty and zero embeddings and re-sent documents,
// and checks vec_blocks against the documents after every batch.
func TestVecBlocksUnderWrites(t *testing.T) {
	db, _ := openTest(t)
	rng := rand.New(rand.NewPCG(7, 7))
	n := 6000
	if testing.Short() {
		n = 4400
	}
	dims := []int{8, 8, 8, 8, 8, 8, 3, 1536}
	tenants := []string{"", "t1", "t2"}
	var all []*model.IndexDoc
	for len(all) < n {
		batch := make([]*model.IndexDoc, 1+rng.IntN(800))
		for i := range batch {
			emb := randVec(rng, dims[rng.IntN(len(dims))])
			switch rng.IntN(20) {
			case 0:
				emb = nil
			case 1:
				emb = make([]float64, 8)
			}
			batch[i] = vecDoc(len(all)+i, tenants[rng.IntN(3)], emb)
		}
		if len(all) > 0 && rng.IntN(3) == 0 { // a re-sent document: left as it was
			batch = append(batch, all[rng.IntN(len(all))])
		}
		db.Write(context.Background(), batch)
		all = append(all, batch...)
		checkBlocks(t, db)
	}
	if blockShift(8) != 12 || blockShift(1536) != 5 {
		t.Fatalf("block shifts %d and %d", blockShift(8), blockShift(1536))
	}
}

// similarPair is Similar of id and the exact scan's answer, as
// "event_id score" lines.
func similarPair(t *testing.T, r *Reader, id string, k int) (got, want []string) {
	t.Helper()
	ctx := context.Background()
	res, err := r.Similar(ctx, id, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res {
		if s.Doc.EventID == id {
			t.Fatalf("Similar(%s) holds the document itself", id)
		}
		got = append(got, fmt.Sprintf("%s %.12f", s.Doc.EventID, s.Score))
	}
	seq, dim, target, err := r.embeddingOf(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := r.nearestTo(ctx, seq, dim, target, k, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range exact {
		var eid string
		if err := r.q.QueryRow("SELECT event_id FROM docs WHERE seq = ?", c.seq).Scan(&eid); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s %.12f", eid, c.score))
	}
	return got, want
}

func openReaderT(t *testing.T, path, tenant string) *Reader {
	t.Helper()
	r, err := OpenReader(path, query.Options{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestSimilarAfterMaintenance: documents deleted, re-embedded or moved to
// another tenant with plain SQL (vec_blocks keeps their old vectors) are
// not answered stale: the rerank reads docs. On fewer documents than the
// candidates reranked, Similar is the exact scan, for every tenant scope
// and dimension.
func TestSimilarAfterMaintenance(t *testing.T) {
	db, path := openTest(t)
	rng := rand.New(rand.NewPCG(8, 8))
	var docs []*model.IndexDoc
	for i := range 45 { // 30 at 8 dimensions: no more than minCandidates
		dim := 8
		if i%3 == 0 {
			dim = 1536
		}
		docs = append(docs, vecDoc(i, []string{"t1", "t2"}[i%2], randVec(rng, dim)))
	}
	mustWrite(t, db, docs...)
	all, t1 := openReaderT(t, path, ""), openReaderT(t, path, "t1")
	target := docs[1] // dimension 8, tenant t2
	got, _ := similarPair(t, all, target.EventID, 3)
	nearest := func(line string) string { return line[:len("v000000")] }
	gone, moved := nearest(got[0]), nearest(got[1])
	for _, s := range []string{
		fmt.Sprintf("DELETE FROM docs WHERE event_id = '%s'", gone),
		fmt.Sprintf("UPDATE docs SET tenant_id = 't2' WHERE event_id = '%s'", nearest(got[2])),
		// the last document of t1 at 8 dimensions, re-embedded on the target's
		fmt.Sprintf("UPDATE docs SET embedding = (SELECT embedding FROM docs WHERE event_id = '%s'), tenant_id = 't1' WHERE event_id = '%s'",
			target.EventID, moved),
	} {
		if _, err := db.w.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		r  *Reader
		id string
	}{{all, target.EventID}, {all, docs[4].EventID}, {all, docs[3].EventID}, {t1, docs[4].EventID}, {t1, moved}, {t1, docs[0].EventID}} {
		got, want := similarPair(t, c.r, c.id, 10)
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("Similar(%s) at %s:\n got %q\nwant %q", c.id, c.r.Describe(), got, want)
		}
		for _, g := range got {
			if nearest(g) == gone {
				t.Errorf("Similar(%s): the deleted %s", c.id, gone)
			}
		}
	}
	if got, _ := similarPair(t, all, target.EventID, 1); len(got) != 1 || got[0] != moved+" 1.000000000000" {
		t.Errorf("Similar(%s, 1) after %s took its embedding: %q", target.EventID, moved, got)
	}
}

// TestVecBlocksUpgrade: an index of schema version 4 (no vec_blocks) is
// answered by the exact scan, and Open upgrades it, building the same
// blocks the writer would have; a reader opened before the upgrade then
// uses them.
func TestVecBlocksUpgrade(t *testing.T) {
	db, path := openTest(t)
	rng := rand.New(rand.NewPCG(9, 9))
	var docs []*model.IndexDoc
	for i := range 4250 {
		dim := []int{8, 8, 8, 1536, 8, 8, 8, 8}[i%8]
		docs = append(docs, vecDoc(i, []string{"", "t1"}[rng.IntN(2)], randVec(rng, dim)))
	}
	for i := 0; i < len(docs); i += 250 {
		mustWrite(t, db, docs[i:i+250]...)
	}
	if len(docs) <= 1<<blockShift(8) {
		t.Fatal("the documents do not cross a block")
	}
	built := readBlocks(t, db)
	for _, s := range []string{"DROP TRIGGER docs_vec_au", "DROP TABLE vec_dirty", "DROP TABLE vec_blocks", "PRAGMA user_version = 4"} {
		if _, err := db.w.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r := openReaderT(t, path, "")
	ctx := context.Background()
	if fast, err := r.hasVectors(ctx); fast || err != nil {
		t.Fatalf("version 4: vectors %v, %v", fast, err)
	}
	for _, d := range []*model.IndexDoc{docs[0], docs[3]} {
		if got, want := similarPair(t, r, d.EventID, 10); !slices.Equal(got, want) || len(got) != 10 {
			t.Fatalf("version 4, Similar(%s):\n got %q\nwant %q", d.EventID, got, want)
		}
	}

	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := readBlocks(t, db); !reflect.DeepEqual(got, built) {
		t.Fatalf("upgrade built %d vectors, the writer %d, or different ones", len(got), len(built))
	}
	more := vecDoc(len(docs), "t1", randVec(rng, 8))
	mustWrite(t, db, more)
	checkBlocks(t, db)
	if fast, err := r.hasVectors(ctx); !fast || err != nil {
		t.Fatalf("upgraded: vectors %v, %v", fast, err)
	}
	got, _ := similarPair(t, r, docs[0].EventID, 10)
	seq, dim, target, _ := r.embeddingOf(ctx, docs[0].EventID)
	if len(got) != 10 || recallAt10(t, r, []string{docs[0].EventID, docs[3].EventID, docs[2].EventID, more.EventID}) < 0.95 {
		exact, _ := r.nearestTo(ctx, seq, dim, target, 10, false)
		t.Fatalf("upgraded, Similar(%s): %q, exact %v", docs[0].EventID, got, exact)
	}
}

// TestSimilarRecall: on 20,000 documents (2,000 with -short) recall@10
// against the exact scan is at least 0.95, on uniform 8-dimensional
// vectors and on tightly clustered 64-dimensional ones (near ties that
// int8 scores cannot order: the rerank must). A correctness check, not a
// speed one.
func TestSimilarRecall(t *testing.T) {
	n, queries := 20000, 40
	if testing.Short() {
		n, queries = 2000, 20
	}
	for _, c := range []struct {
		name string
		vec  func(rng *rand.Rand, i int) []float64
	}{
		{"uniform8", func(rng *rand.Rand, _ int) []float64 { return randVec(rng, 8) }},
		{"clustered64", func(rng *rand.Rand, i int) []float64 {
			centre := randVec(rand.New(rand.NewPCG(uint64(i%50), 0)), 64)
			for k := range centre {
				centre[k] += rng.NormFloat64() * 0.05
			}
			return centre
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, path := openTest(t)
			rng := rand.New(rand.NewPCG(10, 10))
			docs := make([]*model.IndexDoc, n)
			for i := range docs {
				docs[i] = vecDoc(i, "", c.vec(rng, i))
			}
			for i := 0; i < n; i += 1000 {
				mustWrite(t, db, docs[i:i+1000]...)
			}
			r := openReaderT(t, path, "")
			ids := make([]string, queries)
			for i := range ids {
				ids[i] = docs[rng.IntN(n)].EventID
			}
			if got := recallAt10(t, r, ids); got < 0.95 {
				t.Errorf("recall@10 %.3f", got)
			} else {
				t.Logf("recall@10 %.3f over %d queries, %d documents", got, len(ids), n)
			}
		})
	}
}

// TestDot8: the unrolled dot product of every length agrees with the plain
// sum.
func TestDot8(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for n := range 20 {
		q, f := make([]byte, n), make([]float32, n)
		var want float64
		for i := range q {
			q[i], f[i] = byte(rng.IntN(256)), float32(rng.NormFloat64())
			want += float64(int8(q[i])) * float64(f[i])
		}
		if got := float64(dot8(q, f)); math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
			t.Errorf("length %d: %v, want %v", n, got, want)
		}
	}
}

// checkBits: the sign-bit file of each dimension of bitsMinDim and more
// holds every document of it with a non-zero embedding, in seq order,
// with its time, tenant, type and signs; and the head file of those with
// one, the head of each record.
func checkBits(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	id, err := vecID(ctx, db.SQL())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL().Query(`SELECT seq, ts_unix_ms, coalesce(tenant_id, ''), event_type, embedding_dim, embedding FROM docs
  WHERE embedding_dim >= ? ORDER BY seq`, bitsMinDim)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[int][][]uint64{}
	for rows.Next() {
		var seq, ts int64
		var tenant, typ string
		var dim int
		var emb []byte
		if err := rows.Scan(&seq, &ts, &tenant, &typ, &dim, &emb); err != nil {
			t.Fatal(err)
		}
		if !usable(emb) {
			continue
		}
		want[dim] = append(want[dim], signBits([]uint64{uint64(seq), uint64(ts), fnv64a(tenant), fnv64a(typ)}, emb))
	}
	for dim, recs := range want {
		bf, err := openBits(db.abs, dim, id)
		if err != nil || bf == nil {
			t.Fatalf("dim %d: no sign-bit file (%v)", dim, err)
		}
		rec := bitsRecFixed + bf.words
		if bf.n != len(recs) {
			t.Errorf("dim %d: %d records, %d documents", dim, bf.n, len(recs))
		}
		for i := range min(bf.n, len(recs)) {
			if !slices.Equal(bf.recs[i*rec:(i+1)*rec], recs[i]) {
				t.Errorf("dim %d: record %d is %v, want %v", dim, i, bf.recs[i*rec:i*rec+4], recs[i][:4])
				break
			}
		}
		bf.close()
		checkHead(t, db.abs, dim, id, recs)
	}
}

// checkHead: the head file of dim holds the head of each of recs (the
// sign-bit records), in order; there is none when dim has no head.
func checkHead(t *testing.T, abs string, dim int, id string, recs [][]uint64) {
	t.Helper()
	raw, err := os.ReadFile(headPath(abs, dim))
	if !hasHead(dim) {
		if err == nil {
			t.Errorf("dim %d: a head file", dim)
		}
		return
	}
	if err != nil {
		t.Fatalf("dim %d: no head file: %v", dim, err)
	}
	want := headHeaderOf(dim, id)
	b := make([]byte, 8*len(recs[0]))
	for _, r := range recs {
		for i, w := range r {
			binary.LittleEndian.PutUint64(b[8*i:], w)
		}
		want = headOf(want, b)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("dim %d: head file of %d bytes, want %d (%d records)", dim, len(raw), len(want), len(recs))
	}
}
