package ui

import (
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// canCompare: m and = work here: on an event, or on a turn of the Turns
// list.
func (m *Model) canCompare() bool { return m.current() != nil || m.listedTurn() != "" }

// listedTurn is the turn selected in the Turns list (its chain closed).
func (m *Model) listedTurn() string {
	if m.focus != viewTurns {
		return ""
	}
	return m.turns.SelectedKey()
}

// markEvent is m: the current event, or the selected turn of the Turns
// list, becomes the left of the next comparison.
func (m *Model) markEvent() tea.Cmd {
	if key := m.listedTurn(); key != "" {
		m.compare.MarkTurn(key)
		return uikit.StatusCmd("marked turn "+uikit.Clean(key)+": = on another turn compares the two", false)
	}
	d := m.current()
	m.compare.Mark(d)
	return uikit.StatusCmd("marked "+uikit.Clean(d.EventID)+": = on another event compares the two", false)
}

// openCompare is =: the marked event and the current one side by side
// (or, in the Turns list, the marked turn and the selected one); Esc
// comes back here.
func (m *Model) openCompare() tea.Cmd {
	var open func() tea.Cmd
	if key := m.listedTurn(); key != "" {
		mark := m.compare.MarkedTurn()
		switch mark {
		case "":
			return uikit.StatusCmd("no turn marked: m marks a turn, then = on another compares the two", false)
		case key:
			return uikit.StatusCmd("this is the marked turn: = on another one compares the two", false)
		}
		open = func() tea.Cmd { return m.compare.OpenTurns(mark, key) }
	} else {
		mark, d := m.compare.Marked(), m.current()
		switch {
		case mark == nil:
			return uikit.StatusCmd("nothing marked: m marks an event, then = on another compares the two", false)
		case mark.EventID == d.EventID:
			return uikit.StatusCmd("this is the marked event: = on another one compares the two", false)
		}
		open = func() tea.Cmd { return m.compare.Open(mark, d) }
	}
	if m.focus != viewCompare {
		m.cmpFrom, m.cmpBack = m.focus, m.back
	}
	cmd := open()
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
