package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"engram/model"
)

// ScanByKey streams documents ordered by object_storage_key (then event_id),
// from (inclusive) to to (exclusive; "" means no end), for verify. No index
// orders them by key (it cost 10% of a write): days are read through docs_ts
// and sorted, the odd keys merged in, all in one read transaction.
func (db *DB) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var flagged int
	err = tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('docs') WHERE name = 'key_odd'").Scan(&flagged)
	if err != nil {
		return err
	}
	w := keyWalk{ctx: ctx, tx: tx, from: from, to: to, fn: fn}
	if flagged == 0 { // an index of version 6 or older, opened read-only
		return w.byKeyIndex()
	}
	return w.byDay()
}

// keyWalk is one ScanByKey.
type keyWalk struct {
	ctx      context.Context
	tx       *sql.Tx
	from, to string
	fn       func(*model.IndexDoc) error
}

// keyRange is the condition on object_storage_key and its arguments.
func (w *keyWalk) keyRange() (string, []any) {
	if w.to == "" {
		return "d.object_storage_key >= ?", []any{w.from}
	}
	return "d.object_storage_key >= ? AND d.object_storage_key < ?", []any{w.from, w.to}
}

func (w *keyWalk) byKeyIndex() error {
	cond, args := w.keyRange()
	c, err := w.open("SELECT "+docColumnsNoVector+" FROM docs d WHERE "+cond+
		" ORDER BY d.object_storage_key, d.event_id", args...)
	if err != nil {
		return err
	}
	defer c.close()
	for ; c.doc != nil; err = c.next() {
		if err := w.fn(c.doc); err != nil {
			return err
		}
	}
	return err
}

const dayMs = 24 * 60 * 60 * 1000

func (w *keyWalk) byDay() error {
	cond, args := w.keyRange()
	odd, err := w.open("SELECT "+docColumnsNoVector+" FROM docs d INDEXED BY docs_key_odd WHERE d.key_odd IS NOT 0 AND "+
		cond+" ORDER BY d.object_storage_key, d.event_id", args...)
	if err != nil {
		return err
	}
	defer odd.close()
	dayQ := "SELECT " + docColumnsNoVector + " FROM docs d INDEXED BY docs_ts WHERE d.ts_unix_ms >= ? AND d.ts_unix_ms < ? AND d.key_odd = 0 AND " +
		cond + " ORDER BY d.object_storage_key, d.event_id"
	lo, hi := dayBounds(w.from, w.to)
	for {
		var ts int64
		// CAST: a value plain SQL stored as REAL scans into no int64.
		err := w.tx.QueryRowContext(w.ctx, "SELECT CAST(ts_unix_ms AS INTEGER) FROM docs INDEXED BY docs_ts WHERE ts_unix_ms >= ? AND ts_unix_ms < ? ORDER BY ts_unix_ms LIMIT 1", lo, hi).Scan(&ts)
		if err == sql.ErrNoRows {
			break
		}
		if err != nil {
			return err
		}
		day := floorDay(ts)
		if err := w.day(odd, dayQ, append([]any{day, day + dayMs}, args...)); err != nil {
			return err
		}
		lo = day + dayMs
	}
	for ; odd.doc != nil; err = odd.next() {
		if err := w.fn(odd.doc); err != nil {
			return err
		}
	}
	return err
}

// day streams one day's documents, and before each the odd ones that sort
// before it.
func (w *keyWalk) day(odd *docCursor, q string, args []any) error {
	c, err := w.open(q, args...)
	if err != nil {
		return err
	}
	defer c.close()
	for ; c.doc != nil; err = c.next() {
		for odd.doc != nil && odd.before(c) {
			if err := w.fn(odd.doc); err != nil {
				return err
			}
			if err := odd.next(); err != nil {
				return err
			}
		}
		if err := w.fn(c.doc); err != nil {
			return err
		}
	}
	return err
}

// before orders the current rows of two cursors as their queries did: by
// the columns (a row of schema 5 or older decodes from its JSON, which
// plain SQL may have left behind its columns). SQLite's BINARY collation
// compares bytes, as Go compares strings.
func (c *docCursor) before(o *docCursor) bool {
	if c.key != o.key {
		return c.key < o.key
	}
	return c.id < o.id
}

// dayBounds are the ts_unix_ms bounds, lo inclusive and hi exclusive, of
// the days whose archive keys can lie in [from, to). A key "events/Y/M/D/…"
// not below from begins with from's first 18 bytes or more, so its day is
// not before from's (when from has one); likewise for to, whose own day is
// kept. Anything else leaves that side at the years a timestamp can have
// (model.ParseTimestamp), which no document of key_odd 0 is outside: the
// bounds only spare days from being read, the key condition decides.
func dayBounds(from, to string) (lo, hi int64) {
	lo, hi = firstMs, endMs
	if t, ok := model.ArchiveKeyDay(from); ok {
		lo = max(lo, t.UnixMilli())
	}
	if t, ok := model.ArchiveKeyDay(to); ok {
		hi = min(hi, t.UnixMilli()+dayMs)
	}
	return lo, hi
}

// firstMs and endMs bound the timestamps of documents whose key is the
// archive's: years 1 to 9999.
var (
	firstMs = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	endMs   = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

// floorDay is the start of the UTC day holding ms.
func floorDay(ms int64) int64 {
	d := ms / dayMs
	if ms%dayMs < 0 {
		d--
	}
	return d * dayMs
}

// docCursor is a query's rows, decoded one document at a time; doc is the
// current one, nil once they are done.
type docCursor struct {
	rows    *sql.Rows
	row     docRow
	dest    []any
	doc     *model.IndexDoc
	key, id string // doc's row's object_storage_key and event_id columns
}

// open runs q and reads its first document.
func (w *keyWalk) open(q string, args ...any) (*docCursor, error) {
	rows, err := w.tx.QueryContext(w.ctx, q, args...)
	if err != nil {
		return nil, err
	}
	c := &docCursor{rows: rows}
	c.dest = c.row.dest()
	if err := c.next(); err != nil {
		_ = rows.Close()
		return nil, err
	}
	return c, nil
}

func (c *docCursor) next() error {
	c.doc = nil
	if !c.rows.Next() {
		return c.rows.Err()
	}
	if err := c.rows.Scan(c.dest...); err != nil {
		return err
	}
	d, err := c.row.document()
	if err != nil {
		return fmt.Errorf("index document %s: %w", model.Quote(c.row.eventID), err)
	}
	c.doc, c.key, c.id = d, c.row.key, c.row.eventID
	return nil
}

func (c *docCursor) close() { _ = c.rows.Close() }
