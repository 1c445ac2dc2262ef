package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func (v *detailView) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	yes, no := true, false
	each := func(fn func(*jsonView)) {
		for _, p := range v.panes() {
			fn(p)
		}
	}
	switch {
	case v.doc == nil:
		return nil
	case is(msg, km.Up):
		each(func(p *jsonView) { p.move(-1) })
	case is(msg, km.Down):
		each(func(p *jsonView) { p.move(1) })
	case is(msg, km.PageUp):
		each(func(p *jsonView) { p.move(-p.h) })
	case is(msg, km.PageDown):
		each(func(p *jsonView) { p.move(p.h) })
	case is(msg, km.Home):
		each((*jsonView).home)
	case is(msg, km.End):
		each((*jsonView).end)
	case is(msg, km.Fold):
		each(func(p *jsonView) { p.setFold(nil) })
	case is(msg, km.Expand):
		each(func(p *jsonView) { p.setFold(&no) })
	case is(msg, km.Collapse):
		each(func(p *jsonView) { p.setFold(&yes) })
	case is(msg, km.ExpandAll):
		each(func(p *jsonView) { p.foldAll(false) })
	case is(msg, km.CollapseAll):
		each(func(p *jsonView) { p.foldAll(true) })
	case is(msg, km.Search):
		v.searching = true
		v.input.SetValue("")
		v.input.Focus()
	case is(msg, km.NextMatch):
		each(func(p *jsonView) { p.nextMatch(1) })
	case is(msg, km.PrevMatch):
		each(func(p *jsonView) { p.nextMatch(-1) })
	case is(msg, km.SideBySide):
		v.side = !v.side
	case is(msg, km.Retry):
		return v.open(v.doc, v.nav)
	case is(msg, km.NextEvent), is(msg, km.PrevEvent):
		return v.stepEvent(is(msg, km.NextEvent))
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
	d, more := v.nav.step(v.doc.EventID, delta)
	switch {
	case d == nil && more != nil:
		return tea.Batch(more, statusCmd("loading more rows…", false))
	case d == nil:
		return statusCmd("no more events that way", false)
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
			p.search("")
		}
		return nil
	}
	if v.input.Update(msg) {
		for _, p := range v.panes() {
			p.search(v.input.Value())
		}
	}
	return nil
}

// View draws the event's head lines, its JSON and the search line.
func (v *detailView) View() string {
	st := v.c.Styles
	if v.doc == nil {
		msg := "No event selected. Pick one in the stream (enter) or in a turn."
		return padLines(st.Muted.Render(" "+msg), v.w, v.h)
	}
	var body string
	if v.side {
		sep := strings.TrimSuffix(strings.Repeat(st.Border.Render("│")+"\n", v.left.h), "\n")
		body = joinH(v.left.View(), sep, v.right.View())
	} else {
		body = v.one.View()
	}
	lines := []string{v.title(), v.facts(), v.archiveLine(), body, v.searchLine()}
	return padLines(strings.Join(lines, "\n"), v.w, v.h)
}

func (v *detailView) title() string {
	st := v.c.Styles
	d := v.doc
	ph := d.Phase()
	ts := d.Timestamp
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.In(v.c.Opts.Location).Format("2006-01-02 15:04:05.000 MST")
	}
	return " " + st.Phase[ph].Render(phaseGlyph(ph)+" "+clean(d.EventType)) + "  " +
		st.Bold.Render(clean(d.EventID)) + "  " + st.Muted.Render(clean(ts))
}

func (v *detailView) facts() string {
	st := v.c.Styles
	d := v.doc
	var parts []string
	add := func(label, val string) {
		if val != "" {
			parts = append(parts, st.Muted.Render(label+" ")+clean(val))
		}
	}
	add("agent", d.AgentID)
	add("session", d.SessionID)
	add("turn", d.TurnKey())
	add("trace", d.TraceID)
	add("span", v.spanID())
	add("tool", d.Tool)
	if d.Success != nil {
		parts = append(parts, successStyle(st, d.Success).Render(successMark(d.Success)))
	}
	add("latency", fmtLatency(d.LatencyMs))
	parts = append(parts, st.Muted.Render("imp ")+st.Accent.Render(bar(d.ImportanceScore, 4))+fmt.Sprintf(" %.3g", d.ImportanceScore))
	return " " + strings.Join(parts, st.Subtle.Render(" · "))
}

func (v *detailView) archiveLine() string {
	st := v.c.Styles
	key := clean(v.doc.ObjectStorageKey)
	switch {
	case v.fetching:
		return " " + st.Accent.Render(v.c.spin.View()) + st.Muted.Render(" fetching archive "+key)
	case v.archErr != nil:
		return " " + st.Error.Render("✗ archive: "+errorText(v.archErr)) + st.Muted.Render(" · r refetch")
	case v.arch != nil:
		s := fmt.Sprintf("✓ archive %s · %s bytes", key, thousands(v.arch.Size))
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
		return " " + st.Muted.Render("search ") + clean(t) + "  " + st.Muted.Render(v.matchCount()+" · n/N")
	}
	return ""
}

func (v *detailView) matchCount() string {
	p := v.panes()[len(v.panes())-1]
	if len(p.matches) == 0 {
		return "no match"
	}
	return fmt.Sprintf("%d/%d", p.mi+1, len(p.matches))
}

// joinH puts blocks of equal height side by side.
func joinH(blocks ...string) string {
	split := make([][]string, len(blocks))
	h := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		h = max(h, len(split[i]))
	}
	out := make([]string, h)
	for r := range h {
		var b strings.Builder
		for _, s := range split {
			if r < len(s) {
				b.WriteString(s[r])
			}
		}
		out[r] = b.String()
	}
	return strings.Join(out, "\n")
}

// ShortHelp: the detail's keys that work now.
func (v *detailView) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.searching {
		return []key.Binding{bind(k("enter"), "enter", "done"), bind(k("esc"), "esc", "clear")}
	}
	if v.doc == nil {
		return nil
	}
	bs := []key.Binding{km.Fold, km.Search}
	if len(v.panes()[0].matches) > 0 {
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
		km.listKeys(),
		{km.Fold, km.Expand, km.Collapse, km.ExpandAll, km.CollapseAll},
		{km.Search, km.NextMatch, km.PrevMatch, km.SideBySide, km.Retry, km.NextEvent, km.PrevEvent},
	}
}
