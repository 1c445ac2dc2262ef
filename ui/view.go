package ui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// View draws the frame: header, the focused view (or an overlay), the
// status line and the footer of keys that work now.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	if m.c.Opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "engram"
	return v
}

func (m *Model) render() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	if m.fatal != nil {
		return m.fatalView()
	}
	bottom := append(m.statusLines(), m.footer())
	if m.filter.open {
		bottom = m.filter.view(m.w)
	}
	if m.cmdLine.open {
		bottom = m.cmdLine.view(m.c.Styles, m.w)
	}
	for i, l := range bottom {
		bottom[i] = uikit.Fit(l, m.w)
	}
	// A status or an error longer than the width wraps onto lines taken
	// from the bottom of the body, rather than being cut.
	body := uikit.PadLines(m.body(), m.w, max(1, m.h-1-len(bottom)))
	return strings.Join(append([]string{m.header(), body}, bottom...), "\n")
}

func (m *Model) body() string {
	switch {
	case m.showHelp:
		return m.helpView.View()
	case m.empty() && (m.focus == viewStream || m.focus == viewTurns):
		return m.emptyView()
	}
	return m.focused().View()
}

// empty: the index holds nothing at all (a filter matching nothing is not
// empty: it says so in the position line).
func (m *Model) empty() bool {
	return m.stream.Empty() && (!m.countKnown || m.count == 0)
}

// header is the tabs on the left; backend, profile, count, read-only and
// follow state on the right. Narrow windows drop the backend first, then
// the count, then the title, then shorten and drop the mark of a
// source-written index: never read-only nor the follow state, which say
// what the keys and the rows do. Read-only matters more: beside it the
// follow state shrinks to its glyph before a tab is cut.
func (m *Model) header() string {
	st := m.c.Styles
	tabs := ""
	for _, id := range m.views() {
		tabs += m.tab(id)
	}
	title := st.Title.Render(" engram ")
	cands := m.rightCandidates()
	render := func(parts []string) string { return st.Muted.Render(strings.Join(parts, " · ") + " ") }
	fits := func(left string, parts []string) bool { return uikit.Width(left)+1+uikit.Width(render(parts)) <= m.w }
	left, right := title+tabs, render(cands[len(cands)-1])
	m.titleShown = true
	for i, c := range cands {
		if fits(title+tabs, c) {
			right = render(c)
			break
		}
		if i >= 2 && fits(tabs, c) { // the count is gone: the title goes before the mark
			left, right, m.titleShown = tabs, render(c), false
			break
		}
	}
	if m.titleShown && uikit.Width(left)+1+uikit.Width(right) > m.w {
		left, m.titleShown = tabs, false // the title goes before a tab is cut
	}
	m.tabsSkipped = 0
	gap := m.w - uikit.Width(left) - uikit.Width(right)
	if gap < 1 { // the tabs give way: cut from the right, or from the left when the focused tab would go
		room := max(0, m.w-uikit.Width(right)-1)
		left = uikit.Fit(m.tabsShowingFocus(room), room) // the title is gone already
		gap = m.w - uikit.Width(left) - uikit.Width(right)
	}
	return left + strings.Repeat(" ", gap) + right
}

// tabsShowingFocus is the tabs for room cells, the first ones given way
// to "…" when the focused tab would otherwise be cut: which view is shown
// matters more than the names of the first ones.
func (m *Model) tabsShowingFocus(room int) string {
	ids := m.views()
	end := 0 // the focused tab's right edge
	for _, id := range ids {
		end += uikit.Width(m.tab(id))
		if id == m.focus {
			break
		}
	}
	more := m.c.Styles.Muted.Render("…")
	skip := 0
	for skip < len(ids) && ids[skip] != m.focus && end > room {
		if skip == 0 {
			end += uikit.Width(more)
		}
		end -= uikit.Width(m.tab(ids[skip]))
		skip++
	}
	m.tabsSkipped = skip
	tabs := ""
	if skip > 0 {
		tabs = more
	}
	for _, id := range ids[skip:] {
		tabs += m.tab(id)
	}
	return tabs
}

// rightCandidates are the header's right parts, fullest first, each
// narrower than the one before.
func (m *Model) rightCandidates() [][]string {
	where := uikit.Clean(m.c.Deps.Backend)
	if p := uikit.Clean(m.c.Deps.Profile); p != "" {
		where += " · " + p
	}
	docs := ""
	if m.countKnown {
		docs = uikit.Thousands(m.count) + " docs"
		if m.count == 1 {
			docs = "1 doc"
		}
	}
	ro := ""
	if m.c.Opts.ReadOnly || m.c.Deps.ReadOnlyWhy != "" {
		ro = "read-only"
	}
	mark, short, follow := m.coverageMark(false), m.coverageMark(true), m.follow(false)
	cands := [][]string{{where, docs, mark, ro, follow}, {docs, mark, ro, follow}, {mark, ro, follow}, {short, ro, follow}, {ro, follow}}
	if ro != "" {
		cands = append(cands, []string{ro, m.follow(true)})
	}
	for i, c := range cands {
		var kept []string
		for _, p := range c {
			if p != "" {
				kept = append(kept, p)
			}
		}
		cands[i] = kept
	}
	return cands
}

// tab is a view's name in the header.
func (m *Model) tab(id viewID) string {
	if id == m.focus {
		return m.c.Styles.TabOn.Render(m.table[id].name)
	}
	return m.c.Styles.Tab.Render(m.table[id].name)
}

// tabAt is the view whose tab is at column x of the header.
func (m *Model) tabAt(x int) (viewID, bool) {
	at := 0
	if m.titleShown {
		at = uikit.Width(m.c.Styles.Title.Render(" engram "))
	}
	ids := m.views()
	if m.tabsSkipped > 0 {
		at, ids = uikit.Width(m.c.Styles.Muted.Render("…")), ids[m.tabsSkipped:]
	}
	for _, id := range ids {
		w := uikit.Width(m.tab(id))
		if x >= at && x < at+w {
			return id, true
		}
		at += w
	}
	return 0, false
}

// follow is the stream's state: following, or paused with what came since;
// glyph is its sign alone, for a header too narrow for the words.
func (m *Model) follow(glyph bool) string {
	st := m.c.Styles
	s := m.stream
	now := m.c.Deps.Now()
	switch {
	case glyph && s.Stalled(now):
		return st.Warning.Render("⚠")
	case glyph && s.Following():
		return st.Success.Render("●")
	case glyph:
		return st.Warning.Render("‖")
	case s.Stalled(now):
		ago := now.Sub(s.LastPoll()).Round(time.Second)
		return st.Warning.Render("⚠ stalled · last poll " + ago.String() + " ago")
	case s.Following():
		return st.Success.Render("● following")
	case s.Pending() > 0:
		return st.Warning.Render("‖ paused · " + uikit.Thousands(int64(s.Pending())) + " new")
	}
	return st.Warning.Render("‖ paused")
}

// statusLines is the status, wrapped to the width on at most three lines.
func (m *Model) statusLines() []string {
	st := m.c.Styles
	style, text := st.Status.Info, m.status
	switch {
	case m.stream.Seeking():
		// Drawn from the state, not sent as a status: a message could
		// land after the seek's own last word.
		text = "looking further for a row that shares it…"
	case m.status == "" && m.filterWarning() != "":
		style, text = st.Status.Warning, m.filterWarning()
	case m.status == "":
		return []string{""}
	case m.statusErr:
		style = st.Status.Error
	}
	lines := uikit.WrapText(text, max(10, m.w-2))
	if len(lines) > maxStatusLines {
		lines = append(lines[:maxStatusLines-1], uikit.Trunc(strings.Join(lines[maxStatusLines-1:], " "), m.w-2))
	}
	for i, l := range lines {
		lines[i] = style.Render(" " + l)
	}
	return lines
}

// maxStatusLines bounds what a status takes from the body.
const maxStatusLines = 3

func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// emptyView is the first screen of an empty index: how to get events in.
func (m *Model) emptyView() string {
	st := m.c.Styles
	where := uikit.Clean(m.c.Deps.Backend)
	data := ""
	if dir := uikit.Clean(m.c.Deps.DataDir); dir != "" {
		where += " (data directory " + dir + ")"
		data = " --data " + dir // the commands below must write where this reads
	}
	lines := []string{"", st.Title.Render("  Nothing here yet."), ""}
	for _, l := range uikit.WrapText("No experience events are indexed in "+where+". To get some:", max(20, m.w-4)) {
		lines = append(lines, st.Muted.Render("  "+l))
	}
	lines = append(lines, "")
	row := func(keys, what string) string {
		if uikit.Width(keys) >= 26 { // a long directory: the text under it
			return "    " + st.Accent.Render(keys) + "\n      " + what
		}
		return "    " + st.Accent.Render(uikit.Fit(keys, 26)) + what
	}
	if m.c.CanWrite() {
		lines = append(lines, row("R", "record a test event here"))
	}
	lines = append(lines,
		row("engram ingest"+data+" FILE", "ingest JSON Lines, a JSON array or one object"),
		row("engram"+data+" --follow FILE", "ingest what a file grows by, live"),
		row("engram demo"+data, "load the demo events into this store"),
		row("engram --demo", "or try engram on a live demo data set"),
		"", st.Muted.Render("  New events show here as soon as they are indexed, whoever indexes them."))
	return strings.Join(lines, "\n")
}

// fatalView is a start-up failure: what went wrong and what to do.
func (m *Model) fatalView() string {
	st := m.c.Styles
	w := max(20, min(m.w-4, 100))
	lines := []string{"", st.Error.Render("  engram could not start"), ""}
	for _, l := range uikit.WrapText(m.fatal.Error(), w) {
		lines = append(lines, "  "+l)
	}
	if m.hint != "" {
		lines = append(lines, "", st.Title.Render("  What to do"))
		for _, l := range uikit.WrapText(m.hint, w) {
			lines = append(lines, "  "+l)
		}
	}
	lines = append(lines, "", st.Muted.Render("  q quit"))
	return uikit.PadLines(strings.Join(lines, "\n"), m.w, m.h)
}
