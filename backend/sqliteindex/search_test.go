package sqliteindex

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"engram/model"
	"engram/query"
)

// windowDoc is document i: every third does not match "alpha", the others
// repeat it 1 to 4 times, so bm25 orders them differently from their age.
func windowDoc(i int) *model.IndexDoc {
	d := testDoc(fmt.Sprintf("w-%03d", i))
	d.TurnID = d.EventID
	d.EventType = []string{model.TypeUserInput, model.TypeToolResult}[i%2]
	if i%3 == 0 {
		d.Summary = fmt.Sprintf("beta %d", i)
	} else {
		d.Summary = strings.Repeat("alpha ", 1+i%4) + "filler words to vary the length " + strings.Repeat("x ", i%5)
	}
	return d
}

func openWindowed(t *testing.T, path string, window int) *Reader {
	t.Helper()
	r, err := OpenReader(path, query.Options{RankWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// searchIDs pages through Search with pages of n, returning every id and
// the Ranking of the first page; between pages it calls between.
func searchIDs(t *testing.T, r *Reader, s string, n int, between func()) ([]string, *query.Ranking) {
	t.Helper()
	var ids []string
	var first *query.Ranking
	var after query.Cursor
	for page := 0; ; page++ {
		p, err := r.Search(context.Background(), s, after, n)
		if err != nil {
			t.Fatal(err)
		}
		if page == 0 {
			first = p.Ranking
		}
		for _, d := range p.Docs {
			ids = append(ids, d.EventID)
		}
		if p.Next == "" {
			return ids, first
		}
		after = p.Next
		if between != nil {
			between()
		}
	}
}

// TestSearchWindow: a windowed search ranks exactly the newest matches of
// its window, in the order an exhaustive ranking gives them, over pages
// that stay on the same window while documents are added.
func TestSearchWindow(t *testing.T) {
	db, path := openIndex(t)
	var docs []*model.IndexDoc
	for i := range 60 {
		docs = append(docs, windowDoc(i))
	}
	write(t, db, docs)
	all := openWindowed(t, path, -1)
	added := 0
	for _, c := range []struct {
		expr   string
		window int
	}{{"alpha", 10}, {"alpha", 7}, {"alpha type:tool_result", 6}, {"alpha -type:tool_result", 9}} {
		t.Run(fmt.Sprintf("%s/%d", c.expr, c.window), func(t *testing.T) {
			exhaustive, rk := searchIDs(t, all, c.expr, 1000, nil)
			if rk == nil || rk.Window != 0 || rk.Cut {
				t.Fatalf("exhaustive ranking reported as %+v", rk)
			}
			// The newest matches: the highest seqs, i.e. the latest ids.
			newest := slices.Clone(exhaustive)
			slices.Sort(newest)
			newest = newest[len(newest)-c.window:]
			var want []string
			for _, id := range exhaustive {
				if slices.Contains(newest, id) {
					want = append(want, id)
				}
			}
			r := openWindowed(t, path, c.window)
			got, rk := searchIDs(t, r, c.expr, 3, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("windowed ranking\n got %v\nwant %v", got, want)
			}
			if *rk != (query.Ranking{Window: c.window, Ranked: c.window, Cut: true}) {
				t.Fatalf("ranking reported as %+v", rk)
			}
			// Matching documents indexed between pages stay out of the
			// window; bm25 may reorder it a little, but each of its
			// documents comes exactly once.
			pages := 0
			got, _ = searchIDs(t, r, c.expr, 3, func() {
				pages++
				added++
				write(t, db, []*model.IndexDoc{windowDoc(1000 + added)})
			})
			if pages == 0 {
				t.Fatal("the search had one page: nothing was added between pages")
			}
			slices.Sort(got)
			if !slices.Equal(got, newest) {
				t.Fatalf("with writes between pages\n got %v\nwant %v", got, newest)
			}
		})
	}
	t.Run("wider than the matches", func(t *testing.T) {
		exhaustive, _ := searchIDs(t, all, "alpha type:user_input", 1000, nil)
		got, rk := searchIDs(t, openWindowed(t, path, 1000), "alpha type:user_input", 4, nil)
		if !slices.Equal(got, exhaustive) {
			t.Fatalf("got %v, want %v", got, exhaustive)
		}
		if *rk != (query.Ranking{Window: 1000, Ranked: len(exhaustive)}) {
			t.Fatalf("ranking reported as %+v", rk)
		}
	})
	t.Run("newest first is not ranked", func(t *testing.T) {
		p, err := openWindowed(t, path, 10).Search(context.Background(), "type:tool_result", "", 5)
		if err != nil || p.Ranking != nil {
			t.Fatalf("ranking %+v, err %v", p.Ranking, err)
		}
	})
	t.Run("a cursor of another kind", func(t *testing.T) {
		_, err := openWindowed(t, path, 10).Search(context.Background(), "alpha", seqCursor(5), 5)
		if err == nil {
			t.Fatal("a seq cursor was taken by a windowed search")
		}
	})
}

func TestWindowCursor(t *testing.T) {
	top, off, err := parseWindow(windowCursor(123, 40))
	if err != nil || top != 123 || off != 40 {
		t.Fatalf("round trip: %d %d %v", top, off, err)
	}
	for _, bad := range []query.Cursor{"", rankCursor(1, 2), seqCursor(3), "w", windowCursor(-1, 0), windowCursor(1, -2)} {
		if _, _, err := parseWindow(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestSearchWindowScanned: a filtered window tests at most
// candidatesPerMatch documents holding the words per match of the window,
// and says how many it tested when it stopped short.
func TestSearchWindowScanned(t *testing.T) {
	db, path := openIndex(t)
	var docs []*model.IndexDoc
	for i := range 100 {
		d := testDoc(fmt.Sprintf("s-%03d", i))
		d.TurnID = d.EventID
		d.Summary = "alpha " + strings.Repeat("x ", i%3)
		if i%10 == 0 {
			d.EventType = model.TypeToolResult
		}
		docs = append(docs, d)
	}
	write(t, db, docs)
	r := openWindowed(t, path, 4) // tests the newest 20 alpha documents
	got, rk := searchIDs(t, r, "alpha type:tool_result", 10, nil)
	slices.Sort(got)
	if want := []string{"s-080", "s-090"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if *rk != (query.Ranking{Window: 4, Ranked: 2, Cut: true, Scanned: 20}) {
		t.Errorf("ranking reported as %+v", rk)
	}
	if note := rk.Note(); !strings.Contains(note, "ranked the 2 matches among the newest 20 documents holding the words") {
		t.Errorf("note %q", note)
	}
	// Without a filter the window fills first: nothing is said of a scan.
	if _, rk := searchIDs(t, r, "alpha", 10, nil); *rk != (query.Ranking{Window: 4, Ranked: 4, Cut: true}) {
		t.Errorf("unfiltered ranking reported as %+v", rk)
	}
}
