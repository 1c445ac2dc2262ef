package list

import (
	"iter"
	"slices"

	"engram/query"
)

// Window is the bounded window of a listing that pages with cursors (the
// stream's documents, the turns). It holds at most cap rows, newest first.
// Rows scrolled far past are evicted in whole pages; each page remembers
// the cursor that loads it again, so scrolling back re-reads exactly those
// rows from the index. Rendering and key handling never depend on how
// large the listing is, only on this window.
type Window[T any] struct {
	rows  []T
	marks []mark    // rows loaded with a cursor start at these indexes
	above []Evicted // evicted pages above rows[0], the nearest last
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

// Evicted is a page dropped from the top: N rows listed from Cur. Head: it
// started at the newest row, which only a fresh load from the head can
// give back.
type Evicted struct {
	Cur  query.Cursor
	N    int
	Head bool
}

// NewWindow holds at most capacity rows, found again by id.
func NewWindow[T any](capacity int, id func(T) string) *Window[T] {
	return &Window[T]{cap: capacity, id: id}
}

// Len is the number of rows held.
func (b *Window[T]) Len() int { return len(b.rows) }

// Row is row i, 0 the newest held.
func (b *Window[T]) Row(i int) T { return b.rows[i] }

// All is the rows held with their indexes, newest first.
func (b *Window[T]) All() iter.Seq2[int, T] { return slices.All(b.rows) }

// Next is the cursor that lists the rows below the last one held.
func (b *Window[T]) Next() query.Cursor { return b.next }

// End reports whether nothing is older than the last row held.
func (b *Window[T]) End() bool { return b.end }

// Above is the evicted page nearest the top; the zero Evicted when AtHead.
func (b *Window[T]) Above() Evicted {
	if len(b.above) == 0 {
		return Evicted{}
	}
	return b.above[len(b.above)-1]
}

// Evictions is how many pages are evicted above the first row held.
func (b *Window[T]) Evictions() int { return len(b.above) }

// AtHead reports whether rows[0] is the newest row of the listing (nothing
// evicted above).
func (b *Window[T]) AtHead() bool { return len(b.above) == 0 }

// Reset replaces everything with the first page of the listing.
func (b *Window[T]) Reset(rows []T, next query.Cursor) {
	b.rows = append([]T(nil), rows...)
	b.marks = b.marks[:0]
	b.above = b.above[:0]
	b.next, b.end = next, next == ""
}

// ResetFrom replaces everything with the page of the listing loaded with
// cur (a jump: the oldest page, a moment in time). Nothing above it is
// held or known, so AtHead is true until it scrolls away; the page keeps
// its cursor, so once evicted it is read back like any other.
func (b *Window[T]) ResetFrom(cur query.Cursor, rows []T, next query.Cursor) {
	b.Reset(rows, next)
	if cur != "" {
		b.marks = append(b.marks, mark{0, cur})
	}
}

// AppendOlder adds the page loaded with after (which must be b.next) below
// the last row. It returns how many rows were evicted from the top, so the
// caller can shift its selection.
func (b *Window[T]) AppendOlder(after query.Cursor, rows []T, next query.Cursor) int {
	cut := b.TopCut(len(rows))
	b.marks = append(b.marks, mark{len(b.rows), after})
	b.rows = append(b.rows, rows...)
	b.next, b.end = next, next == ""
	return b.trimTop(cut)
}

// trimTop evicts the cut rows above a page start from the top.
func (b *Window[T]) trimTop(cut int) int {
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
			b.above = append(b.above, Evicted{segCur, m.idx - segStart, segHead})
		}
		segStart, segCur, segHead = m.idx, m.cur, false
	}
	b.above = append(b.above, Evicted{segCur, cut - segStart, segHead})
	b.marks = kept
	b.rows = append([]T(nil), b.rows[cut:]...)
	return cut
}

// TopCut is how many rows AppendOlder evicts once n more rows are appended as
// one page: up to the first page start at or after the excess, but never
// the last page held, where the selection that asked for the next page
// is (the window then holds more than its capacity until the next page).
func (b *Window[T]) TopCut(n int) int {
	excess := len(b.rows) + n - b.cap
	if excess <= 0 {
		return 0
	}
	last := 0 // where the last page held starts
	if len(b.marks) > 0 {
		last = b.marks[len(b.marks)-1].idx
	}
	for _, m := range b.marks {
		if m.idx >= excess {
			return min(m.idx, last)
		}
	}
	return last
}

// KeptAfterPrepend is how many of the rows now held stay once n rows are
// put above them (a prepend cuts at a page start), -1 when none can.
func (b *Window[T]) KeptAfterPrepend(n int) int {
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

// PrependNewer puts rows (newest first) above rows[0]; they are rows with no
// cursor of their own (a tail, or an evicted page read back, see
// PrependPage). Rows beyond cap are dropped from the bottom at a page
// boundary; ok is false when there is none, and the caller must reload.
func (b *Window[T]) PrependNewer(rows []T) (ok bool) {
	return b.prepend(rows, nil)
}

// PrependPage puts back the evicted page nearest the top, read with e.cur
// (for the head, without a cursor: the caller joins it to the first row).
func (b *Window[T]) PrependPage(e Evicted, rows []T) bool {
	b.above = b.above[:len(b.above)-1]
	if e.Head {
		return b.prepend(rows, nil)
	}
	return b.prepend(rows, &mark{0, e.Cur})
}

func (b *Window[T]) prepend(rows []T, m *mark) bool {
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
func (b *Window[T]) trimBottom() bool {
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

// Index finds a row by id in the window (-1 when absent).
func (b *Window[T]) Index(id string) int {
	for i, r := range b.rows {
		if b.id(r) == id {
			return i
		}
	}
	return -1
}
