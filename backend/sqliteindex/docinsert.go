package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"engram/ingest"
	"engram/model"
)

// insertRows is how many documents one execution of insertManySQL takes.
// Per statement, database/sql and the driver cost a few microseconds
// besides the row's own work (BenchmarkInsertRows).
const insertRows = 16

// insertManySQL inserts rows documents with OR FAIL: a conflict stops the
// statement there, keeping the rows before it, and the rest go one by one
// (insertSQL). Without the clause SQLite would keep a statement journal to
// undo the statement, 2-3% of an ingest's CPU. A statement that succeeds
// created every row, with consecutive seqs.
func insertManySQL(rows int) string {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(insertColumns)), ", ") + ")"
	return "INSERT OR FAIL INTO docs(" + strings.Join(insertColumns, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ")
}

// batchInsert inserts a batch's documents in a transaction.
type batchInsert struct {
	tx        *sql.Tx
	one, many *sql.Stmt // insertSQL and insertManySQL(insertRows) on tx
	docs      []*model.IndexDoc
	args      [][]any    // nil for a document prepare refused
	vecs      [][]byte   // the documents' quantized vectors (nil: none)
	bits      [][]uint64 // the documents' sign-bit records, seq unset (nil: none)
	res       []ingest.IndexResult
	vecRows   []vecRow // of the created documents with a vector, in seq order
	// bitRows: the sign-bit records of the created documents, seq set, by
	// dimension, in seq order.
	bitRows map[int][][]uint64

	firstSeq int64 // of the first created row; -1 while none
	turns    turnBatch
}

// run inserts the documents in order, insertRows at a time until a
// statement of them fails.
func (b *batchInsert) run(ctx context.Context) error {
	b.firstSeq = -1
	var valid []int
	for i, a := range b.args {
		if a != nil {
			valid = append(valid, i)
		}
	}
	if len(valid) < insertRows {
		return b.each(ctx, valid)
	}
	// top is the highest seq stored: what a statement creates is above it.
	var top int64
	if err := b.tx.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM docs").Scan(&top); err != nil {
		return err
	}
	flat := make([]any, 0, insertRows*len(insertColumns))
	for len(valid) >= insertRows {
		chunk := valid[:insertRows]
		valid = valid[insertRows:]
		flat = flat[:0]
		for _, i := range chunk {
			flat = append(flat, b.args[i]...)
		}
		r, err := b.many.ExecContext(ctx, flat...)
		if err != nil {
			if !statementOnly(err) {
				return err
			}
			// A duplicate or a bad document, which the single inserts tell
			// apart. A batch with one duplicate mostly has more (a replay, a
			// rebuild over what is stored), and each failed statement costs
			// about as much as the rows before its failure: the rest of the
			// batch goes one by one.
			n, err := b.partial(ctx, top, chunk)
			if err != nil {
				return err
			}
			return b.each(ctx, slices.Concat(chunk[n:], valid))
		}
		if top, err = b.created(r, chunk); err != nil {
			return err
		}
	}
	return b.each(ctx, valid)
}

// partial records the rows a failed insertManySQL of chunk created before
// it stopped (the first n of chunk, seqs above top) and returns n. SQLite
// leaves sqlite_sequence behind such a statement's rows: it is brought up
// to them, or a seq could be given again once they were deleted. It
// counts every row above top as inserted: an AFTER INSERT trigger on docs
// (the schema has none) would have to refuse with RAISE(ABORT), which
// undoes the whole statement, not RAISE(FAIL), which keeps its own row.
func (b *batchInsert) partial(ctx context.Context, top int64, chunk []int) (int, error) {
	rows, err := b.tx.QueryContext(ctx, "SELECT seq, event_id FROM docs WHERE seq > ? ORDER BY seq", top)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n, last := 0, top
	for rows.Next() {
		var id string
		if err := rows.Scan(&last, &id); err != nil {
			return 0, err
		}
		if n == len(chunk) || id != b.args[chunk[n]][0] {
			return 0, fmt.Errorf("insert of %d documents stopped with row %d (%s) stored, not the statement's", len(chunk), n, id)
		}
		b.add(chunk[n], last)
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n > 0 {
		err = b.bringSequenceUp(ctx, last)
	}
	return n, err
}

// bringSequenceUp makes sqlite_sequence's seq of docs at least last. The
// table has no row for docs until an insert that completed gave it one: a
// fresh index whose first statement stopped midway has none.
func (b *batchInsert) bringSequenceUp(ctx context.Context, last int64) error {
	if _, err := b.tx.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'docs' AND seq < ?1", last); err != nil {
		return err
	}
	_, err := b.tx.ExecContext(ctx, `INSERT INTO sqlite_sequence(name, seq) SELECT 'docs', ?1
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'docs')`, last)
	return err
}

// created records the rows of chunk that one statement r inserted
// and returns the last one's seq.
func (b *batchInsert) created(r sql.Result, chunk []int) (int64, error) {
	n, err := r.RowsAffected()
	if err != nil {
		return 0, err
	}
	last, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	if n != int64(len(chunk)) {
		return 0, fmt.Errorf("insert of %d documents changed %d rows", len(chunk), n)
	}
	for j, i := range chunk {
		b.add(i, last-n+1+int64(j))
	}
	return last, nil
}

// each inserts the documents idx one statement each, as insertSQL: one
// already stored is not created, one SQLite refuses fails alone.
func (b *batchInsert) each(ctx context.Context, idx []int) error {
	for _, i := range idx {
		r, err := b.one.ExecContext(ctx, b.args[i]...)
		if err != nil {
			if statementOnly(err) {
				// SQLite undid this statement (and its triggers) only.
				b.res[i].Err = docError(b.docs[i], err)
				continue
			}
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		if n != 1 {
			continue
		}
		seq, err := r.LastInsertId()
		if err != nil {
			return err
		}
		b.add(i, seq)
	}
	return nil
}

func (b *batchInsert) add(i int, seq int64) {
	b.res[i].Created = true
	if b.firstSeq < 0 {
		b.firstSeq = seq
	}
	b.turns.add(seq, b.args[i])
	if q := b.vecs[i]; q != nil {
		tenant, _ := b.args[i][argTenant].(string)
		b.vecRows = append(b.vecRows, vecRow{seq: seq, key: blockKey{len(q) - 4, tenant}, q: q})
	}
	if r := b.bits[i]; r != nil {
		if b.bitRows == nil {
			b.bitRows = map[int][][]uint64{}
		}
		r[0] = uint64(seq)
		dim := len(b.docs[i].Embedding)
		b.bitRows[dim] = append(b.bitRows[dim], r)
	}
}
