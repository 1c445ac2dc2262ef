package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
)

// vec_blocks is a compact int8 copy, for Similar, of the embeddings of fewer
// than bitsMinDim components (larger ones have sign-bit files, vecbits.go):
// reading the wide docs rows would take ~0.9 s at a million documents. It is
// written in the documents' transaction, so never out of step. A row holds
// one dimension's and tenant's vectors whose seq >> blockShift(dim) is block:
// seqs their uint16 offsets, vecs per vector a float32 1/|q| then q in int8.
const vecBlocksSQL = `CREATE TABLE IF NOT EXISTS vec_blocks (
  dim    INTEGER NOT NULL,
  tenant TEXT    NOT NULL,
  block  INTEGER NOT NULL,
  seqs   BLOB    NOT NULL,
  vecs   BLOB    NOT NULL,
  PRIMARY KEY (dim, tenant, block)
)`

// vecDirtySQL: documents whose embedding, tenant, type or time was
// changed with plain SQL (the writer never does) keep their old vector in
// vec_blocks and the sign-bit file; their seqs are kept here, and Similar
// scores them exactly beside the candidates, so an update is never missed.
var vecDirtySQL = []string{
	`CREATE TABLE IF NOT EXISTS vec_dirty (seq INTEGER PRIMARY KEY)`,
	`CREATE TRIGGER IF NOT EXISTS docs_vec_au AFTER UPDATE OF seq, embedding, embedding_dim, tenant_id, event_type, ts_unix_ms ON docs BEGIN
  INSERT OR IGNORE INTO vec_dirty(seq) VALUES (new.seq);
END`,
}

// vecsVersion is the first schema version with vec_blocks.
const vecsVersion = 5

// blockShift sizes a block to about 64 KiB of vectors, between 16 and 4096
// of them: small enough that appending to the last one per batch is cheap,
// large enough that a scan reads few rows (each costs more than its bytes:
// at 8 dimensions, 4096 a block took half the CPU time of 1024 a block).
func blockShift(dim int) uint {
	n := 65536 / (dim + 4)
	if n < 16 {
		return 4
	}
	return min(uint(bits.Len(uint(n)))-1, 12)
}

type blockKey struct {
	dim    int
	tenant string
}

// vecBlock is one vec_blocks row being appended to.
type vecBlock struct {
	blockKey
	block      int64
	seqs, vecs []byte
	last       int64 // the last seq held; -1 when empty
	dirty      bool
}

// quantize is the vec_blocks form of the float32 embedding emb of dim
// components: a float32 1/|q|, then q, emb scaled to int8. It is nil for a
// zero, non-finite or malformed embedding. scratch is reused between calls.
func quantize(emb []byte, dim int, scratch []float32) ([]byte, []float32) {
	if dim == 0 || len(emb) != 4*dim {
		return nil, scratch
	}
	f := scratch[:0]
	var maxAbs float32
	nan := false
	for i := 0; i < dim; i++ {
		x := math.Float32frombits(binary.LittleEndian.Uint32(emb[4*i:]))
		f = append(f, x)
		a := x
		if a < 0 {
			a = -a
		}
		if a > maxAbs {
			maxAbs = a
		}
		nan = nan || x != x
	}
	if maxAbs == 0 || nan || maxAbs > math.MaxFloat32 {
		return nil, f
	}
	out := make([]byte, 4+dim)
	q := out[4:]
	scale := 127 / float64(maxAbs) // float64: finite for a subnormal maxAbs too
	var n2 int64
	for i, x := range f {
		v := int8(math.Round(float64(x) * scale))
		q[i] = byte(v)
		n2 += int64(v) * int64(v)
	}
	binary.LittleEndian.PutUint32(out, math.Float32bits(float32(1/math.Sqrt(float64(n2)))))
	return out, f
}

// add appends the quantized vector q of seq, which must be above every
// seq held (the writer holds the write lock: seqs only grow).
func (b *vecBlock) add(seq int64, q []byte) {
	if seq <= b.last {
		return
	}
	b.vecs = append(b.vecs, q...)
	b.seqs = binary.LittleEndian.AppendUint16(b.seqs, uint16(seq-b.block<<blockShift(b.dim)))
	b.last, b.dirty = seq, true
}

// vecRow is one document's quantized vector (quantize), dim = len(q)-4.
type vecRow struct {
	seq int64
	key blockKey
	q   []byte
}

// vecAppender adds vectors, in seq order, to the vec_blocks rows they
// belong to, each row read once and written once.
type vecAppender struct {
	open map[blockKey]*vecBlock
}

func (a *vecAppender) add(ctx context.Context, tx *sql.Tx, r vecRow) error {
	if a.open == nil {
		a.open = map[blockKey]*vecBlock{}
	}
	blk := r.seq >> blockShift(r.key.dim)
	b := a.open[r.key]
	if b != nil && b.block != blk {
		if err := b.flush(ctx, tx); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		var err error
		if b, err = loadBlock(ctx, tx, r.key, blk); err != nil {
			return err
		}
		a.open[r.key] = b
	}
	b.add(r.seq, r.q)
	return nil
}

func (a *vecAppender) flush(ctx context.Context, tx *sql.Tx) error {
	for _, b := range a.open {
		if err := b.flush(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// appendRows adds the vectors of a batch's created documents, in seq
// order, to vec_blocks, in tx.
func appendRows(ctx context.Context, tx *sql.Tx, rows []vecRow) error {
	var a vecAppender
	for _, r := range rows {
		if err := a.add(ctx, tx, r); err != nil {
			return err
		}
	}
	return a.flush(ctx, tx)
}

// vecChunk is how many docs rows appendVectors reads at a time (bounded
// memory when an upgrade copies a whole index).
const vecChunk = 1024

// appendVectors adds the embeddings of every docs row from seq from on to
// vec_blocks, in tx: an upgrade calls it with 0 (Write quantizes its
// documents' vectors ahead and calls appendRows).
func appendVectors(ctx context.Context, tx *sql.Tx, from int64) error {
	var a vecAppender
	var scratch []float32
	type row struct {
		seq    int64
		tenant string
		dim    int
		emb    []byte
	}
	for {
		rows, err := tx.QueryContext(ctx, `SELECT seq, coalesce(tenant_id, ''), embedding_dim, embedding FROM docs
  WHERE seq >= ? AND embedding_dim > 0 AND embedding_dim < ? ORDER BY seq LIMIT ?`, from, bitsMinDim, vecChunk)
		if err != nil {
			return err
		}
		var chunk []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.tenant, &r.dim, &r.emb); err != nil {
				_ = rows.Close()
				return err
			}
			chunk = append(chunk, r)
		}
		_ = rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range chunk {
			var q []byte
			if q, scratch = quantize(r.emb, r.dim, scratch); q == nil {
				continue
			}
			if err := a.add(ctx, tx, vecRow{seq: r.seq, key: blockKey{r.dim, r.tenant}, q: q}); err != nil {
				return err
			}
		}
		if len(chunk) < vecChunk {
			break
		}
		from = chunk[len(chunk)-1].seq + 1
	}
	return a.flush(ctx, tx)
}

// loadBlock reads the stored row of k and block, or starts an empty one.
func loadBlock(ctx context.Context, tx *sql.Tx, k blockKey, block int64) (*vecBlock, error) {
	b := &vecBlock{blockKey: k, block: block, last: -1}
	err := tx.QueryRowContext(ctx, "SELECT seqs, vecs FROM vec_blocks WHERE dim = ? AND tenant = ? AND block = ?",
		k.dim, k.tenant, block).Scan(&b.seqs, &b.vecs)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	// Room for a full block: appending does not copy the vectors again.
	b.vecs = slices.Grow(b.vecs, max(0, (4+k.dim)<<blockShift(k.dim)-len(b.vecs)))
	if n := len(b.seqs); n >= 2 {
		b.last = block<<blockShift(k.dim) + int64(binary.LittleEndian.Uint16(b.seqs[n-2:]))
	}
	return b, nil
}

func (b *vecBlock) flush(ctx context.Context, tx *sql.Tx) error {
	if !b.dirty {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO vec_blocks(dim, tenant, block, seqs, vecs) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT(dim, tenant, block) DO UPDATE SET seqs = excluded.seqs, vecs = excluded.vecs`,
		b.dim, b.tenant, b.block, b.seqs, b.vecs)
	b.dirty = false
	return err
}
