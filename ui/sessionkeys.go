package ui

import (
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// openSession is g L: the session of the focused view's event (the
// stream's row, a chain's step, a neighbour, a recall result, the
// compared event), its turns on a time axis, that event's turn selected;
// Esc comes back here.
func (m *Model) openSession() tea.Cmd {
	d := m.current()
	if d == nil {
		return nil
	}
	if d.SessionID == "" {
		return uikit.StatusCmd("this event has no session", false)
	}
	if m.focus != viewSession {
		m.sesFrom, m.sesBack = m.focus, m.back
	}
	cmd := m.session.Open(d.SessionID, d.EventID)
	return tea.Batch(m.setFocus(viewSession), cmd)
}

// leaveSession is Esc in the timeline: back to the view g L was pressed
// in, as it was.
func (m *Model) leaveSession() tea.Cmd {
	from := m.sesFrom
	if from == viewSession {
		from = viewStream
	}
	cmd := m.setFocus(from)
	m.back = m.sesBack
	return cmd
}
