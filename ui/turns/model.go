// Package turns is the inspector's Turns view: one row per turn, newest
// first; Enter opens a turn as its causal chain (observation → action →
// outcome), and Enter on a step opens its event in the detail.
package turns

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Model is the Turns view.
type Model struct {
	c    *uikit.Common
	buf  *list.Window[query.TurnSummary]
	w, h int
	cur  list.Cursor
	expr string
	seq  uint64

	loaded, loading, loadingOlder, loadingNewer bool
	// stamp is the number of new documents seen when the list was loaded:
	// showing the view again reloads it if more have come since.
	stamp int

	chain *chainView

	// ctx ends the list's loads in flight when the view is hidden (a
	// listing from the archive reads many objects); hidden says it is.
	ctx    context.Context
	cancel context.CancelFunc
	hidden bool
	// note says how the turns were found, when not by the index alone.
	note string
	// order is the order they list in (order.go).
	order query.Sort
	// jumped: the rows start at the oldest page (G), not at the newest
	// turn; nothing newer is read until home goes back (order.go).
	jumped bool
	// toNewest: the reload on its way is home's, which selects the newest
	// turn rather than keeping the one selected.
	toNewest bool
}

// New lists nothing until shown.
func New(c *uikit.Common) *Model {
	return &Model{
		c:      c,
		buf:    list.NewWindow(c.Opts.BufferRows, func(t query.TurnSummary) string { return t.Key }),
		chain:  newChainView(c),
		hidden: true,
	}
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view the area it is drawn in.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.chain.SetSize(w, h)
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(v.buf.Len())
}

func (v *Model) rowsH() int { return max(1, v.h-2) }

// reload lists the turns again from the newest, ending the loads still
// running.
func (v *Model) reload(stamp int) tea.Cmd {
	v.stop()
	v.seq++
	v.loading, v.loadingOlder, v.loadingNewer = true, false, false
	v.stamp = stamp
	return loadTurns(v.loadCtx(), v.reader(), v.expr, v.seq, "", false, nil, v.c.Opts.PageSize)
}

// loadCtx is the context of the list's loads, made anew after stop.
func (v *Model) loadCtx() context.Context {
	if v.ctx == nil {
		v.ctx, v.cancel = context.WithCancel(v.c.Ctx)
	}
	return v.ctx
}

// stop ends the list's loads in flight; their answers are then dropped.
func (v *Model) stop() {
	if v.cancel != nil {
		v.cancel()
	}
	v.ctx, v.cancel = nil, nil
}

// Shown is called when the view is focused, with the number of new
// documents the tail has seen: a list older than that is reloaded, and a
// chain whose load Hidden stopped is loaded again.
func (v *Model) Shown(stamp int) tea.Cmd {
	v.hidden = false
	if v.chain.open {
		return v.chain.resume()
	}
	// After G the rows stay where they went, as the stream's do: home
	// reads the newest.
	if v.loading || v.loaded && (stamp == v.stamp || v.jumped) {
		return nil
	}
	return v.reload(stamp)
}

// Hidden is called when the view is left: what it was loading stops
// (cancelled, so a listing from the archive reads no more) and is loaded
// again when it is shown.
func (v *Model) Hidden() {
	v.hidden = true
	v.chain.stop()
	if !v.loading && !v.loadingOlder && !v.loadingNewer {
		return
	}
	v.stop()
	v.seq++
	if v.loading {
		v.loaded = false
	}
	v.loading, v.loadingOlder, v.loadingNewer = false, false, false
}

// SetFilter lists the turns under expr (the stream has shown that it
// works); the expression already applied changes nothing. Hidden, the
// view lists them when shown.
func (v *Model) SetFilter(expr string, stamp int) tea.Cmd {
	if expr == v.expr {
		return nil
	}
	v.expr = expr
	v.loaded = false
	if v.hidden {
		return nil
	}
	return v.reload(stamp)
}

func (v *Model) selected() *query.TurnSummary {
	if v.cur.Sel() >= v.buf.Len() {
		return nil
	}
	t := v.buf.Row(v.cur.Sel())
	return &t
}

// SelectedKey is the key of the selected turn of the list, "" when the
// chain is open or there is none (the turn m marks to compare).
func (v *Model) SelectedKey() string {
	if t := v.selected(); t != nil && !v.chain.open {
		return t.Key
	}
	return ""
}

// Busy reports whether turns or a chain are loading.
func (v *Model) Busy() bool { return v.loading || v.chain.loading }

// LoadingOlder reports whether the page below the last row is on its way.
func (v *Model) LoadingOlder() bool { return v.loadingOlder }

// Rows is the window of turns held.
func (v *Model) Rows() *list.Window[query.TurnSummary] { return v.buf }

// Chain is the steps of the turn open as a chain; open is false on the
// list.
func (v *Model) Chain() (steps []*model.IndexDoc, open bool) { return v.chain.docs, v.chain.open }

// Current is the event the view is on: the chain's selected step.
func (v *Model) Current() *model.IndexDoc {
	if !v.chain.open {
		return nil
	}
	return v.chain.selected()
}

// Note says how the turns shown were found ("" by the index).
func (v *Model) Note() string { return v.note }

// Position is the first row drawn and the selected row.
func (v *Model) Position() (top, sel int) { return v.cur.Top(), v.cur.Sel() }

// OpenChain shows the causal chain of the turn with key (:turn).
func (v *Model) OpenChain(key string) tea.Cmd { return v.chain.load(key) }

// ChainOpen reports whether a turn's chain is shown, not the list.
func (v *Model) ChainOpen() bool { return v.chain.open }

// Back leaves the chain for the list; false when already on the list.
func (v *Model) Back() bool {
	if v.chain.open {
		v.chain.open = false
		return true
	}
	return false
}
