package list

import (
	"strconv"
	"testing"

	"engram/query"
)

// page is rows from..from+n-1 of a listing of numbers, newest first.
func page(from, n int) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = from + i
	}
	return rows
}

func cursorAt(i int) query.Cursor { return query.Cursor(strconv.Itoa(i)) }

func TestWindowEvictsWholePagesAndReadsThemBack(t *testing.T) {
	w := NewWindow(25, strconv.Itoa)
	w.Reset(page(0, 10), cursorAt(10))
	if !w.AtHead() || w.End() || w.Len() != 10 {
		t.Fatalf("first page: len %d head %v end %v", w.Len(), w.AtHead(), w.End())
	}
	for from := 10; from < 40; from += 10 {
		w.AppendOlder(cursorAt(from), page(from, 10), cursorAt(from+10))
	}
	if w.Len() > 25 || w.AtHead() || w.Index("39") < 0 || w.Index("0") >= 0 {
		t.Fatalf("after paging down: len %d, head %v, first row %d", w.Len(), w.AtHead(), w.Row(0))
	}
	for !w.AtHead() {
		ev := w.Above()
		from := 0
		if !ev.Head {
			from, _ = strconv.Atoi(string(ev.Cur))
		}
		if !w.PrependPage(ev, page(from, ev.N)) {
			t.Fatal("could not put an evicted page back")
		}
	}
	if w.Row(0) != 0 || w.Len() > 25 {
		t.Fatalf("back at the head: first row %d, len %d", w.Row(0), w.Len())
	}
	for i, r := range w.All() {
		if r != i {
			t.Fatalf("row %d holds %d", i, r)
		}
	}
}

func TestWindowPrependNewerNeedsAPageBoundary(t *testing.T) {
	w := NewWindow(10, strconv.Itoa)
	w.Reset(page(5, 10), cursorAt(15))
	if w.PrependNewer(page(0, 5)) {
		t.Fatal("dropped rows from the bottom where no page starts")
	}
}

// A page appended never evicts the page above it, which holds the
// selection that asked for it, however large that page has grown (the
// head page takes the tail's rows).
func TestWindowKeepsThePageAboveAnAppend(t *testing.T) {
	w := NewWindow(20, strconv.Itoa)
	w.Reset(page(0, 12), cursorAt(12)) // a head page of 10, grown by 2
	if cut := w.AppendOlder(cursorAt(12), page(12, 10), cursorAt(22)); cut != 0 || w.Index("11") < 0 {
		t.Fatalf("appending evicted %d rows, the last row of the page above with them", cut)
	}
	if cut := w.AppendOlder(cursorAt(22), page(22, 10), cursorAt(32)); cut != 12 || w.Index("21") < 0 {
		t.Fatalf("the next append evicted %d rows (want the head page's 12), the page above it kept: %v", cut, w.Index("21") >= 0)
	}
}
