package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// turnsView is one row per turn; Enter opens the turn as its causal chain.
type turnsView struct {
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
}

func newTurnsView(c *uikit.Common) *turnsView {
	return &turnsView{
		c:     c,
		buf:   list.NewWindow(c.Opts.BufferRows, func(t query.TurnSummary) string { return t.Key }),
		chain: newChainView(c),
	}
}

// Size is the area SetSize gave.
func (v *turnsView) Size() (w, h int) { return v.w, v.h }

func (v *turnsView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.chain.SetSize(w, h)
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(v.buf.Len())
}

func (v *turnsView) rowsH() int { return max(1, v.h-2) }

// reload lists the turns again from the newest.
func (v *turnsView) reload(stamp int) tea.Cmd {
	v.seq++
	v.loading, v.loadingOlder, v.loadingNewer = true, false, false
	v.stamp = stamp
	return loadTurns(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, "", false, nil, v.c.Opts.PageSize)
}

// shown is called when the view is focused: a list older than what the
// tail has seen is reloaded.
func (v *turnsView) shown(stamp int) tea.Cmd {
	if v.chain.open || v.loading || v.loaded && stamp == v.stamp {
		return nil
	}
	return v.reload(stamp)
}

func (v *turnsView) setFilter(expr string, stamp int) tea.Cmd {
	v.expr = expr
	v.loaded = false
	return v.reload(stamp)
}

func (v *turnsView) selected() *query.TurnSummary {
	if v.cur.Sel() >= v.buf.Len() {
		return nil
	}
	t := v.buf.Row(v.cur.Sel())
	return &t
}

func (v *turnsView) busy() bool { return v.loading || v.chain.loading }

// back leaves the chain for the list; false when already on the list.
func (v *turnsView) back() bool {
	if v.chain.open {
		v.chain.open = false
		return true
	}
	return false
}

// Update handles the turns' keys and answers.
func (v *turnsView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case turnsMsg:
		return v.onTurns(msg)
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

func (v *turnsView) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Home) && !v.buf.AtHead():
		return v.reload(v.stamp)
	case key.Matches(msg, km.Enter):
		if t := v.selected(); t != nil {
			return v.chain.load(t.Key)
		}
	}
	if delta, ok := list.Step(msg, km, v.rowsH(), v.buf.Len()); ok {
		return v.move(delta)
	}
	return nil
}

func (v *turnsView) move(delta int) tea.Cmd {
	if v.buf.Len() == 0 {
		return nil
	}
	v.cur.Move(delta, v.buf.Len())
	half := v.c.Opts.PageSize / 2
	var cmds []tea.Cmd
	if v.loading { // the list is being replaced
		return nil
	}
	if !v.loadingOlder && !v.buf.End() && v.cur.Sel() >= v.buf.Len()-half {
		v.loadingOlder = true
		cmds = append(cmds, loadTurns(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, v.buf.Next(), true, nil, v.c.Opts.PageSize))
	}
	if !v.loadingNewer && !v.buf.AtHead() && v.cur.Sel() < half {
		ev := v.buf.Above()
		if ev.Head {
			return v.reload(v.stamp)
		}
		v.loadingNewer = true
		cmds = append(cmds, loadTurns(v.c.Ctx, v.c.Deps.Reader, v.expr, v.seq, "", false, &ev, 0))
	}
	return tea.Batch(cmds...)
}

func (v *turnsView) onTurns(msg turnsMsg) tea.Cmd {
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
		keep := ""
		if t := v.selected(); t != nil {
			keep = t.Key
		}
		v.loading, v.loaded = false, true
		v.buf.Reset(msg.page.Turns, msg.page.Next)
		v.cur.Reset()
		v.cur.Select(max(0, v.buf.Index(keep)))
	}
	v.cur.Scroll(v.buf.Len())
	return nil
}

// View draws the list, or the chain when one is open.
func (v *turnsView) View() string {
	if v.chain.open {
		return v.chain.View()
	}
	st := v.c.Styles
	cols := layoutTurns(v.w)
	var b strings.Builder
	b.WriteString(st.Table.Head.Render(uikit.Fit(turnsHead(cols), v.w)))
	now := v.c.Deps.Now()
	from, to := v.cur.Visible(v.buf.Len())
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		b.WriteString(v.turnRow(v.buf.Row(i), cols, i == v.cur.Sel(), now))
	}
	for i := to - from; i < v.rowsH(); i++ {
		b.WriteByte('\n')
	}
	pos := fmt.Sprintf(" turn %s of %s loaded", uikit.Thousands(int64(v.cur.Sel()+1)), uikit.Thousands(int64(v.buf.Len())))
	switch {
	case v.loading:
		pos = " loading turns " + v.c.Spin.View()
	case v.buf.Len() == 0:
		pos = " no turns"
	}
	if v.expr != "" {
		pos += " · filter: " + uikit.Clean(v.expr)
	}
	b.WriteString("\n" + st.Muted.Render(uikit.Fit(pos, v.w)))
	return b.String()
}

// ShortHelp: the keys that work now.
func (v *turnsView) ShortHelp() []key.Binding {
	if v.chain.open {
		return v.chain.ShortHelp()
	}
	km := v.c.Keys
	if v.buf.Len() == 0 {
		return []key.Binding{km.Filter}
	}
	open := km.Enter
	open.SetHelp("enter", "causal chain")
	return []key.Binding{km.Move, open, km.Filter}
}

// FullHelp: every key of the turns.
func (v *turnsView) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.ListKeys(), {km.Enter, km.Back, km.Filter}}
}

// turnCols are the widths of the turn list's columns.
type turnCols struct{ time, key, session, agent, events, dur, imp int }

func layoutTurns(w int) turnCols {
	c := turnCols{time: 8, session: 12, agent: 10, events: 6, dur: 7, imp: 4}
	if w < 72 {
		c.session = 0
	}
	used := uikit.GutterW + c.time + 1 + c.agent + 1 + c.events + 1 + 1 + 1 + c.dur + 1 + c.imp + 1
	if c.session > 0 {
		used += c.session + 1
	}
	c.key = max(8, w-used)
	return c
}

func turnsHead(c turnCols) string {
	parts := []string{" ", uikit.Fit("last", c.time), uikit.Fit("turn", c.key)}
	if c.session > 0 {
		parts = append(parts, uikit.Fit("session", c.session))
	}
	return strings.Join(append(parts, uikit.Fit("agent", c.agent), uikit.FitRight("events", c.events), "✗", uikit.FitRight("span", c.dur), uikit.Fit("imp", c.imp)), " ")
}

func (v *turnsView) turnRow(t query.TurnSummary, c turnCols, selected bool, now time.Time) string {
	st := v.c.Styles
	gut, fail := " ", " "
	if selected {
		gut = "›"
	}
	if t.AnyFailed {
		fail = "✗"
	}
	ts := ""
	if !t.Last.IsZero() {
		ts = uikit.FormatTime(t.Last.Format(time.RFC3339Nano), now, v.c.Opts.Location, c.time)
	}
	parts := []string{gut, uikit.Fit(ts, c.time), uikit.Fit(uikit.Clean(t.Key), c.key)}
	if c.session > 0 {
		parts = append(parts, uikit.Fit(uikit.Clean(t.SessionID), c.session))
	}
	parts = append(parts, uikit.Fit(uikit.Clean(t.AgentID), c.agent), uikit.FitRight(fmt.Sprint(t.Events), c.events), fail,
		uikit.FitRight(uikit.FormatMillis(float64(t.Last.Sub(t.First).Milliseconds())), c.dur), uikit.Bar(t.MaxImportance, c.imp))
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(line)
	}
	if t.AnyFailed {
		return strings.Replace(line, " ✗ ", " "+st.Error.Render("✗")+" ", 1)
	}
	return line
}
