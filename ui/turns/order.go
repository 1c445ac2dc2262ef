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
