package turns

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// chainView is one turn as its causal chain: observation → action →
// outcome, each step with its key fields.
type chainView struct {
	c             *uikit.Common
	open, loading bool
	key           string
	docs          []*model.IndexDoc
	err           error
	cur           list.Cursor // selected step; first step drawn
	w, h          int
	// searched says how the archive found the turn ("" when the index
	// holds it); cancel ends the load, stopped says Hidden ended it.
	searched string
	cancel   context.CancelFunc
	stopped  bool
}

// Each step takes this many lines: its head, summary, facts and the arrow
// to the next.
const stepH = 4

var _ uikit.Navigator = (*chainView)(nil)

func newChainView(c *uikit.Common) *chainView { return &chainView{c: c} }

func (v *chainView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.visible())
	v.cur.Scroll(len(v.docs))
}

func (v *chainView) visible() int { return max(1, (v.h-2)/stepH) }

// load opens the chain of a turn.
func (v *chainView) load(key string) tea.Cmd {
	v.stop()
	v.open, v.loading, v.key, v.stopped = true, true, key, false
	v.docs, v.err, v.searched = nil, nil, ""
	v.cur.Reset()
	ctx, cancel := context.WithCancel(v.c.Ctx)
	v.cancel = cancel
	return loadChain(ctx, v.c.Deps.Reader, key)
}

// stop ends a load in flight (the view is left).
func (v *chainView) stop() {
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
	if v.loading {
		v.loading, v.stopped = false, true
	}
}

// resume loads again the chain stop ended.
func (v *chainView) resume() tea.Cmd {
	if !v.stopped {
		return nil
	}
	return v.load(v.key)
}

func (v *chainView) onChain(msg chainMsg) tea.Cmd {
	if msg.key != v.key || !v.loading {
		return nil
	}
	v.loading = false
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
	v.docs, v.err, v.searched = msg.docs, msg.err, msg.searched
	return nil
}

// Update handles the chain's keys.
func (v *chainView) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if w, ok := msg.(tea.MouseWheelMsg); ok {
			v.move(map[bool]int{true: -1, false: 1}[w.Button == tea.MouseWheelUp])
		}
		return nil
	}
	km := v.c.Keys
	if delta, ok := list.Step(k, km, v.visible(), len(v.docs)); ok {
		v.move(delta)
		return nil
	}
	if d := v.selected(); d != nil && key.Matches(k, km.Enter) {
		return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d, Nav: v} }
	}
	return nil
}

func (v *chainView) move(d int) { v.cur.Move(d, len(v.docs)) }

// selected is the selected step, nil when there is none.
func (v *chainView) selected() *model.IndexDoc {
	if v.cur.Sel() >= len(v.docs) {
		return nil
	}
	return v.docs[v.cur.Sel()]
}

// Step moves through the chain for the detail view.
func (v *chainView) Step(from string, delta int) (*model.IndexDoc, tea.Cmd) {
	for i, d := range v.docs {
		if d.EventID == from {
			j := i + delta
			if j < 0 || j >= len(v.docs) {
				return nil, nil
			}
			v.cur.Select(j)
			v.cur.Scroll(len(v.docs))
			return v.docs[j], nil
		}
	}
	return nil, nil
}

// View draws the turn's title and its steps joined by arrows.
func (v *chainView) View() string {
	st := v.c.Styles
	title := " " + st.Title.Render("turn "+uikit.Clean(v.key))
	var body []string
	switch {
	case v.loading:
		body = []string{" " + v.c.Spin.View() + st.Muted.Render(" loading the turn…")}
	case v.err != nil: // wrapped: it may say what to do instead
		for i, l := range uikit.WrapText("✗ "+uikit.ErrorText(v.err), max(10, v.w-3)) {
			if i > 0 {
				l = "  " + l
			}
			body = append(body, " "+st.Error.Render(l))
		}
	case len(v.docs) == 0:
		body = []string{st.Muted.Render(" this turn has no events")}
	default:
		title += st.Muted.Render(fmt.Sprintf(" · %s · %s", uikit.Plural(len(v.docs), "event"), chainPhases(v.docs)))
		if v.searched != "" {
			title += st.Muted.Render(" · from the archive")
		}
		from, to := v.cur.Visible(len(v.docs))
		for i := from; i < to; i++ {
			body = append(body, v.stepLines(i)...)
		}
	}
	under := ""
	if v.searched != "" && !v.loading && v.err == nil {
		under = st.Muted.Render(uikit.Fit(" ⛁ "+uikit.Clean(v.searched), v.w))
	}
	return uikit.PadLines(title+"\n"+under+"\n"+strings.Join(body, "\n"), v.w, v.h)
}

// chainPhases summarises the chain: "observation → action → outcome".
func chainPhases(docs []*model.IndexDoc) string {
	var parts []string
	for _, d := range docs {
		p := d.Phase().String()
		if len(parts) == 0 || parts[len(parts)-1] != p {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " → ")
}

func (v *chainView) stepLines(i int) []string {
	st := v.c.Styles
	d := v.docs[i]
	ph := d.Phase()
	gut := "  "
	if i == v.cur.Sel() {
		gut = st.Accent.Render("›") + " "
	}
	ts := d.Timestamp
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.In(v.c.Opts.Location).Format("15:04:05.000")
	}
	typ := uikit.Clean(d.EventType)
	if typ == ph.String() { // "observation observation" says nothing twice
		typ = ""
	}
	head := strings.TrimRight(fmt.Sprintf("%s %-11s %s", uikit.PhaseGlyph(ph), ph, typ), " ")
	headLine := gut + st.Phase[ph].Render(head) + "  " + st.Muted.Render(uikit.Clean(ts)+"  "+uikit.Clean(d.EventID))
	if i == v.cur.Sel() {
		headLine = gut + st.Selected.Render(head) + "  " + st.Muted.Render(uikit.Clean(ts)+"  "+uikit.Clean(d.EventID))
	}
	summary := "    " + uikit.Trunc(uikit.OneLine(d.Summary), v.w-6)
	var facts []string
	if d.AgentID != "" {
		facts = append(facts, "agent "+uikit.Clean(d.AgentID))
	}
	if d.Tool != "" {
		facts = append(facts, "tool "+uikit.Clean(d.Tool))
	}
	if d.Success != nil {
		facts = append(facts, uikit.SuccessStyle(st, d.Success).Render(uikit.SuccessMark(d.Success)))
	}
	if d.LatencyMs != nil {
		facts = append(facts, uikit.FormatLatency(d.LatencyMs))
	}
	facts = append(facts, "importance "+st.Accent.Render(uikit.Bar(d.ImportanceScore, 4)))
	arrow := ""
	if i < len(v.docs)-1 {
		arrow = "    " + st.Subtle.Render("↓")
	}
	return []string{headLine, summary, "    " + st.Muted.Render(strings.Join(facts, " · ")), arrow}
}

// ShortHelp: the chain's keys.
func (v *chainView) ShortHelp() []key.Binding {
	km := v.c.Keys
	open := km.Enter
	open.SetHelp("enter", "event detail")
	if len(v.docs) == 0 {
		return []key.Binding{km.Back}
	}
	return []key.Binding{km.Move, open, km.Back}
}
