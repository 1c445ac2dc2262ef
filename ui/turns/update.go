package turns

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Update handles the turns' keys and answers.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case turnsMsg:
		return v.onTurns(msg)
	case jumpMsg:
		return v.onJump(msg)
	case chainMsg:
		return v.chain.onChain(msg)
	}
	if v.chain.open {
		return v.chain.Update(msg)
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return v.onKey(msg)
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			return v.move(-3)
		}
		return v.move(3)
	}
	return nil
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Home) && (!v.buf.AtHead() || v.jumped):
		v.toNewest = true
		return v.reload(v.stamp)
	case key.Matches(msg, km.End) && !v.buf.End() && v.canJump():
		return v.jumpOldest() // the oldest of the listing, not of the turns loaded
	case key.Matches(msg, km.Enter):
		if t := v.selected(); t != nil {
			return v.chain.load(t.Key)
		}
		if v.loading {
			return uikit.StatusCmd("the turns are still loading: enter opens one once they are listed", false)
		}
	}
	if delta, ok := list.Step(msg, km, v.rowsH(), v.buf.Len()); ok {
		return v.move(delta)
	}
	return nil
}

// Click selects the row'th turn on screen; on the selected one it opens
// its chain. In a chain it does nothing.
func (v *Model) Click(row int) tea.Cmd {
	from, to := v.cur.Visible(v.buf.Len())
	i := from + row
	if v.chain.open || row < 0 || i >= to {
		return nil
	}
	if i == v.cur.Sel() {
		return v.onKey(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	return v.move(i - v.cur.Sel())
}

func (v *Model) move(delta int) tea.Cmd {
	if v.buf.Len() == 0 {
		return nil
	}
	if delta < 0 && v.jumped && v.buf.AtHead() && v.cur.Sel() == 0 {
		return uikit.StatusCmd("the turns start where G went: home goes back to the newest", false)
	}
	v.cur.Move(delta, v.buf.Len())
	half := v.c.Opts.PageSize / 2
	var cmds []tea.Cmd
	if v.loading { // the list is being replaced
		return nil
	}
	if !v.loadingOlder && !v.buf.End() && v.cur.Sel() >= v.buf.Len()-half {
		v.loadingOlder = true
		cmds = append(cmds, loadTurns(v.loadCtx(), v.reader(), v.expr, v.seq, v.buf.Next(), true, nil, v.c.Opts.PageSize))
	}
	if !v.loadingNewer && !v.buf.AtHead() && v.cur.Sel() < half {
		ev := v.buf.Above()
		if ev.Head {
			return v.reload(v.stamp)
		}
		v.loadingNewer = true
		cmds = append(cmds, loadTurns(v.loadCtx(), v.reader(), v.expr, v.seq, "", false, &ev, 0))
	}
	return tea.Batch(cmds...)
}

func (v *Model) onTurns(msg turnsMsg) tea.Cmd {
	if msg.seq != v.seq {
		return nil
	}
	if msg.err != nil {
		v.loading, v.loadingOlder, v.loadingNewer = false, false, false
		return uikit.StatusCmd("loading turns: "+uikit.ErrorText(msg.err), true)
	}
	switch {
	case msg.ev != nil:
		if !v.loadingNewer {
			return nil
		}
		v.loadingNewer = false
		if v.buf.AtHead() || v.buf.Above() != *msg.ev {
			return v.move(0) // the list moved meanwhile: ask again
		}
		v.buf.PrependPage(*msg.ev, msg.page.Turns)
		v.cur.Shift(len(msg.page.Turns))
	case msg.older:
		if !v.loadingOlder {
			return nil
		}
		v.loadingOlder = false
		if msg.after != v.buf.Next() {
			return v.move(0)
		}
		dropped := v.buf.AppendOlder(msg.after, msg.page.Turns, msg.page.Next)
		v.cur.Shift(-dropped)
	default:
		// On the newest row the selection stays on the newest, as the
		// stream's does while it follows; moved away, it stays on its turn
		// wherever that now lists.
		keep := ""
		if t := v.selected(); t != nil && !v.toNewest && (v.cur.Sel() > 0 || !v.buf.AtHead()) {
			keep = t.Key
		}
		v.loading, v.loaded, v.jumped, v.toNewest = false, true, false, false
		v.note = msg.page.Note
		v.buf.Reset(msg.page.Turns, msg.page.Next)
		v.cur.Reset()
		v.cur.Select(max(0, v.buf.Index(keep)))
	}
	v.cur.Scroll(v.buf.Len())
	return nil
}

// turnsMsg is a page of turns.
type turnsMsg struct {
	seq   uint64
	after query.Cursor
	older bool
	ev    *list.Evicted
	page  query.TurnPage
	err   error
}

// chainMsg is the causal chain of one turn; searched says how the archive
// found it ("" when the index holds it).
type chainMsg struct {
	key      string
	docs     []*model.IndexDoc
	err      error
	searched string
}

func loadTurns(ctx context.Context, r uikit.Reader, expr string, seq uint64, after query.Cursor, older bool, ev *list.Evicted, limit int) tea.Cmd {
	return func() tea.Msg {
		if ev != nil {
			after, limit = ev.Cur, ev.N
		}
		page, err := r.Turns(ctx, expr, after, limit)
		return turnsMsg{seq: seq, after: after, older: older, ev: ev, page: page, err: err}
	}
}

func loadChain(ctx context.Context, r uikit.Reader, key string) tea.Cmd {
	return func() tea.Msg {
		docs, err := r.Turn(ctx, key)
		msg := chainMsg{key: key, docs: docs, err: err}
		// Documents without ingested_at were written without the
		// extensions: their chain came from the archive (query.TurnReader),
		// whose cached answer says how it was searched.
		if f, ok := uikit.ArchiveTurnOf(r); ok && err == nil && len(docs) > 0 && docs[0].IngestedAt == "" {
			if t, ferr := f.FindTurn(ctx, docs[0].EventID); ferr == nil {
				msg.searched = t.Searched
			}
		}
		return msg
	}
}
