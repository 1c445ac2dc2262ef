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

// insertManySQL inserts rows documents with no conflict clause: a document
// already stored (or twice in the rows) fails the whole statement, and the
// rows (and the rest of the batch) are then inserted one by one with
// insertSQL, which leaves it alone.
// So when the statement succeeds every row was created, and they got
// consecutive seqs (AUTOINCREMENT, one statement, the write lock held).
func insertManySQL(rows int) string {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(insertColumns)), ", ") + ")"
	return "INSERT INTO docs(" + strings.Join(insertColumns, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ")
}

// batchInsert inserts a batch's documents in a transaction.
type batchInsert struct {
	one, many *sql.Stmt // insertSQL and insertManySQL(insertRows) on the transaction
	docs      []*model.IndexDoc
	args      [][]any // nil for a document prepare refused
	res       []ingest.IndexResult

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
			// SQLite undid this statement only: a duplicate or a bad
			// document, which the single inserts tell apart. A batch with
			// one duplicate mostly has more (a replay, a rebuild over what
			// is stored), and each failed statement costs about as much as
			// the rows it undid: the rest of the batch goes one by one.
			return b.each(ctx, slices.Concat(chunk, valid))
		}
		if err := b.created(r, chunk); err != nil {
			return err
		}
	}
	return b.each(ctx, valid)
}

// created records the rows of chunk that one statement r inserted.
func (b *batchInsert) created(r sql.Result, chunk []int) error {
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	last, err := r.LastInsertId()
	if err != nil {
		return err
	}
	if n != int64(len(chunk)) {
		return fmt.Errorf("insert of %d documents changed %d rows", len(chunk), n)
	}
	for j, i := range chunk {
		b.add(i, last-n+1+int64(j))
	}
	return nil
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
}
