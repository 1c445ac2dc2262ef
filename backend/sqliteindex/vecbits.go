package sqliteindex

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// The sign bits of embeddings of bitsMinDim components and more live in a
// file per dimension beside the index (<index>-vec<DIM>): Similar picks its
// candidates by Hamming distance and dot product with them (nearest), then
// ranks them exactly from docs. The file is derived from docs, written after
// their commit and caught up by the next writer; its layout and why it is
// safe are in docs/storage.md (The vector files).
const (
	bitsMinDim   = 128
	bitsMagic    = "engrvb1\n"
	bitsHeader   = 64
	bitsRecFixed = 4 // int64 words before the sign bits
)

func bitsPath(abs string, dim int) string { return fmt.Sprintf("%s-vec%d", abs, dim) }

func bitsWords(dim int) int { return (dim + 63) / 64 }

// fnv64a is the hash the records keep of a tenant and of a type.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// vecID is the index's vec id, from meta; "" when it has none.
func vecID(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vec id'`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// ensureVecID gives the index a vec id when it has none (in tx).
func ensureVecID(ctx context.Context, tx *sql.Tx) error {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES ('vec id', ?)`, hex.EncodeToString(b[:]))
	return err
}

func bitsHeaderOf(dim int, id string) []byte {
	h := make([]byte, bitsHeader)
	copy(h, bitsMagic)
	binary.LittleEndian.PutUint32(h[8:], uint32(dim))
	binary.LittleEndian.PutUint32(h[12:], uint32(bitsWords(dim)))
	copy(h[16:48], id)
	return h
}

// signBits appends the sign bits of the float32 embedding emb to dst.
func signBits(dst []uint64, emb []byte) []uint64 {
	dim := len(emb) / 4
	for w := 0; w < bitsWords(dim); w++ {
		var x uint64
		for j := 0; j < 64 && 64*w+j < dim; j++ {
			x |= uint64(binary.LittleEndian.Uint32(emb[4*(64*w+j):])>>31) << j
		}
		dst = append(dst, x)
	}
	return dst
}

// bitsRecord is the sign-bit record of a document with the float32
// embedding emb and the insert arguments a (rowArgs), its seq left 0;
// nil for a zero embedding (no neighbour, as in vec_blocks).
func bitsRecord(emb []byte, a []any) []uint64 {
	ts, _ := a[argTs].(int64)
	tenant, _ := a[argTenant].(string)
	typ, _ := a[argType].(string)
	r := make([]uint64, bitsRecFixed, bitsRecFixed+bitsWords(len(emb)/4))
	r[1], r[2], r[3] = uint64(ts), fnv64a(tenant), fnv64a(typ)
	var any uint32
	for i := 0; i+4 <= len(emb); i += 4 {
		any |= binary.LittleEndian.Uint32(emb[i:]) & 0x7fffffff
	}
	if any == 0 {
		return nil
	}
	return signBits(r, emb)
}

// syncBits brings the sign-bit file of dim up to date with docs: every
// non-zero embedding of dim stored after the last seq the file holds is
// appended, read through q (the writer's connection).
func syncBits(ctx context.Context, q *sql.DB, abs string, dim int) error {
	return appendBits(ctx, q, abs, dim, nil)
}

// appendBits appends to the sign-bit file of dim the records recs (a
// committed batch's, in seq order) that it does not hold yet, after the
// documents of dim stored between the file's last record and them, which
// it reads from docs through q: what a crash, a failed append or another
// writer process left out. With no recs, it catches up every document
// after the file's last record.
func appendBits(ctx context.Context, q *sql.DB, abs string, dim int, recs [][]uint64) error {
	if dim < bitsMinDim {
		return nil
	}
	id, err := vecID(ctx, q)
	if err != nil || id == "" {
		return err
	}
	f, err := os.OpenFile(bitsPath(abs, dim), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	head := bitsHeaderOf(dim, id)
	rec := int64(8 * (bitsRecFixed + bitsWords(dim)))
	size := st.Size()
	last := int64(0)
	fresh := false
	if size >= bitsHeader {
		got := make([]byte, bitsHeader)
		if _, err := f.ReadAt(got, 0); err != nil {
			return err
		}
		if string(got) != string(head) {
			size = 0 // another index's, or another layout: rebuilt
		}
	}
	if size < bitsHeader {
		fresh = true
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.WriteAt(head, 0); err != nil {
			return err
		}
		size = bitsHeader
	}
	n := (size - bitsHeader) / rec
	if size != bitsHeader+n*rec { // a record cut short by a crash
		if err := f.Truncate(bitsHeader + n*rec); err != nil {
			return err
		}
	}
	if n > 0 {
		var b [8]byte
		if _, err := f.ReadAt(b[:], bitsHeader+(n-1)*rec); err != nil {
			return err
		}
		last = int64(binary.LittleEndian.Uint64(b[:]))
	}
	if _, err := f.Seek(bitsHeader+n*rec, io.SeekStart); err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	upTo := int64(math.MaxInt64) // the catch-up reads docs before this seq
	if len(recs) > 0 {
		upTo = int64(recs[0][0])
	}
	if last+1 < upTo {
		if last, err = catchUpBits(ctx, q, w, dim, last, upTo); err != nil {
			return err
		}
	}
	for _, r := range recs {
		if int64(r[0]) > last {
			if err := binary.Write(w, binary.LittleEndian, r); err != nil {
				return err
			}
			last = int64(r[0])
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return syncHead(f, abs, dim, id, fresh)
}

// catchUpBits writes to w the records of the documents of dim with a seq
// in (last, upTo), read from docs through q, and returns the last seq
// read.
func catchUpBits(ctx context.Context, q *sql.DB, w io.Writer, dim int, last, upTo int64) (int64, error) {
	words := make([]uint64, 0, bitsRecFixed+bitsWords(dim))
	for {
		rows, err := q.QueryContext(ctx, `SELECT seq, ts_unix_ms, coalesce(tenant_id, ''), event_type, embedding FROM docs
  WHERE seq > ? AND seq < ? AND embedding_dim = ? ORDER BY seq LIMIT ?`, last, upTo, dim, vecChunk)
		if err != nil {
			return last, err
		}
		got := 0
		for rows.Next() {
			var (
				seq, ts     int64
				tenant, typ string
				emb         sql.RawBytes
			)
			if err := rows.Scan(&seq, &ts, &tenant, &typ, &emb); err != nil {
				_ = rows.Close()
				return last, err
			}
			got++
			last = seq
			if len(emb) != 4*dim || !usable(emb) {
				continue
			}
			words = append(words[:0], uint64(seq), uint64(ts), fnv64a(tenant), fnv64a(typ))
			words = signBits(words, emb)
			if err := binary.Write(w, binary.LittleEndian, words); err != nil {
				_ = rows.Close()
				return last, err
			}
		}
		_ = rows.Close()
		if err := rows.Err(); err != nil {
			return last, err
		}
		if got < vecChunk {
			return last, nil
		}
	}
}

// usable: a float32 embedding with a non-zero, finite component and no
// NaN (what the exact scan can score).
func usable(emb []byte) bool {
	nonzero := false
	for i := 0; i+4 <= len(emb); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(emb[i:]))
		if x != x || math.IsInf(float64(x), 0) {
			return false
		}
		nonzero = nonzero || x != 0
	}
	return nonzero
}

// bitsFile is a sign-bit file mapped for reading, with its head file
// when it has one.
type bitsFile struct {
	data  []byte   // the mapping (nil when empty)
	recs  []uint64 // the records, as words
	words int      // sign-bit words per record
	n     int      // records
	last  int64    // the last seq held (0 when none)
	head  *headFile
	file  *os.File // the file, read where there is a head: see nearest
}

// openBits maps the sign-bit file of dim when it belongs to the index of
// vec id id; nil (and no error) when there is none that does.
func openBits(abs string, dim int, id string) (*bitsFile, error) {
	if dim < bitsMinDim || id == "" {
		return nil, nil
	}
	f, err := os.Open(bitsPath(abs, dim))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := mapBits(f, abs, dim, id)
	if b == nil {
		_ = f.Close()
	}
	return b, err
}

// mapBits is openBits of the open sign-bit file f, which the bitsFile
// keeps (nil when there is none).
func mapBits(f *os.File, abs string, dim int, id string) (*bitsFile, error) {
	st, err := f.Stat()
	if err != nil || st.Size() < bitsHeader {
		return nil, err
	}
	head, err := openHead(abs, dim, id)
	if err != nil {
		return nil, err
	}
	// With a head, the scan reads a few thousand records of this file.
	data, err := mapFile(f, int(st.Size()), head == nil)
	if err != nil {
		head.close()
		return nil, err
	}
	if string(data[:bitsHeader]) != string(bitsHeaderOf(dim, id)) {
		unmapFile(data)
		head.close()
		return nil, nil
	}
	b := &bitsFile{data: data, words: bitsWords(dim), head: head, file: f}
	rec := bitsRecFixed + b.words
	b.n = (len(data) - bitsHeader) / (8 * rec)
	if b.n > 0 {
		b.recs = unsafe.Slice((*uint64)(unsafe.Pointer(&data[bitsHeader])), b.n*rec)
		b.last = int64(b.recs[(b.n-1)*rec])
	}
	if head != nil {
		head.n = min(head.n, b.n)
	}
	return b, nil
}

func (b *bitsFile) close() {
	if b != nil && b.data != nil {
		unmapFile(b.data)
		b.data, b.recs = nil, nil
		b.head.close()
		_ = b.file.Close()
	}
}

// bitsFilter is what a record must match to be a candidate; zero fields
// match every record.
type bitsFilter struct {
	tenant    uint64 // hash; matched when hasTenant
	hasTenant bool
	types     []uint64 // hashes; any matches when empty
	from, to  int64    // ts_unix_ms in [from, to) when hasTime
	hasTime   bool
	exclude   int64 // the seq asked about
}

func (f *bitsFilter) match(r []uint64) bool {
	if int64(r[0]) == f.exclude {
		return false
	}
	if f.hasTenant && r[2] != f.tenant {
		return false
	}
	if f.hasTime {
		if ts := int64(r[1]); ts < f.from || ts >= f.to {
			return false
		}
	}
	if len(f.types) > 0 {
		for _, t := range f.types {
			if r[3] == t {
				return true
			}
		}
		return false
	}
	return true
}

// nearest is the seqs of the n records nearest to target among those f
// matches: a shortlist by Hamming distance (from the head file above 512
// dimensions), ranked by target's dot product with the full sign bits,
// which at 1M documents keeps recall@10 at 0.98-0.99 for a quarter of the
// docs rows a Hamming-only shortlist needed. The caller ranks the n exactly.
func (b *bitsFile) nearest(target []float64, f *bitsFilter, n int) []int64 {
	if b.n == 0 || n <= 0 {
		return nil
	}
	if !f.plain() {
		// The nearest documents a filter lets through are farther, where
		// 512 bits and the dot product order them less well: at 1M × 768
		// with a tenant, a type and a time window (1/36 of the documents)
		// 100 candidates held 0.92 of the exact ten, 200 held 0.98.
		n *= 2
	}
	short := b.shortlist(queryBits(target), f, max(bitsShortlist, bitsShortFactor*n))
	t := newSignTable(target)
	rec := bitsRecFixed + b.words
	type scored struct {
		s float32
		i int32
	}
	sc := make([]scored, 0, len(short))
	buf := make([]uint64, rec)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 8*rec)
	for _, i := range short {
		r := b.recs[int(i)*rec : int(i+1)*rec : int(i+1)*rec]
		if b.head != nil && int(i) < b.head.n {
			// Read, not touched in the mapping: a page fault maps the 16
			// pages around the record, 5,000 of them most of the file,
			// which cost more (then to unmap too) than the reads.
			if _, err := b.file.ReadAt(raw, bitsHeader+8*int64(i)*int64(rec)); err == nil {
				r = buf
			}
		}
		if f.match(r) {
			sc = append(sc, scored{t.dot(r[bitsRecFixed:]), i})
		}
	}
	slices.SortFunc(sc, func(x, y scored) int {
		if x.s != y.s {
			return cmp.Compare(y.s, x.s)
		}
		return cmp.Compare(y.i, x.i)
	})
	out := make([]int64, 0, min(n, len(sc)))
	for _, c := range sc[:min(n, len(sc))] {
		out = append(out, int64(b.recs[int(c.i)*rec]))
	}
	return out
}

// bitsShortlist is how many records nearest by Hamming distance nearest
// ranks by the dot product, for n up to bitsShortlist/bitsShortFactor
// candidates; more for more (variables for the benchmarks).
var (
	bitsShortlist   = 5000
	bitsShortFactor = 50
)

// shortlist is the indexes, ascending, of the n records nearest to the
// sign bits q by Hamming distance among those f matches (ties at the n-th
// distance taken in file order): over the first headWords words from the
// head file where there is one (its records, then the sign-bit file's
// after them), else over all of them. The records are scanned in parts
// side by side, one per CPU: at a million documents of 1536 dimensions
// the head file is 80 MB, the sign-bit file 224 MB.
func (b *bitsFile) shortlist(q []uint64, f *bitsFilter, n int) []int32 {
	rec := bitsRecFixed + b.words
	words, nh := b.words, 0
	if b.head != nil {
		words, nh = headWords, b.head.n
	}
	dims := 64 * words
	dist := make([]uint16, b.n)
	none := uint16(dims + 1)
	q = q[:words]
	parts := min(runtime.GOMAXPROCS(0), max(1, b.n/bitsPartMin))
	hists := make([][]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*b.n/parts, (p+1)*b.n/parts
		hists[p] = make([]int, dims+2)
		wg.Add(1)
		go func(hist []int) {
			defer wg.Done()
			plain := f.plain()
			full := func(i, end int) {
				for ; i < end; i++ {
					r := b.recs[i*rec : (i+1)*rec : (i+1)*rec]
					if plain {
						if int64(r[0]) == f.exclude {
							dist[i] = none
							continue
						}
					} else if !f.match(r) {
						dist[i] = none
						continue
					}
					d := hamming(r[bitsRecFixed:bitsRecFixed+words], q)
					dist[i] = uint16(d)
					hist[d]++
				}
			}
			if end := min(hi, nh); lo < end {
				b.scanHead(lo, end, q, f, dist, hist, full)
				lo = end
			}
			full(lo, hi)
		}(hists[p])
	}
	wg.Wait()
	hist := hists[0]
	for _, h := range hists[1:] {
		for d, c := range h {
			hist[d] += c
		}
	}
	// The smallest distance cut with at least n records at or under it.
	cut, seen := 0, 0
	for ; cut <= dims; cut++ {
		if seen += hist[cut]; seen >= n {
			break
		}
	}
	out := make([]int32, 0, min(seen, n))
	ties := 0 // how many at the cut's own distance are taken
	if cut <= dims {
		ties = n - (seen - hist[cut])
	}
	for i, d := range dist {
		if int(d) < cut {
			out = append(out, int32(i))
		} else if int(d) == cut && ties > 0 {
			out = append(out, int32(i))
			ties--
		}
	}
	return out
}

// headChunk is how many head records scanHead reads at a time: 160 KB,
// read into the same buffer again and again, which the CPU's cache keeps.
const headChunk = 2048

// scanHead is shortlist's scan of the head records [lo, end): each one's
// Hamming distance to q (8 words) into dist and hist, none for one f does
// not match. The file is read, not mapped: mapped, filling the page table
// of its 80 MB (at 1M documents) and unmapping it took more CPU time than
// copying it (see BENCHMARKS.md). Records that cannot be read (the file
// cut short under the reader) are scanned from the sign-bit file by full.
func (b *bitsFile) scanHead(lo, end int, q []uint64, f *bitsFilter, dist []uint16, hist []int, full func(i, end int)) {
	const hrec = headFixed + headWords
	none := uint16(64*headWords + 1)
	plain := f.plain()
	q0, q1, q2, q3, q4, q5, q6, q7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
	buf := make([]uint64, headChunk*hrec)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 8*len(buf))
	for i := lo; i < end; i += headChunk {
		m := min(headChunk, end-i)
		if _, err := b.head.f.ReadAt(raw[:8*m*hrec], bitsHeader+8*int64(i)*hrec); err != nil {
			full(i, i+m)
			continue
		}
		for j := range m {
			r := buf[j*hrec : (j+1)*hrec : (j+1)*hrec]
			if !plain && !f.matchHead(r) {
				dist[i+j] = none
				continue
			}
			d := bits.OnesCount64(r[2]^q0) + bits.OnesCount64(r[3]^q1) + bits.OnesCount64(r[4]^q2) +
				bits.OnesCount64(r[5]^q3) + bits.OnesCount64(r[6]^q4) + bits.OnesCount64(r[7]^q5) +
				bits.OnesCount64(r[8]^q6) + bits.OnesCount64(r[9]^q7)
			dist[i+j] = uint16(d)
			hist[d]++
		}
	}
}

// signTable is a query's dot products with the sign bits of a record as
// ±1s, a byte of bits at a time: t[256*j+x] is the sum of the query's
// components 8j+k over the bits k set in x.
type signTable struct {
	t   []float32
	sum float32 // of every component
}

func newSignTable(target []float64) *signTable {
	nb := 8 * bitsWords(len(target))
	st := &signTable{t: make([]float32, 256*nb)}
	for _, x := range target {
		st.sum += float32(x)
	}
	for j := range nb {
		t := st.t[256*j : 256*(j+1)]
		for x := 1; x < 256; x++ {
			var c float32
			if k := 8*j + bits.TrailingZeros8(uint8(x)); k < len(target) {
				c = float32(target[k])
			}
			t[x] = t[x&(x-1)] + c
		}
	}
	return st
}

// dot is the dot product of the query with the sign bits w as ±1s (a set
// bit, a negative component, is -1).
func (st *signTable) dot(w []uint64) float32 {
	t := st.t[:len(w)*2048]
	var s0, s1 float32
	for i, x := range w {
		b := t[2048*i : 2048*(i+1) : 2048*(i+1)]
		s0 += b[x&0xff] + b[256+x>>8&0xff] + b[512+x>>16&0xff] + b[768+x>>24&0xff]
		s1 += b[1024+x>>32&0xff] + b[1280+x>>40&0xff] + b[1536+x>>48&0xff] + b[1792+x>>56]
	}
	return st.sum - 2*(s0+s1)
}

// bitsPartMin is the fewest records a part of a parallel scan takes (a
// variable for the tests).
var bitsPartMin = 65536

// plain: f leaves out only the seq asked about.
func (f *bitsFilter) plain() bool { return !f.hasTenant && !f.hasTime && len(f.types) == 0 }

// hamming is the number of bits a and b (len(b) >= len(a)) differ in.
func hamming(a, b []uint64) int {
	b = b[:len(a)]
	var s0, s1, s2, s3 int
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += bits.OnesCount64(a[i] ^ b[i])
		s1 += bits.OnesCount64(a[i+1] ^ b[i+1])
		s2 += bits.OnesCount64(a[i+2] ^ b[i+2])
		s3 += bits.OnesCount64(a[i+3] ^ b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += bits.OnesCount64(a[i] ^ b[i])
	}
	return s0 + s1 + s2 + s3
}

// queryBits is the sign bits of target.
func queryBits(target []float64) []uint64 {
	out := make([]uint64, bitsWords(len(target)))
	for i, x := range target {
		if math.Signbit(float64(float32(x))) {
			out[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

// syncAllBits catches up the sign-bit file of every dimension the index
// has vectors of (bitsMinDim and more: those meta lists as "vec dim DIM",
// and those an index written before version 8 has in vec_blocks): what a
// writer does when it opens an index, so that one written before the
// files existed gets them.
func (db *DB) syncAllBits(ctx context.Context) error {
	rows, err := db.w.QueryContext(ctx, `SELECT DISTINCT dim FROM vec_blocks WHERE dim >= ?1
  UNION SELECT CAST(substr(key, 9) AS INTEGER) FROM meta WHERE key LIKE 'vec dim %'`, bitsMinDim)
	if err != nil {
		return err
	}
	var dims []int
	for rows.Next() {
		var d int
		if err := rows.Scan(&d); err != nil {
			_ = rows.Close()
			return err
		}
		dims = append(dims, d)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range dims {
		if err := syncBits(ctx, db.w, db.abs, d); err != nil {
			return err
		}
	}
	return nil
}
