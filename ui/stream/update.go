package stream

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Update handles the stream's keys and answers.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
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
	case TickMsg:
		return v.poll()
	case WatchMsg:
		return v.c.After(v.watchEvery(), WatchMsg{})
	case tailMsg:
		return v.onTail(msg)
	case jumpMsg:
		return v.onJump(msg)
	}
	return nil
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Home):
		return v.resume()
	case key.Matches(msg, km.Pause):
		return v.TogglePause()
	case key.Matches(msg, km.End) && !v.buf.End() && v.CanOrder():
		return v.JumpOldest() // the oldest of the index, not of the rows loaded
	case v.find != "" && key.Matches(msg, km.NextMatch):
		return v.findFrom(1, 1)
	case v.find != "" && key.Matches(msg, km.PrevMatch):
		return v.findFrom(-1, -1)
	case key.Matches(msg, km.ScrollLeft):
		v.hscroll = max(0, v.hscroll-scrollStep)
		return nil
	case key.Matches(msg, km.ScrollRight):
		v.hscroll = min(v.hscroll+scrollStep, 2000)
		return nil
	case key.Matches(msg, km.Enter):
		if d := v.Selected(); d != nil {
			return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d, Nav: v} }
		}
	}
	if delta, ok := list.Step(msg, km, v.rowsH(), v.buf.Len()); ok {
		return v.move(delta)
	}
	return nil
}

// Click selects the row'th row on screen; on the selected row it opens
// it.
func (v *Model) Click(row int) tea.Cmd {
	from, to := v.cur.Visible(v.buf.Len())
	i := from + row
	if row < 0 || i >= to {
		return nil
	}
	if i == v.cur.Sel() {
		return v.onKey(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	return v.move(i - v.cur.Sel())
}

// scrollStep is the cells ←/→ scroll the summary by.
const scrollStep = 16

// move shifts the selection by delta rows, pausing the follow when it
// leaves the newest row and paging rows in near either end of the window.
func (v *Model) move(delta int) tea.Cmd {
	n := v.buf.Len()
	if n == 0 {
		return nil
	}
	if delta < 0 && v.jumped && v.buf.AtHead() && v.cur.Sel() == 0 {
		return uikit.StatusCmd("the rows start where G or :time went: home goes back to the newest", false)
	}
	v.cur.Move(delta, n)
	if v.cur.Sel() > 0 || !v.buf.AtHead() {
		v.following = false
	}
	return v.pageIn()
}

// pageIn asks for the rows beyond the window's ends when the selection
// comes within half a page of them.
func (v *Model) pageIn() tea.Cmd {
	half := v.c.Opts.PageSize / 2
	var cmds []tea.Cmd
	if !v.loadingOlder && !v.loadingHead && !v.buf.End() && v.cur.Sel() >= v.buf.Len()-half {
		v.loadingOlder = true
		cmds = append(cmds, loadOlder(v.c.Ctx, v.reader(), v.expr, v.seq, v.buf.Next(), v.c.Opts.PageSize))
	}
	if !v.loadingNewer && !v.loadingHead && !v.buf.AtHead() && v.cur.Sel() < half {
		ev := v.buf.Above()
		if ev.Head && v.overflow {
			return tea.Batch(append(cmds, v.reloadHead())...)
		}
		v.loadingNewer = true
		cmds = append(cmds, loadNewer(v.c.Ctx, v.reader(), v.expr, v.seq, v.headAware(ev)))
	}
	return tea.Batch(cmds...)
}

// pageOn asks again for what a stale answer was to bring: the seek's
// next page, or what the selection needs.
func (v *Model) pageOn() tea.Cmd {
	if v.seeking != nil {
		return v.seekMore()
	}
	return v.pageIn()
}

// TogglePause pauses the follow, or resumes it (space, here and in Turns).
func (v *Model) TogglePause() tea.Cmd {
	if v.following {
		v.following = false
		return nil
	}
	return v.resume()
}

// resume goes back to the newest row and follows again, showing what
// arrived while paused.
func (v *Model) resume() tea.Cmd {
	v.following = true
	if v.overflow || !v.buf.AtHead() || v.jumped {
		return v.reloadHead()
	}
	if len(v.pending) > 0 && !v.buf.PrependNewer(v.pending) {
		return v.reloadHead()
	}
	v.pending, v.pendingN = nil, 0
	v.cur.Reset()
	return nil
}

// showWanted shows what came while paused to select the event asked for.
func (v *Model) showWanted() tea.Cmd {
	cmd := v.resume()
	v.selectWanted()
	return cmd
}

func (v *Model) onHead(msg headMsg) tea.Cmd {
	if msg.first && msg.err != nil {
		return send(StartFailedMsg{msg.err})
	}
	// Where the tail starts does not depend on the rows' filter: it is
	// taken from whichever head answer brings it first, even one whose
	// rows are moot, or nothing would ever poll the tail.
	return tea.Batch(v.startTail(msg), v.landHead(msg))
}

// startTail starts the tail from a head answer's start, once, and arms
// its first tick: from then on each answer arms the next (onTail).
func (v *Model) startTail(msg headMsg) tea.Cmd {
	if v.tailReady || !msg.tailOK {
		return nil
	}
	v.tail, v.tailReady = msg.tail, true
	v.lastPoll = v.c.Deps.Now()
	return tea.Batch(v.c.After(v.c.Opts.Poll, TickMsg{}), v.c.After(v.watchEvery(), WatchMsg{}))
}

// landHead shows a head load's rows, unless a newer load made them moot.
func (v *Model) landHead(msg headMsg) tea.Cmd {
	switch {
	case msg.seq != v.seq:
		return nil
	case msg.err != nil && v.expr != "":
		// The rows shown stay those of the last expression that worked.
		bad := v.expr
		v.loadingHead = false
		v.expr = v.good
		refused := send(FilterRefusedMsg{Expr: bad, Err: msg.err})
		if !v.loaded { // refused before any rows came: load them unfiltered
			return tea.Batch(refused, v.reloadHead())
		}
		return refused
	}
	v.loadingHead = false
	v.seeking = nil // the window it looked through is gone
	if msg.err != nil {
		return uikit.StatusCmd("loading the stream: "+uikit.ErrorText(msg.err), true)
	}
	v.jumped = false
	keep := ""
	if d := v.Selected(); d != nil && !v.following {
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
	return nil
}

func (v *Model) onOlder(msg olderMsg) tea.Cmd {
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
func (v *Model) headAware(ev list.Evicted) list.Evicted {
	if ev.Head {
		ev.N += v.pendingN + 1 + v.c.Opts.PageSize
	}
	return ev
}

func (v *Model) onNewer(msg newerMsg) tea.Cmd {
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
func (v *Model) joinHead(docs []*model.IndexDoc) ([]*model.IndexDoc, bool) {
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
func (v *Model) poll() tea.Cmd {
	if !v.tailReady || v.polling {
		return nil
	}
	v.polling = true
	return pollTail(v.c.Ctx, v.c.Deps.Reader, v.tail, v.expr, v.seq, v.c.Opts.PageSize)
}

func (v *Model) onTail(msg tailMsg) tea.Cmd {
	// Every answer arms the next tick (or reads on at once): a tick that
	// came while this poll was out was dropped, so this is the only one.
	v.polling = false
	if msg.err != nil {
		return tea.Batch(uikit.StatusCmd("following: "+uikit.ErrorText(msg.err), true), v.c.After(v.c.Opts.Poll, TickMsg{}))
	}
	if msg.seq != v.seq || v.loadingHead || msg.from != v.tail {
		// Filtered for another expression, or a head load is on its way:
		// poll again from the same place once it has landed. Its documents
		// are not counted as seen: that poll brings them again.
		return v.c.After(v.c.Opts.Poll, TickMsg{})
	}
	v.seen += msg.seen
	v.tail = msg.next
	v.lastPoll = v.c.Deps.Now()
	next := v.c.After(v.c.Opts.Poll, TickMsg{})
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
func (v *Model) addNew(docs []*model.IndexDoc) tea.Cmd {
	fresh := v.unseen(docs)
	if len(fresh) == 0 {
		return nil
	}
	if v.order == query.SortTime {
		return v.placeNew(fresh)
	}
	if !v.following || !v.buf.AtHead() {
		v.pendingN += len(fresh)
		v.pending = append(fresh, v.pending...)
		if len(v.pending) > v.c.Opts.BufferRows {
			v.pending, v.overflow = v.pending[:v.c.Opts.BufferRows], true
		}
		if v.wanted(fresh) { // show it rather than count it
			return v.showWanted()
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
func (v *Model) unseen(docs []*model.IndexDoc) []*model.IndexDoc {
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

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// Every function below returns a tea.Cmd: the I/O runs in the command's
// goroutine with what was copied into the closure, never in Update.

func loadHead(ctx context.Context, r uikit.Reader, expr string, seq uint64, limit int, first, withTail bool) tea.Cmd {
	return func() tea.Msg {
		msg := headMsg{seq: seq, first: first}
		if withTail {
			// Before the rows, so that nothing indexed between is missed.
			tail, err := r.TailStart(ctx)
			if err != nil && first {
				msg.err = err
				return msg
			}
			msg.tail, msg.tailOK = tail, err == nil
		}
		msg.page, msg.err = r.Recent(ctx, expr, "", limit)
		return msg
	}
}

func loadOlder(ctx context.Context, r uikit.Reader, expr string, seq uint64, after query.Cursor, limit int) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Recent(ctx, expr, after, limit)
		return olderMsg{seq, after, page, err}
	}
}

func loadNewer(ctx context.Context, r uikit.Reader, expr string, seq uint64, ev list.Evicted) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Recent(ctx, expr, ev.Cur, ev.N)
		return newerMsg{seq, ev, page, err}
	}
}

// pollTail reads what was indexed after from. Tail knows no filter, so with
// one the new documents are checked against it by id (not by asking for the
// newest matches: documents indexed after the Tail call, or arriving late
// behind its position, would crowd new matches out of that answer).
func pollTail(ctx context.Context, r uikit.Reader, from query.Cursor, expr string, seq uint64, limit int) tea.Cmd {
	return func() tea.Msg {
		page, err := r.Tail(ctx, from, limit)
		msg := tailMsg{seq: seq, from: from, next: page.Next, docs: page.Docs, seen: len(page.Docs), err: err}
		if err == nil {
			msg.docs, msg.err = query.Filter(ctx, r, expr, page.Docs)
		}
		return msg
	}
}

// watchEvery is how often WatchMsg comes: a second, or the poll's interval
// when that is shorter (the follow's own pace).
func (v *Model) watchEvery() time.Duration { return min(time.Second, v.c.Opts.Poll) }
