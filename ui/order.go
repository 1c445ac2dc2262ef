package ui

import tea "charm.land/bubbletea/v2"

// ordered reports whether o (the order) works here: on the stream and on
// the list of turns.
func (m *Model) ordered() bool {
	return m.focus == viewStream || m.focus == viewTurns && !m.turns.ChainOpen()
}

// toggleOrder switches the stream between indexing and event time order,
// and the turns with it.
func (m *Model) toggleOrder() tea.Cmd {
	cmd := m.stream.ToggleOrder()
	return tea.Batch(cmd, m.turns.SetOrder(m.stream.Order(), m.stream.Seen()))
}
