// Package stream is the inspector's Stream view: the newest experiences,
// following the tail of the index, over a bounded window of rows that
// pages in from the index as it scrolls.
package stream

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Model is the Stream view. Following means the selection sits on the
// newest row and new documents appear above it; moving away pauses, and
// while paused new documents are only counted.
type Model struct {
	c    *uikit.Common
	buf  *list.Window[*model.IndexDoc]
	w, h int
	cur  list.Cursor // the selected row and the first drawn, indexes into buf

	expr string
	good string // the expression of the rows shown (expr may still be loading)
	seq  uint64 // bumped by every head load; older answers are dropped

	tail      query.Cursor
	tailReady bool
	polling   bool
	lastPoll  time.Time // when the tail last answered and was taken in

	following bool
	pending   []*model.IndexDoc // newest first, while paused
	pendingN  int               // how many arrived while paused
	overflow  bool              // pending lost some: resume reloads the head

	loaded                     bool
	loadingHead                bool
	loadingOlder, loadingNewer bool
	want                       string     // select this event once it shows
	seeking                    *seek      // a jump looking beyond the loaded rows
	seen                       int        // documents the tail has brought, filtered or not
	hscroll                    int        // summary cells scrolled off to the left (←/→)
	find                       string     // the term n and N look for (Find)
	order                      query.Sort // indexing or event time (order.go)
	jumped                     bool       // the rows start at a jump (G, :time), not the newest
}

// New is the view before its first load (Init).
func New(c *uikit.Common) *Model {
	return &Model{
		c:         c,
		buf:       list.NewWindow(c.Opts.BufferRows, func(d *model.IndexDoc) string { return d.EventID }),
		following: true,
	}
}

// Init loads the first page and finds where the tail starts.
func (v *Model) Init() tea.Cmd {
	v.seq++
	v.loadingHead = true
	return loadHead(v.c.Ctx, v.reader(), v.expr, v.seq, v.c.Opts.PageSize, true, true)
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area; two lines go to the column titles and
// the position line.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(v.buf.Len())
}

func (v *Model) rowsH() int { return max(1, v.h-2) }

// Selected is the selected document, nil when there is none.
func (v *Model) Selected() *model.IndexDoc {
	if v.cur.Sel() >= v.buf.Len() {
		return nil
	}
	return v.buf.Row(v.cur.Sel())
}

// SetFilter reloads the stream under a new expression.
func (v *Model) SetFilter(expr string) tea.Cmd {
	v.expr = expr
	return v.reloadHead()
}

func (v *Model) reloadHead() tea.Cmd {
	v.seq++
	v.seeking = nil
	v.loadingHead, v.loadingOlder, v.loadingNewer = true, false, false
	// What came while paused stays counted until the head lands: a filter
	// the index refuses keeps the old rows, and these with them.
	// Until the tail has started, every head load reads where it starts:
	// the start-up answer may come after this one, its start read after
	// these rows, and what was indexed between would be in neither.
	return loadHead(v.c.Ctx, v.reader(), v.expr, v.seq, v.c.Opts.PageSize, false, !v.tailReady)
}

// selectWanted moves the selection to the event asked for, once loaded.
func (v *Model) selectWanted() {
	if v.want == "" {
		return
	}
	if i := v.buf.Index(v.want); i >= 0 {
		v.cur.Select(i)
		v.want = ""
		// Paused, so that newer rows arriving do not take the selection
		// away from the event asked for.
		v.following = false
		v.cur.Scroll(v.buf.Len())
	}
}

// wanted: the event asked for is among docs.
func (v *Model) wanted(docs []*model.IndexDoc) bool {
	for _, d := range docs {
		if v.want != "" && d.EventID == v.want {
			return true
		}
	}
	return false
}

// SelectID selects an event, showing what arrived while paused if needed.
func (v *Model) SelectID(id string) tea.Cmd {
	v.want = id
	if v.buf.Index(id) < 0 && v.wanted(v.pending) {
		return v.resume()
	}
	v.selectWanted()
	return nil
}

// Step is the navigator for the detail view: the row delta away from id,
// moved to as the keys would (so rows page in near the window's ends).
func (v *Model) Step(from string, delta int) (*model.IndexDoc, tea.Cmd) {
	i := v.buf.Index(from)
	if i < 0 {
		return nil, nil
	}
	if j := i + delta; j < 0 || j >= v.buf.Len() {
		return nil, v.pageIn()
	}
	v.cur.Select(i)
	cmd := v.move(delta)
	return v.buf.Row(v.cur.Sel()), cmd
}

// Jump selects the next (dir 1) or previous (-1) row after the event from
// whose key equals from's: a loaded one, else one found by paging on (see
// seek). It reports false when there is no such row and nothing to page.
func (v *Model) Jump(from *model.IndexDoc, keyOf func(*model.IndexDoc) string, dir int) (bool, tea.Cmd) {
	v.seeking = nil
	start := -1
	if from != nil {
		start = v.buf.Index(from.EventID)
	}
	if start < 0 || keyOf(from) == "" {
		return false, nil
	}
	want := keyOf(from)
	for i := start + dir; i >= 0 && i < v.buf.Len(); i += dir {
		if keyOf(v.buf.Row(i)) == want {
			v.cur.Select(start)
			return true, v.move(i - start)
		}
	}
	return v.startSeek(start, keyOf, want, dir)
}

// GoTop selects the newest row and follows again (g g).
func (v *Model) GoTop() tea.Cmd {
	v.want = ""
	return v.resume()
}

// Busy reports whether rows are loading.
func (v *Model) Busy() bool { return v.loadingHead || v.loadingOlder || v.loadingNewer }

// LoadingOlder reports whether the page below the last row is on its way.
func (v *Model) LoadingOlder() bool { return v.loadingOlder }

// Empty reports whether the index holds nothing at all, as far as the stream
// knows (a filter matching nothing is not empty).
func (v *Model) Empty() bool {
	return v.loaded && v.buf.Len() == 0 && v.expr == "" && len(v.pending) == 0
}

// Following reports whether new rows show as they come; else they are
// counted (Pending).
func (v *Model) Following() bool { return v.following }

// Pending is how many new documents came while paused.
func (v *Model) Pending() int { return v.pendingN }

// Seen is how many new documents the tail has brought, filtered or not.
func (v *Model) Seen() int { return v.seen }

// LastPoll is when the tail last answered and its answer was taken in
// (with or without new documents): the rows are current as of then. It
// is zero until the tail has started.
func (v *Model) LastPoll() time.Time { return v.lastPoll }

// Stalled reports whether the tail has started but no poll has been taken in
// for StallAfter, so new documents may be missing without a sign. A pause
// does not stall it (the tail still counts what comes).
func (v *Model) Stalled(now time.Time) bool {
	return v.tailReady && now.Sub(v.lastPoll) > v.StallAfter()
}

// StallAfter is three poll intervals, and never under three seconds: a
// remote index may take longer than 3×250ms to answer on a busy day.
func (v *Model) StallAfter() time.Duration { return max(3*v.c.Opts.Poll, 3*time.Second) }

// Seeking reports whether a jump is looking beyond the loaded rows.
func (v *Model) Seeking() bool { return v.seeking != nil }

// StopSeek ends a jump still looking (any key does).
func (v *Model) StopSeek() { v.seeking = nil }

// Filter is the expression asked for; Shown is the one of the rows shown
// (the last that loaded).
func (v *Model) Filter() string { return v.expr }

// Shown returns the expression of the rows shown: see Filter.
func (v *Model) Shown() string { return v.good }

// Rows is the window of rows held.
func (v *Model) Rows() *list.Window[*model.IndexDoc] { return v.buf }

// Top is the index in Rows of the first row drawn.
func (v *Model) Top() int { return v.cur.Top() }

// Selection is the index of the selected row in Rows.
func (v *Model) Selection() int { return v.cur.Sel() }

// RowsShown is how many rows fit on the screen.
func (v *Model) RowsShown() int { return v.rowsH() }
