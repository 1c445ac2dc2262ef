package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"engram/ui/uikit"
)

// footer shows the keys that work now: the chord's second keys while one
// is pending, else the focused view's then the global ones, fitted to the
// width (see fitKeys).
func (m *Model) footer() string {
	km := m.c.Keys
	var bs []key.Binding
	keep := []key.Binding{km.Back, km.Help, km.Quit, km.FormHelp}
	switch {
	case m.showHelp:
		bs = m.helpFooter()
	case m.chord == "y":
		bs = []key.Binding{km.YankID, km.YankKey, km.YankJSON, km.YankTrace}
	case m.chord == "g":
		bs = m.goKeys()
	case m.focus == viewDetail && m.detail.Searching():
		bs = m.detail.ShortHelp() // typing: no global key works
	case m.focus == viewRecall && m.recall.Typing():
		bs = m.recall.ShortHelp()
	case m.drilled() && m.stream.Finding() == "":
		bs = append(m.viewShort(), append([]key.Binding{drillBack}, m.globalShort()...)...)
		keep = append(keep, drillBack)
	default:
		bs = append(m.viewShort(), m.globalShort()...)
	}
	return " " + fitKeys(m.help, bs, keep, m.w-1)
}

// drillBack is Esc in the stream an Overview bucket opened.
var drillBack = uikit.Binding("esc", "back to the Overview", "esc")

// fitKeys is the short help of bs in w cells. Those in keep always show;
// of the others the view's last (its least important) go first, then Tab.
func fitKeys(h help.Model, bs, keep []key.Binding, w int) string {
	h.SetWidth(0) // measured here, not cut with "…"
	shown := append([]key.Binding{}, bs...)
	for uikit.Width(h.ShortHelpView(shown)) > w {
		i := dropAt(shown, keep)
		if i < 0 {
			break
		}
		shown = append(shown[:i], shown[i+1:]...)
	}
	return h.ShortHelpView(shown)
}

// dropAt is the binding fitKeys leaves out next: the last one not kept
// and not Tab, else Tab; -1 when only kept ones are left.
func dropAt(bs, keep []key.Binding) int {
	tab := -1
	for i := len(bs) - 1; i >= 0; i-- {
		switch {
		case contains(keep, bs[i]):
		case bs[i].Help().Key == "tab":
			tab = i
		default:
			return i
		}
	}
	return tab
}

func contains(bs []key.Binding, b key.Binding) bool {
	for _, x := range bs {
		if x.Help() == b.Help() {
			return true
		}
	}
	return false
}

// globalShort is the global keys worth a place in the footer.
func (m *Model) globalShort() []key.Binding {
	km := m.c.Keys
	if m.focus == viewRecord {
		return []key.Binding{km.FormHelp}
	}
	return []key.Binding{km.NextView, km.Help, km.Quit}
}

// viewShort is the focused view's footer keys; the turns list follows
// with the stream, so it shows the stream's space.
func (m *Model) viewShort() []key.Binding {
	bs := m.focused().ShortHelp()
	if m.focus == viewTurns && !m.turns.ChainOpen() && len(bs) > 0 {
		// Before the filter (the last): pausing matters more, it changes
		// what the rows do.
		last := bs[len(bs)-1]
		bs = append(append(bs[:len(bs)-1:len(bs)-1], m.stream.PauseKey()), last)
	}
	return bs
}

// fullHelp is every key: the global ones, then the focused view's, in
// columns that wrap to the width.
func (m *Model) fullHelp() string {
	km := m.c.Keys
	global := []key.Binding{km.NextView, km.PrevView, km.Back, km.Command, km.Help, km.Quit}
	if m.filterable() {
		global = append(global[:2:2], append([]key.Binding{km.Filter}, global[2:]...)...)
	}
	acts, chords := m.actionKeys()
	groups := [][]key.Binding{global, acts}
	for _, g := range m.focused().FullHelp() {
		// A view's own esc back is the global one: named once.
		var own []key.Binding
		for _, b := range g {
			if !contains(global, b) {
				own = append(own, b)
			}
		}
		groups = append(groups, own)
	}
	if m.focus == viewRecord { // the form takes every other key as text
		groups, chords = m.record.FullHelp(), nil
	}
	st := m.c.Styles
	out := st.Title.Render(" Keys · "+m.table[m.focus].name) + "\n\n" + indent(m.helpColumns(groups, m.w-1), 1)
	if len(chords) > 0 {
		title := " after y · after g"
		if !m.canGo() {
			title = " after y"
		}
		out += "\n\n" + st.Title.Render(title) + "\n\n" + indent(m.helpColumns(chords, m.w-1), 1)
	}
	trace := ""
	if m.focus == viewTopics {
		// The columns' meaning, wrapped: the note is longer than a line.
		note := strings.Join(uikit.WrapText(m.topics.HelpNote(), max(20, m.w-2)), "\n")
		out += "\n\n" + st.Muted.Render(indent(note, 1))
	}
	if m.current() != nil { // y l works on an event only
		note := strings.Join(uikit.WrapText(traceHelp, max(20, min(78, m.w-2))), "\n") // a readable measure, never wider than the window
		trace = "\n\n" + st.Muted.Render(indent(note, 1))
	}
	return m.withCoverageHelp(out, trace)
}

// actionKeys are the global actions that work in the focused view now,
// and the second keys of the chords among them.
func (m *Model) actionKeys() (acts []key.Binding, chords [][]key.Binding) {
	km := m.c.Keys
	onEvent := m.current() != nil
	if onEvent {
		acts = append(acts, km.Yank)
		chords = append(chords, []key.Binding{km.YankID, km.YankKey, km.YankJSON, km.YankTrace})
	}
	if m.canGo() {
		acts = append(acts, km.Go)
		chords = append(chords, m.goKeys())
	} else if m.focus != viewRecord {
		acts = append(acts, m.topKey())
	}
	if onEvent && m.c.Deps.Recall != nil {
		acts = append(acts, km.WhyNot)
	}
	if m.c.CanWrite() && onEvent {
		acts = append(acts, km.Export, km.Duplicate)
	}
	if m.c.CanWrite() {
		acts = append(acts, km.Record)
	}
	return acts, chords
}

// topKey is g where it takes no second key: home at once, named for
// what home does in the view.
func (m *Model) topKey() key.Binding {
	b := m.c.Keys.Top
	switch m.focus {
	case viewOverview:
		b.SetHelp(b.Help().Key, "first bucket")
	case viewStream: // with no row to jump from
		b.SetHelp(b.Help().Key, "newest")
	}
	return b
}

// helpColumns draws each group as a column and packs the columns into
// rows of at most w cells, so a narrow window wraps them instead of
// cutting the last ones off.
func (m *Model) helpColumns(groups [][]key.Binding, w int) string {
	h := m.help
	h.ShowAll = true
	h.SetWidth(0)
	const gap = "    "
	var rows, row []string
	rowW := 0
	for _, g := range groups {
		col := h.FullHelpView([][]key.Binding{g})
		cw := lipgloss.Width(col)
		if col == "" {
			continue
		}
		if len(row) > 0 && rowW+len(gap)+cw > w {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			row, rowW = append(row, gap), rowW+len(gap)
		}
		row, rowW = append(row, col), rowW+cw
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	return strings.Join(rows, "\n\n")
}
