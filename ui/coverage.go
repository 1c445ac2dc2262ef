package ui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/query"
	"engram/ui/uikit"
)

// coverageEvery is how often the inspector asks again which extension
// fields the documents carry: a reindex or an engram worker changes the
// answer, slowly (the reader caches it for about as long).
const coverageEvery = time.Minute

// coverageMsg answers loadCoverage.
type coverageMsg struct {
	cov query.Coverage
	err error
}

// coverageTickMsg asks for the coverage again.
type coverageTickMsg struct{}

// loadCoverage asks the reader which extension fields its documents carry;
// nil when it cannot tell (the embedded index holds only engram's).
func loadCoverage(ctx context.Context, r uikit.Reader) tea.Cmd {
	fc, ok := r.(query.FieldCoverage)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		c, err := fc.Coverage(ctx)
		return coverageMsg{c, err}
	}
}

// onCoverage keeps the answer (an error keeps the last one known: a note
// in the header is not worth an error line) and asks again later.
func (m *Model) onCoverage(msg coverageMsg) tea.Cmd {
	if msg.err == nil {
		c := msg.cov
		m.cov = &c
	}
	return m.c.After(coverageEvery, coverageTickMsg{})
}

// coverageMark is the header's note on an index some of whose documents
// lack engram's extension fields ("" for any other); short is for a
// narrow header (the help says the rest).
func (m *Model) coverageMark(short bool) string {
	c := m.cov
	if c == nil || !c.Partial() {
		return ""
	}
	if short {
		return m.c.Styles.Warning.Render("⚠ src-written")
	}
	if c.Plain == c.Total {
		return m.c.Styles.Warning.Render("⚠ source-written")
	}
	return m.c.Styles.Warning.Render("⚠ " + uikit.Thousands(c.Plain) + " of " + uikit.Thousands(c.Total) + " source-written")
}

// filterWarning is what the status line says while the filter applied
// tests an extension field some documents lack ("" otherwise): without it
// tool:kubectl shows "no events" there and looks like a true negative.
func (m *Model) filterWarning() string {
	if m.cov == nil || m.filter.applied == "" || !m.filterable() {
		return ""
	}
	return strings.Join(m.cov.Warnings(query.ExtensionTerms(m.filter.applied)), " · ")
}

// withCoverageHelp ends the full help (keys, then trace) with what
// works on an index written without engram's extensions; when the window
// cannot hold both, that takes the place of the trace paragraph (such an
// index holds no trace ids anyway).
func (m *Model) withCoverageHelp(keys, trace string) string {
	cov := m.coverageHelp()
	if cov == "" {
		return keys + trace
	}
	bodyH := m.h - 3 // header, status and footer lines
	if strings.Count(keys+trace+cov, "\n")+1 <= bodyH {
		return keys + trace + cov
	}
	return keys + cov
}

// coverageHelp explains, in the full help, what works on an index written
// without engram's extensions and what does not.
func (m *Model) coverageHelp() string {
	c := m.cov
	if c == nil || !c.Partial() || m.focus == viewRecord {
		return ""
	}
	st := m.c.Styles
	// Short enough for one line each at 80 columns: the help of the
	// stream leaves five lines there.
	rows := [][2]string{
		{"works", "type agent session tag text time importance; archived events"},
		{"archive", "turns and a detail's chain: a session's events ±" + query.DefaultTurnWindow.String() +
			", ≤" + uikit.Thousands(query.DefaultTurnMaxEvents) + " read"},
		{"finds none", "tool success latency tenant trace turn · engram reindex --into"},
	}
	const labelW = 11
	out := "\n\n" + st.Title.Render(" This index") + st.Muted.Render(" · "+c.Mark())
	for _, r := range rows {
		for i, l := range uikit.WrapText(r[1], max(20, m.w-labelW-3)) {
			label := ""
			if i == 0 {
				label = r[0]
			}
			out += "\n " + st.Accent.Render(uikit.Fit(label, labelW)) + " " + st.Muted.Render(l)
		}
	}
	return out
}
