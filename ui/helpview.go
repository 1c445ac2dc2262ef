package ui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// newHelpView is the scroller of the ? help: a help taller than the body
// (many views at 24 rows) scrolls instead of losing its last keys.
func newHelpView() viewport.Model {
	v := viewport.New()
	v.KeyMap = viewport.KeyMap{
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "space", "f")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b")),
		HalfPageDown: key.NewBinding(key.WithKeys("ctrl+d")),
		HalfPageUp:   key.NewBinding(key.WithKeys("ctrl+u")),
		Up:           key.NewBinding(key.WithKeys("up", "k")),
		Down:         key.NewBinding(key.WithKeys("down", "j")),
	}
	v.MouseWheelEnabled = true
	return v
}

// openHelp shows the focused view's keys from their top.
func (m *Model) openHelp() {
	m.showHelp = true
	m.helpView.SetContent(m.fullHelp())
	m.helpView.GotoTop()
}

// helpScrolls: the help is taller than the body, so keys move it.
func (m *Model) helpScrolls() bool {
	return m.helpView.TotalLineCount() > m.helpView.Height()
}

// onHelpKey scrolls the open help; any key that does not scroll closes it.
func (m *Model) onHelpKey(msg tea.KeyPressMsg) {
	if !m.helpScrolls() {
		m.showHelp = false
		return
	}
	km := m.helpView.KeyMap
	switch {
	case msg.String() == "home" || msg.String() == "g":
		m.helpView.GotoTop()
	case msg.String() == "end" || msg.String() == "G":
		m.helpView.GotoBottom()
	case key.Matches(msg, km.PageDown, km.PageUp, km.HalfPageDown, km.HalfPageUp, km.Up, km.Down):
		m.helpView, _ = m.helpView.Update(msg)
	default:
		m.showHelp = false
	}
}

// helpFooter is the footer while the help is open.
func (m *Model) helpFooter() []key.Binding {
	if !m.helpScrolls() {
		return []key.Binding{uikit.Binding("any key", "close help", "any")}
	}
	return []key.Binding{
		uikit.Binding("↑↓ pgup pgdn home end", "scroll", "up"),
		uikit.Binding("any other key", "close help", "any"),
	}
}
