package ui

import (
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// markEvent is m: the current event becomes the left of the next
// comparison.
func (m *Model) markEvent() tea.Cmd {
	d := m.current()
	m.compare.Mark(d)
	return uikit.StatusCmd("marked "+uikit.Clean(d.EventID)+": = on another event compares the two", false)
}

// openCompare is =: the marked event and the current one side by side;
// Esc comes back here.
func (m *Model) openCompare() tea.Cmd {
	mark, d := m.compare.Marked(), m.current()
	switch {
	case mark == nil:
		return uikit.StatusCmd("nothing marked: m marks an event, then = on another compares the two", false)
	case mark.EventID == d.EventID:
		return uikit.StatusCmd("this is the marked event: = on another one compares the two", false)
	}
	if m.focus != viewCompare {
		m.cmpFrom, m.cmpBack = m.focus, m.back
	}
	cmd := m.compare.Open(mark, d)
	return tea.Batch(m.setFocus(viewCompare), cmd)
}

// leaveCompare is Esc in the comparison: back to the view = was pressed
// in, as it was.
func (m *Model) leaveCompare() tea.Cmd {
	from := m.cmpFrom
	if from == viewCompare {
		from = viewStream
	}
	cmd := m.setFocus(from)
	m.back = m.cmpBack
	return cmd
}
