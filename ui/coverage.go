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
// lack engram's extension fields ("" for any other).
func (m *Model) coverageMark() string {
	c := m.cov
	if c == nil || !c.Partial() {
		return ""
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

// coverageHelp explains, in the full help, what works on an index written
// without engram's extensions and what does not.
func (m *Model) coverageHelp() string {
	c := m.cov
	if c == nil || !c.Partial() || m.focus == viewRecord {
		return ""
	}
	st := m.c.Styles
	text := []string{
		uikit.Thousands(c.Plain) + " of " + uikit.Thousands(c.Total) + " documents were written without engram's extension fields " +
			"(by the source system's worker): they have no tool, success, latency, tenant, trace or turn.",
		"Works: filters on type, agent, session, tag, text, time, importance, confidence, reward; the detail reads the full event from the archive.",
		"From the archive: the Turns view groups events by the turn their archived events name (context.turnId, else traceId), " +
			"and the detail of such an event shows its chain; each turn reads the session's events within " +
			query.DefaultTurnWindow.String() + " of one of them, at most " + uikit.Thousands(query.DefaultTurnMaxEvents) + ".",
		"Does not work: filters on tool, success, latency, tenant, trace and turn find none of these documents (the status line says so).",
		"To upgrade without downtime: engram reindex --into NAME --swap-alias ALIAS.",
	}
	out := "\n\n" + st.Title.Render(" This index") + "\n"
	for _, p := range text {
		for _, l := range uikit.WrapText(p, max(20, m.w-3)) {
			out += "\n " + st.Muted.Render(l)
		}
	}
	return out
}
