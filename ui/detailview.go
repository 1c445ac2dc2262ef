package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
	"engram/ui/widget/list"
)

func (v *detailView) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	yes, no := true, false
	each := func(fn func(*jsontree.Model)) {
		for _, p := range v.panes() {
			fn(p)
		}
	}
	switch {
	case v.doc == nil:
		return nil
	case isListKey(msg, km):
		each(func(p *jsontree.Model) {
			delta, _ := list.Step(msg, km, p.Height(), p.Len())
			p.Move(delta)
		})
	case key.Matches(msg, km.Fold):
		each(func(p *jsontree.Model) { p.SetFold(nil) })
	case key.Matches(msg, km.Expand):
		each(func(p *jsontree.Model) { p.SetFold(&no) })
	case key.Matches(msg, km.Collapse):
		each(func(p *jsontree.Model) { p.SetFold(&yes) })
	case key.Matches(msg, km.ExpandAll):
		each(func(p *jsontree.Model) { p.FoldAll(false) })
	case key.Matches(msg, km.CollapseAll):
		each(func(p *jsontree.Model) { p.FoldAll(true) })
	case key.Matches(msg, km.Search):
		v.searching = true
		v.input.SetValue("")
		v.input.Focus()
	case key.Matches(msg, km.NextMatch):
		each(func(p *jsontree.Model) { p.NextMatch(1) })
	case key.Matches(msg, km.PrevMatch):
		each(func(p *jsontree.Model) { p.NextMatch(-1) })
	case key.Matches(msg, km.SideBySide):
		v.side = !v.side
	case key.Matches(msg, km.Retry):
		return v.open(v.doc, v.nav)
	case key.Matches(msg, km.NextEvent), key.Matches(msg, km.PrevEvent):
		return v.stepEvent(key.Matches(msg, km.NextEvent))
	}
	return nil
}

// stepEvent opens the next or previous event of the list the detail was
// opened from; the fetch of this one is cancelled.
func (v *detailView) stepEvent(next bool) tea.Cmd {
	if v.nav == nil {
		return nil
	}
	delta := -1
	if next {
		delta = 1
	}
	d, more := v.nav.Step(v.doc.EventID, delta)
	switch {
	case d == nil && more != nil:
		return tea.Batch(more, uikit.StatusCmd("loading more rows…", false))
	case d == nil:
		return uikit.StatusCmd("no more events that way", false)
	}
	return tea.Batch(v.open(d, v.nav), more)
}

// onSearchKey edits the search; every change searches again.
func (v *detailView) onSearchKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		v.searching = false
		v.input.Blur()
		return nil
	case "esc":
		v.searching = false
		v.input.Blur()
		v.input.SetValue("")
		for _, p := range v.panes() {
			p.Search("")
		}
		return nil
	}
	if v.input.Update(msg) {
		for _, p := range v.panes() {
			p.Search(v.input.Value())
		}
	}
	return nil
}

// View draws the event's head lines, its JSON and the search line.
func (v *detailView) View() string {
	st := v.c.Styles
	if v.doc == nil {
		msg := "No event selected. Pick one in the stream (enter) or in a turn."
		return uikit.PadLines(st.Muted.Render(" "+msg), v.w, v.h)
	}
	var body string
	if v.side {
		sep := strings.TrimSuffix(strings.Repeat(st.Border.Render("│")+"\n", v.left.Height()), "\n")
		body = uikit.JoinH(v.left.View(), sep, v.right.View())
	} else {
		body = v.one.View()
	}
	lines := []string{v.title(), v.facts(), v.archiveLine(), body, v.searchLine()}
	return uikit.PadLines(strings.Join(lines, "\n"), v.w, v.h)
}

func (v *detailView) title() string {
	st := v.c.Styles
	d := v.doc
	ph := d.Phase()
	ts := d.Timestamp
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.In(v.c.Opts.Location).Format("2006-01-02 15:04:05.000 MST")
	}
	return " " + st.Phase[ph].Render(uikit.PhaseGlyph(ph)+" "+uikit.Clean(d.EventType)) + "  " +
		st.Bold.Render(uikit.Clean(d.EventID)) + "  " + st.Muted.Render(uikit.Clean(ts))
}

func (v *detailView) facts() string {
	st := v.c.Styles
	d := v.doc
	var parts []string
	add := func(label, val string) {
		if val != "" {
			parts = append(parts, st.Muted.Render(label+" ")+uikit.Clean(val))
		}
	}
	add("agent", d.AgentID)
	add("session", d.SessionID)
	add("turn", d.TurnKey())
	add("tool", d.Tool)
	if d.Success != nil {
		parts = append(parts, uikit.SuccessStyle(st, d.Success).Render(uikit.SuccessMark(d.Success)))
	}
	add("latency", uikit.FormatLatency(d.LatencyMs))
	parts = append(parts, st.Muted.Render("imp ")+st.Accent.Render(uikit.Bar(d.ImportanceScore, 4))+fmt.Sprintf(" %.3g", d.ImportanceScore))
	return " " + strings.Join(parts, st.Subtle.Render(" · "))
}

func (v *detailView) archiveLine() string {
	st := v.c.Styles
	key := uikit.Clean(v.doc.ObjectStorageKey)
	switch {
	case v.fetching:
		return " " + st.Accent.Render(v.c.Spin.View()) + st.Muted.Render(" fetching archive "+key)
	case v.archErr != nil:
		return " " + st.Error.Render("✗ archive: "+uikit.ErrorText(v.archErr)) + st.Muted.Render(" · r refetch")
	case v.arch != nil:
		s := fmt.Sprintf("✓ archive %s · %s bytes", key, uikit.Thousands(v.arch.Size))
		if v.side {
			s += " · " + st.JSON.Marker.Render("+") + st.Muted.Render(" only in the archive")
		}
		return " " + st.Success.Render(s)
	}
	return " " + st.Muted.Render("archive "+key)
}

func (v *detailView) searchLine() string {
	st := v.c.Styles
	if v.searching {
		return " " + v.input.View(st, v.w-24) + "  " + st.Muted.Render(v.matchCount())
	}
	if t := v.input.Value(); t != "" {
		return " " + st.Muted.Render("search ") + uikit.Clean(t) + "  " + st.Muted.Render(v.matchCount()+" · n/N")
	}
	return ""
}

func (v *detailView) matchCount() string {
	p := v.panes()[len(v.panes())-1]
	i, n := p.Match()
	if n == 0 {
		return "no match"
	}
	return fmt.Sprintf("%d/%d", i+1, n)
}

// ShortHelp: the detail's keys that work now.
func (v *detailView) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.searching {
		return []key.Binding{uikit.Binding("enter", "done", "enter"), uikit.Binding("esc", "clear", "esc")}
	}
	if v.doc == nil {
		return nil
	}
	bs := []key.Binding{km.Fold, km.Search}
	if _, n := v.panes()[0].Match(); n > 0 {
		bs = append(bs, km.NextMatch)
	}
	bs = append(bs, km.SideBySide)
	if v.archErr != nil {
		bs = append(bs, km.Retry)
	}
	if v.nav != nil {
		bs = append(bs, km.NextEvent)
	}
	return append(bs, km.Back)
}

// FullHelp: every key of the detail.
func (v *detailView) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{
		km.ListKeys(),
		{km.Fold, km.Expand, km.Collapse, km.ExpandAll, km.CollapseAll},
		{km.Search, km.NextMatch, km.PrevMatch, km.SideBySide, km.Retry, km.NextEvent, km.PrevEvent},
	}
}

// isListKey: msg moves through a list (the JSON lines).
func isListKey(msg tea.KeyPressMsg, km *uikit.KeyMap) bool {
	_, ok := list.Step(msg, km, 0, 0)
	return ok
}
