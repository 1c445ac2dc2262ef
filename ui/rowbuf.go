package ui

import "engram/query"

// rowBuf is the bounded window of a listing that pages with cursors (the
// stream's documents, the turns). It holds at most cap rows, newest first.
// Rows scrolled far past are evicted in whole pages; each page remembers
// the cursor that loads it again, so scrolling back re-reads exactly those
// rows from the index. Rendering and key handling never depend on how
// large the listing is, only on this window.
type rowBuf[T any] struct {
	rows  []T
	marks []mark    // rows loaded with a cursor start at these indexes
	above []evicted // evicted pages above rows[0], the nearest last
	next  query.Cursor
	end   bool // nothing older than the last row
	cap   int
	id    func(T) string
}

// mark says Recent(expr, cur, …) lists the rows from idx on.
type mark struct {
	idx int
	cur query.Cursor
}

// evicted is a page dropped from the top. head: it started at the newest
// row, which only a fresh load from the head can give back.
type evicted struct {
	cur  query.Cursor
	n    int
	head bool
}

func newRowBuf[T any](capacity int, id func(T) string) *rowBuf[T] {
	return &rowBuf[T]{cap: capacity, id: id}
}

func (b *rowBuf[T]) len() int { return len(b.rows) }

// atHead: rows[0] is the newest row of the listing (nothing evicted above).
func (b *rowBuf[T]) atHead() bool { return len(b.above) == 0 }

// reset replaces everything with the first page of the listing.
func (b *rowBuf[T]) reset(rows []T, next query.Cursor) {
	b.rows = append([]T(nil), rows...)
	b.marks = b.marks[:0]
	b.above = b.above[:0]
	b.next, b.end = next, next == ""
}

// appendOlder adds the page loaded with after (which must be b.next) below
// the last row. It returns how many rows were evicted from the top, so the
// caller can shift its selection.
func (b *rowBuf[T]) appendOlder(after query.Cursor, rows []T, next query.Cursor) int {
	b.marks = append(b.marks, mark{len(b.rows), after})
	b.rows = append(b.rows, rows...)
	b.next, b.end = next, next == ""
	return b.trimTop()
}

// trimTop evicts whole pages from the top until at most cap rows are left.
func (b *rowBuf[T]) trimTop() int {
	cut := b.topCut(0)
	if cut <= 0 {
		return 0
	}
	// Push the evicted pages top down, so the nearest is popped first. The
	// rows above the first mark came from the head of the listing.
	var kept []mark
	segStart, segCur, segHead := 0, query.Cursor(""), true
	for _, m := range b.marks {
		if m.idx >= cut {
			kept = append(kept, mark{m.idx - cut, m.cur})
			continue
		}
		if m.idx > segStart {
			b.above = append(b.above, evicted{segCur, m.idx - segStart, segHead})
		}
		segStart, segCur, segHead = m.idx, m.cur, false
	}
	b.above = append(b.above, evicted{segCur, cut - segStart, segHead})
	b.marks = kept
	b.rows = append([]T(nil), b.rows[cut:]...)
	return cut
}

// topCut is how many rows trimTop evicts once n more rows are appended as
// one page: up to the first page start at or after the excess.
func (b *rowBuf[T]) topCut(n int) int {
	excess := len(b.rows) + n - b.cap
	if excess <= 0 {
		return 0
	}
	for _, m := range b.marks {
		if m.idx >= excess {
			return m.idx
		}
	}
	if n > 0 && len(b.rows) >= excess {
		return len(b.rows) // the appended page's own start
	}
	return 0
}

// keptAfterPrepend is how many of the rows now held stay once n rows are
// put above them (trimBottom cuts at a page start), -1 when none can.
func (b *rowBuf[T]) keptAfterPrepend(n int) int {
	if len(b.rows)+n <= b.cap {
		return len(b.rows)
	}
	for i := len(b.marks) - 1; i >= 0; i-- {
		if idx := b.marks[i].idx + n; idx > 0 && idx <= b.cap {
			return b.marks[i].idx
		}
	}
	return -1
}

// prependNewer puts rows (newest first) above rows[0]; they are rows with no
// cursor of their own (a tail, or an evicted page read back, see
// prependPage). Rows beyond cap are dropped from the bottom at a page
// boundary; ok is false when there is none, and the caller must reload.
func (b *rowBuf[T]) prependNewer(rows []T) (ok bool) {
	return b.prepend(rows, nil)
}

// prependPage puts back the evicted page nearest the top, read with e.cur
// (for the head, without a cursor: see streamView.onNewer).
func (b *rowBuf[T]) prependPage(e evicted, rows []T) bool {
	b.above = b.above[:len(b.above)-1]
	if e.head {
		return b.prepend(rows, nil)
	}
	return b.prepend(rows, &mark{0, e.cur})
}

func (b *rowBuf[T]) prepend(rows []T, m *mark) bool {
	k := len(rows)
	if k == 0 {
		return true
	}
	for i := range b.marks {
		b.marks[i].idx += k
	}
	if m != nil {
		b.marks = append([]mark{*m}, b.marks...)
	}
	b.rows = append(append(make([]T, 0, k+len(b.rows)), rows...), b.rows...)
	return b.trimBottom()
}

// trimBottom drops rows past cap at the last page boundary that fits.
func (b *rowBuf[T]) trimBottom() bool {
	if len(b.rows) <= b.cap {
		return true
	}
	cut := -1
	for i := len(b.marks) - 1; i >= 0; i-- {
		if b.marks[i].idx > 0 && b.marks[i].idx <= b.cap {
			cut = i
			break
		}
	}
	if cut < 0 {
		return false
	}
	m := b.marks[cut]
	b.rows = b.rows[:m.idx:m.idx]
	b.marks = b.marks[:cut]
	b.next, b.end = m.cur, false
	return true
}

// index finds a row by id in the window (-1 when absent).
func (b *rowBuf[T]) index(id string) int {
	for i, r := range b.rows {
		if b.id(r) == id {
			return i
		}
	}
	return -1
}
