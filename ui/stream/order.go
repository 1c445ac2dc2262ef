package stream

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// In time order the tail still reads in indexing order, so a following
// stream reloads its first page to place a late event where its time puts
// it. After a jump (G, :time) nothing newer than the jump's first page is
// read until Home goes back to the newest.

// Order is the order the stream lists in.
func (v *Model) Order() query.Sort { return v.order }

// Jumped reports whether the rows start at a jump (G, :time) rather than
// at the newest document.
func (v *Model) Jumped() bool { return v.jumped }

// orderName says which order is in force, for the position line.
func orderName(s query.Sort) string {
	if s == query.SortTime {
		return "by event time"
	}
	return "by indexing time"
}

// ordered is a reader whose Recent lists in the stream's order.
type ordered struct {
	uikit.Reader
	order query.Sort
}

func (o ordered) Recent(ctx context.Context, expr string, after query.Cursor, limit int) (query.Page, error) {
	if o.order == query.SortIndexed {
		return o.Reader.Recent(ctx, expr, after, limit)
	}
	sr, ok := o.Reader.(query.SortedReader)
	if !ok {
		return query.Page{}, errNoTimeOrder
	}
	return sr.List(ctx, query.ListQuery{Expr: expr, Sort: o.order, After: after, Limit: limit})
}

// reader is the reader the stream's pages are read with (the tail reads
// Deps.Reader itself).
func (v *Model) reader() uikit.Reader { return ordered{v.c.Deps.Reader, v.order} }

type errString string

func (e errString) Error() string { return string(e) }

const errNoTimeOrder = errString("this index cannot list by event time")

// CanOrder reports whether the index lists by event time too.
func (v *Model) CanOrder() bool {
	_, ok := v.c.Deps.Reader.(query.SortedReader)
	return ok
}

// ToggleOrder switches between indexing and event time order and reloads
// from the newest (o).
func (v *Model) ToggleOrder() tea.Cmd {
	if !v.CanOrder() {
		return uikit.StatusCmd("order: "+errNoTimeOrder.Error(), true)
	}
	if v.order == query.SortTime {
		return v.SetOrder(query.SortIndexed)
	}
	return v.SetOrder(query.SortTime)
}

// SetOrder lists in s from the newest, following.
func (v *Model) SetOrder(s query.Sort) tea.Cmd {
	v.order = s
	v.following, v.want = true, ""
	return tea.Batch(v.reloadHead(), uikit.StatusCmd("stream "+orderName(s), false))
}

// jumpMsg is the page a jump (G, :time) landed on.
type jumpMsg struct {
	seq   uint64
	order query.Sort
	cur   query.Cursor // what the page was listed from ("": the head)
	page  query.Page
	what  string // "the oldest", "2026-05-08 22:00"
	last  bool   // select the page's last row (the oldest)
	err   error
}

// JumpOldest shows the oldest matching documents of the whole index, the
// oldest selected (G, End, when more is below the loaded rows).
func (v *Model) JumpOldest() tea.Cmd {
	v.seq++
	v.seeking = nil
	v.loadingHead = true
	r, expr, seq, order, n := v.reader(), v.expr, v.seq, v.order, v.c.Opts.PageSize
	sr, ok := v.c.Deps.Reader.(query.SortedReader)
	ctx := v.c.Ctx
	return func() tea.Msg {
		msg := jumpMsg{seq: seq, order: order, what: "the oldest", last: true}
		if !ok {
			msg.err = errString("this index cannot find its oldest page")
			return msg
		}
		msg.cur, msg.err = sr.Oldest(ctx, query.ListQuery{Expr: expr, Sort: order, Limit: n})
		if msg.err == nil {
			msg.page, msg.err = r.Recent(ctx, expr, msg.cur, n)
		}
		return msg
	}
}

// SeekTime shows the documents at or before at, newest first, in event
// time order (switching to it): :time.
func (v *Model) SeekTime(at time.Time) tea.Cmd {
	sr, ok := v.c.Deps.Reader.(query.SortedReader)
	if !ok {
		return uikit.StatusCmd("time: "+errNoTimeOrder.Error(), true)
	}
	v.seq++
	v.seeking = nil
	v.loadingHead = true
	// The order changes when the page lands (onJump): refused, the rows
	// and their order stay.
	r, expr, seq, n, ctx := ordered{v.c.Deps.Reader, query.SortTime}, v.expr, v.seq, v.c.Opts.PageSize, v.c.Ctx
	what := at.In(v.c.Opts.Location).Format("2006-01-02 15:04:05")
	return func() tea.Msg {
		msg := jumpMsg{seq: seq, order: query.SortTime, what: what}
		msg.cur, msg.err = sr.Seek(ctx, at)
		if msg.err == nil {
			msg.page, msg.err = r.Recent(ctx, expr, msg.cur, n)
		}
		return msg
	}
}

// onJump shows the page a jump landed on, paused there.
func (v *Model) onJump(msg jumpMsg) tea.Cmd {
	if msg.seq != v.seq {
		return nil
	}
	v.loadingHead = false
	if msg.err != nil {
		return uikit.StatusCmd("going to "+msg.what+": "+uikit.ErrorText(msg.err), true)
	}
	v.order = msg.order
	v.buf.ResetFrom(msg.cur, msg.page.Docs, msg.page.Next)
	v.jumped = msg.cur != ""
	v.following = !v.jumped && !msg.last
	v.pending, v.pendingN, v.overflow = nil, 0, false
	v.loaded, v.good = true, v.expr
	v.cur.Reset()
	if msg.last && v.buf.Len() > 0 {
		v.cur.Select(v.buf.Len() - 1)
	}
	v.cur.Scroll(v.buf.Len())
	if v.buf.Len() == 0 {
		return uikit.StatusCmd("nothing at or before "+msg.what, false)
	}
	return nil
}

// placeNew takes what the tail brought in time order: a following stream
// at its newest reloads its first page, where each lands by its time; a
// paused one counts it (Home shows it).
func (v *Model) placeNew(fresh []*model.IndexDoc) tea.Cmd {
	if v.following && v.buf.AtHead() && !v.jumped {
		if v.loadingHead {
			return nil // the head on its way may miss them: the next poll's reload will not
		}
		return v.reloadHead()
	}
	v.pendingN += len(fresh)
	v.overflow = true // resume reloads the head, in time order
	return nil
}

// OrderKey is o named for the order it switches to.
func (v *Model) OrderKey() key.Binding {
	b := v.c.Keys.Order
	if v.order == query.SortTime {
		b.SetHelp("o", "by indexing time")
	} else {
		b.SetHelp("o", "by event time")
	}
	return b
}
