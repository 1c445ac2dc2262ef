package turns

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/query"
	"engram/ui/uikit"
)

// The turns list in the stream's order (the root keeps them together):
// by the turn's latest match in indexing order, or in event time.
//
// G replaces the rows with the oldest page of the listing (OldestTurns),
// as the stream's G does with its documents: the pages in between are not
// read, so going there costs one page however many turns are above it.

// ordered is a reader whose Turns lists in an order.
type ordered struct {
	uikit.Reader
	order query.Sort
}

func (o ordered) Turns(ctx context.Context, expr string, after query.Cursor, limit int) (query.TurnPage, error) {
	sr, ok := o.Reader.(query.SortedReader)
	if o.order == query.SortIndexed || !ok {
		return o.Reader.Turns(ctx, expr, after, limit)
	}
	return sr.ListTurns(ctx, query.ListQuery{Expr: expr, Sort: o.order, After: after, Limit: limit})
}

// reader is the reader the turns are listed with.
func (v *Model) reader() uikit.Reader { return ordered{v.c.Deps.Reader, v.order} }

// Order is the order the turns list in.
func (v *Model) Order() query.Sort { return v.order }

// SetOrder lists the turns in s; hidden, the view lists them when shown.
func (v *Model) SetOrder(s query.Sort, stamp int) tea.Cmd {
	if _, ok := v.c.Deps.Reader.(query.SortedReader); s == v.order || !ok {
		return nil
	}
	v.order = s
	v.loaded = false
	if v.hidden {
		return nil
	}
	return v.reload(stamp)
}

// orderName says which order is in force, for the position line.
func orderName(s query.Sort) string {
	if s == query.SortTime {
		return "by event time"
	}
	return "by indexing time"
}

// orderKey is o named for the order it switches to.
func (v *Model) orderKey() key.Binding {
	b := v.c.Keys.Order
	if v.order == query.SortTime {
		b.SetHelp("o", "by indexing time")
	} else {
		b.SetHelp("o", "by event time")
	}
	return b
}

// canJump reports whether the index finds the oldest page of turns.
func (v *Model) canJump() bool {
	_, ok := v.c.Deps.Reader.(query.SortedReader)
	return ok
}

// jumpMsg is the oldest page of turns G went to.
type jumpMsg struct {
	seq  uint64
	cur  query.Cursor // what the page was listed from ("": the head)
	page query.TurnPage
	err  error
}

// jumpOldest shows the oldest turns of the listing, under the filter, the
// oldest selected (G, end).
func (v *Model) jumpOldest() tea.Cmd {
	sr, _ := v.c.Deps.Reader.(query.SortedReader)
	v.stop()
	v.seq++
	v.loading, v.loadingOlder, v.loadingNewer = true, false, false
	ctx, r, expr, seq, order, n := v.loadCtx(), v.reader(), v.expr, v.seq, v.order, v.c.Opts.PageSize
	return func() tea.Msg {
		msg := jumpMsg{seq: seq}
		msg.cur, msg.err = sr.OldestTurns(ctx, query.ListQuery{Expr: expr, Sort: order, Limit: n})
		if msg.err == nil {
			msg.page, msg.err = r.Turns(ctx, expr, msg.cur, n)
		}
		return msg
	}
}

// onJump shows the page G landed on, its oldest turn selected.
func (v *Model) onJump(msg jumpMsg) tea.Cmd {
	if msg.seq != v.seq {
		return nil
	}
	v.loading = false
	if msg.err != nil {
		return uikit.StatusCmd("going to the oldest turn: "+uikit.ErrorText(msg.err), true)
	}
	v.loaded, v.toNewest = true, false
	v.note = msg.page.Note
	v.buf.ResetFrom(msg.cur, msg.page.Turns, msg.page.Next)
	v.jumped = msg.cur != ""
	v.cur.Reset()
	if n := v.buf.Len(); n > 0 {
		v.cur.Select(n - 1)
	}
	v.cur.Scroll(v.buf.Len())
	return nil
}
