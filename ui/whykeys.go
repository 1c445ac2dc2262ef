package ui

import (
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// whyNot is w: the Recall view, the current event explained against the
// prompt there (its rank, its factors, what kept it out of the top K);
// Esc comes back here. The question is asked of whichever event is in
// view, so the answer is one key away wherever it comes up.
func (m *Model) whyNot() tea.Cmd {
	d := m.current()
	if m.c.Deps.Recall == nil {
		return uikit.StatusCmd("why not? needs an index that can recall", true)
	}
	if m.focus != viewRecall {
		m.whyFrom, m.whyBack = m.focus, m.back
	}
	// With no prompt the view's panel says, in a line, that it waits for
	// one.
	cmd := m.recall.Explain(d)
	return tea.Batch(m.setFocus(viewRecall), cmd)
}

// leaveWhy is Esc in the Recall view after w: the panel closes and the
// view w was pressed in comes back, as it was.
func (m *Model) leaveWhy() tea.Cmd {
	m.recall.StopExplaining()
	from := m.whyFrom
	if from == viewRecall {
		from = viewStream
	}
	cmd := m.setFocus(from)
	m.back = m.whyBack
	return cmd
}
