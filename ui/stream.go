package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// streamView is the newest experiences, following the tail. Following
// means the selection sits on the newest row and new documents appear
// above it; moving away pauses, and while paused new documents are only
// counted.
type streamView struct {
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

	following bool
	pending   []*model.IndexDoc // newest first, while paused
	pendingN  int               // how many arrived while paused
	overflow  bool              // pending lost some: resume reloads the head

	loaded                     bool
	loadingHead                bool
	loadingOlder, loadingNewer bool
	want                       string // select this event once it shows
	seeking                    *seek  // a jump looking beyond the loaded rows
}

func newStreamView(c *uikit.Common) *streamView {
	return &streamView{
		c:         c,
		buf:       list.NewWindow(c.Opts.BufferRows, func(d *model.IndexDoc) string { return d.EventID }),
		following: true,
	}
}

// init loads the first page and finds where the tail starts.
func (v *streamView) init() tea.Cmd {
	v.seq++
	v.loadingHead = true
	return loadHead(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, v.c.Opts.PageSize, true)
}

// Size is the area SetSize gave.
func (v *streamView) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area; two lines go to the column titles and
// the position line.
func (v *streamView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(v.buf.Len())
}

func (v *streamView) rowsH() int { return max(1, v.h-2) }

// selected is the selected document, nil when there is none.
func (v *streamView) selected() *model.IndexDoc {
	if v.cur.Sel() >= v.buf.Len() {
		return nil
	}
	return v.buf.Row(v.cur.Sel())
}

// setFilter reloads the stream under a new expression.
func (v *streamView) setFilter(expr string) tea.Cmd {
	v.expr = expr
	return v.reloadHead()
}

func (v *streamView) reloadHead() tea.Cmd {
	v.seq++
	v.seeking = nil
	v.loadingHead, v.loadingOlder, v.loadingNewer = true, false, false
	// What came while paused stays counted until the head lands: a filter
	// the index refuses keeps the old rows, and these with them.
	return loadHead(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, v.c.Opts.PageSize, false)
}

// Update handles the stream's keys and answers.
func (v *streamView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return v.onKey(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			return v.move(-3)
		case tea.MouseWheelDown:
			return v.move(3)
		}
	case headMsg:
		return v.onHead(msg)
	case olderMsg:
		return v.onOlder(msg)
	case newerMsg:
		return v.onNewer(msg)
	case tailTickMsg:
		return v.poll()
	case tailMsg:
		return v.onTail(msg)
	}
	return nil
}

func (v *streamView) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Home):
		return v.resume()
	case key.Matches(msg, km.Pause):
		if v.following {
			v.following = false
			return nil
		}
		return v.resume()
	case key.Matches(msg, km.Enter):
		if d := v.selected(); d != nil {
			return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d, Nav: v} }
		}
	}
	if delta, ok := list.Step(msg, km, v.rowsH(), v.buf.Len()); ok {
		return v.move(delta)
	}
	return nil
}

// move shifts the selection by delta rows, pausing the follow when it
// leaves the newest row and paging rows in near either end of the window.
func (v *streamView) move(delta int) tea.Cmd {
	n := v.buf.Len()
	if n == 0 {
		return nil
	}
	v.cur.Move(delta, n)
	if v.cur.Sel() > 0 || !v.buf.AtHead() {
		v.following = false
	}
	return v.pageIn()
}

// pageIn asks for the rows beyond the window's ends when the selection
// comes within half a page of them.
func (v *streamView) pageIn() tea.Cmd {
	half := v.c.Opts.PageSize / 2
	var cmds []tea.Cmd
	if !v.loadingOlder && !v.loadingHead && !v.buf.End() && v.cur.Sel() >= v.buf.Len()-half {
		v.loadingOlder = true
		cmds = append(cmds, loadOlder(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, v.buf.Next(), v.c.Opts.PageSize))
	}
	if !v.loadingNewer && !v.loadingHead && !v.buf.AtHead() && v.cur.Sel() < half {
		ev := v.buf.Above()
		if ev.Head && v.overflow {
			return tea.Batch(append(cmds, v.reloadHead())...)
		}
		v.loadingNewer = true
		cmds = append(cmds, loadNewer(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, v.headAware(ev)))
	}
	return tea.Batch(cmds...)
}

// pageOn asks again for what a stale answer was to bring: the seek's
// next page, or what the selection needs.
func (v *streamView) pageOn() tea.Cmd {
	if v.seeking != nil {
		return v.seekMore()
	}
	return v.pageIn()
}

// resume goes back to the newest row and follows again, showing what
// arrived while paused.
func (v *streamView) resume() tea.Cmd {
	v.following = true
	if v.overflow || !v.buf.AtHead() {
		return v.reloadHead()
	}
	if len(v.pending) > 0 && !v.buf.PrependNewer(v.pending) {
		return v.reloadHead()
	}
	v.pending, v.pendingN = nil, 0
	v.cur.Reset()
	return nil
}

func (v *streamView) onHead(msg headMsg) tea.Cmd {
	if msg.seq != v.seq {
		return nil
	}
	v.loadingHead = false
	v.seeking = nil // the window it looked through is gone
	if msg.err != nil {
		return uikit.StatusCmd("loading the stream: "+uikit.ErrorText(msg.err), true)
	}
	keep := ""
	if d := v.selected(); d != nil && !v.following {
		keep = d.EventID
	}
	v.buf.Reset(msg.page.Docs, msg.page.Next)
	v.pending, v.pendingN, v.overflow = nil, 0, false // the head holds them
	v.loaded, v.good = true, v.expr
	v.cur.Reset()
	if i := v.buf.Index(keep); i >= 0 {
		v.cur.Select(i)
	}
	v.selectWanted()
	v.cur.Scroll(v.buf.Len())
	if msg.first {
		v.tail, v.tailReady = msg.tail, true
		return v.c.After(v.c.Opts.Poll, tailTickMsg{})
	}
	return nil
}

func (v *streamView) onOlder(msg olderMsg) tea.Cmd {
	if msg.seq != v.seq || !v.loadingOlder {
		return nil // answers a request a head load made moot
	}
	v.loadingOlder = false
	if msg.after != v.buf.Next() { // the window's end moved meanwhile: ask again
		return v.pageOn()
	}
	if msg.err != nil {
		return uikit.StatusCmd("loading older rows: "+uikit.ErrorText(msg.err), true)
	}
	dropped := v.buf.AppendOlder(msg.after, msg.page.Docs, msg.page.Next)
	v.cur.Shift(-dropped)
	v.cur.Scroll(v.buf.Len())
	if v.seeking != nil && v.seeking.dir > 0 {
		return v.onSeekPage(len(msg.page.Docs))
	}
	return nil
}

// headAware widens the read of an evicted head page: the head has no
// cursor, so it is read from the newest, past what came while paused
// (pending) and one row more, the first row still held, to join on.
func (v *streamView) headAware(ev list.Evicted) list.Evicted {
	if ev.Head {
		ev.N += v.pendingN + 1 + v.c.Opts.PageSize
	}
	return ev
}

func (v *streamView) onNewer(msg newerMsg) tea.Cmd {
	if msg.seq != v.seq || !v.loadingNewer {
		return nil
	}
	v.loadingNewer = false
	if v.buf.AtHead() || v.headAware(v.buf.Above()) != msg.ev {
		return v.pageOn() // the window's top moved meanwhile: ask again
	}
	if msg.err != nil {
		return uikit.StatusCmd("loading newer rows: "+uikit.ErrorText(msg.err), true)
	}
	docs := msg.page.Docs
	if msg.ev.Head {
		var ok bool
		if docs, ok = v.joinHead(docs); !ok {
			return v.reloadHead()
		}
	}
	n := len(docs)
	v.buf.PrependPage(v.buf.Above(), docs)
	v.cur.Shift(n)
	v.cur.Scroll(v.buf.Len())
	if v.seeking != nil && v.seeking.dir < 0 {
		return v.onSeekPage(n)
	}
	return nil
}

// joinHead keeps, of the newest documents, those above the first row
// held that are not waiting as new: the evicted head, read back. ok is
// false when the first row held is not among them (too much came since).
func (v *streamView) joinHead(docs []*model.IndexDoc) ([]*model.IndexDoc, bool) {
	first := v.buf.Row(0).EventID
	pending := make(map[string]bool, len(v.pending))
	for _, d := range v.pending {
		pending[d.EventID] = true
	}
	for j, d := range docs {
		if d.EventID == first {
			out := make([]*model.IndexDoc, 0, j)
			for _, d := range docs[:j] {
				if !pending[d.EventID] {
					out = append(out, d)
				}
			}
			return out, true
		}
	}
	return nil, false
}

// poll reads the tail unless a poll is already out.
func (v *streamView) poll() tea.Cmd {
	if !v.tailReady || v.polling {
		return nil
	}
	v.polling = true
	return pollTail(v.c.Ctx, v.c.Deps.Reader, v.tail, v.expr, v.seq, v.c.Opts.PageSize)
}

func (v *streamView) onTail(msg tailMsg) tea.Cmd {
	v.polling = false
	if msg.err != nil {
		return tea.Batch(uikit.StatusCmd("following: "+uikit.ErrorText(msg.err), true), v.c.After(v.c.Opts.Poll, tailTickMsg{}))
	}
	if msg.seq != v.seq || v.loadingHead {
		// Filtered for another expression, or a head load is on its way:
		// poll again from the same place once it has landed.
		return v.c.After(v.c.Opts.Poll, tailTickMsg{})
	}
	v.tail = msg.next
	next := v.c.After(v.c.Opts.Poll, tailTickMsg{})
	if msg.seen == v.c.Opts.PageSize {
		next = v.poll() // more is waiting: read on at once
	}
	var cmds []tea.Cmd
	if msg.seen > 0 {
		cmds = append(cmds, uikit.LoadCount(v.c.Ctx, v.c.Deps.Reader))
	}
	return tea.Batch(append(cmds, next, v.addNew(msg.docs))...)
}

// addNew takes new documents (oldest first): shown when following,
// counted when paused.
func (v *streamView) addNew(docs []*model.IndexDoc) tea.Cmd {
	fresh := v.unseen(docs)
	if len(fresh) == 0 {
		return nil
	}
	if !v.following || !v.buf.AtHead() {
		v.pendingN += len(fresh)
		v.pending = append(fresh, v.pending...)
		if len(v.pending) > v.c.Opts.BufferRows {
			v.pending, v.overflow = v.pending[:v.c.Opts.BufferRows], true
		}
		return nil
	}
	if !v.buf.PrependNewer(fresh) {
		return v.reloadHead()
	}
	v.cur.Reset()
	v.selectWanted()
	return nil
}

// unseen returns docs newest first without those already at the top of
// the window (a head load and the tail can both see a new document).
func (v *streamView) unseen(docs []*model.IndexDoc) []*model.IndexDoc {
	seen := make(map[string]bool)
	for i := 0; i < min(v.buf.Len(), len(docs)+v.c.Opts.PageSize); i++ {
		seen[v.buf.Row(i).EventID] = true
	}
	for _, d := range v.pending {
		seen[d.EventID] = true
	}
	out := make([]*model.IndexDoc, 0, len(docs))
	for i := len(docs) - 1; i >= 0; i-- {
		if !seen[docs[i].EventID] {
			out = append(out, docs[i])
			seen[docs[i].EventID] = true
		}
	}
	return out
}

// selectWanted moves the selection to the event asked for, once loaded.
func (v *streamView) selectWanted() {
	if v.want == "" {
		return
	}
	if i := v.buf.Index(v.want); i >= 0 {
		v.cur.Select(i)
		v.want = ""
		v.following = v.following && i == 0
		v.cur.Scroll(v.buf.Len())
	}
}

// selectID selects an event, showing what arrived while paused if needed.
func (v *streamView) selectID(id string) tea.Cmd {
	v.want = id
	if v.buf.Index(id) < 0 {
		for _, d := range v.pending {
			if d.EventID == id {
				return v.resume()
			}
		}
	}
	v.selectWanted()
	return nil
}

// Step is the navigator for the detail view: the row delta away from id,
// moved to as the keys would (so rows page in near the window's ends).
func (v *streamView) Step(from string, delta int) (*model.IndexDoc, tea.Cmd) {
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

// jump selects the next (dir 1) or previous (-1) row after the event from
// whose key equals from's: a loaded one, else one found by paging on (see
// seek). It reports false when there is no such row and nothing to page.
func (v *streamView) jump(from *model.IndexDoc, keyOf func(*model.IndexDoc) string, dir int) (bool, tea.Cmd) {
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

// View draws the column titles, the visible rows and the position line.
func (v *streamView) View() string {
	st := v.c.Styles
	cols := layoutStream(v.w)
	var b strings.Builder
	b.WriteString(st.Table.Head.Render(uikit.Fit(streamHead(cols), v.w)))
	now := v.c.Deps.Now()
	from, to := v.cur.Visible(v.buf.Len())
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		b.WriteString(v.streamRow(v.buf.Row(i), cols, i == v.cur.Sel(), now))
	}
	for i := to - from; i < v.rowsH(); i++ {
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(st.Muted.Render(uikit.Fit(v.position(), v.w)))
	return b.String()
}

// position is the line under the rows: where the selection is in the
// window, whether more is loading, what filter applies.
func (v *streamView) position() string {
	n := v.buf.Len()
	s := fmt.Sprintf(" row %s of %s loaded", uikit.Thousands(int64(v.cur.Sel()+1)), uikit.Thousands(int64(n)))
	if n == 0 {
		s = " no rows"
	}
	if !v.buf.End() {
		s += " · more below"
	}
	if !v.buf.AtHead() {
		s += " · newer above"
	}
	if v.loadingOlder || v.loadingNewer || v.loadingHead {
		s += " · loading " + v.c.Spin.View()
	}
	if v.expr != "" {
		s += " · filter: " + uikit.Clean(v.expr)
	}
	return s
}

// ShortHelp is the footer: only the keys that do something now.
func (v *streamView) ShortHelp() []key.Binding {
	km := v.c.Keys
	bs := []key.Binding{}
	if v.buf.Len() > 0 {
		bs = append(bs, km.Move, km.Enter)
	}
	pause := km.Pause
	if v.following {
		pause.SetHelp("space", "pause")
	} else {
		pause.SetHelp("space", "follow")
	}
	bs = append(bs, pause, km.Filter)
	return bs
}

// FullHelp is every key of the stream, grouped.
func (v *streamView) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.ListKeys(), {km.Enter, km.Pause, km.Filter}}
}
