package compare

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Update scrolls the comparison and takes the answer of its load.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.req == v.req {
			v.diff, v.loading, v.lines = msg.diff, false, nil
		}
	case turnsLoadedMsg:
		v.onTurnsLoaded(msg)
	case tea.KeyPressMsg:
		v.onKey(msg)
	case tea.MouseWheelMsg:
		v.scroll(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp])
	}
	return nil
}

func (v *Model) onKey(msg tea.KeyPressMsg) {
	km := v.c.Keys
	page := max(1, v.bodyH()-1)
	switch {
	case key.Matches(msg, km.Up):
		v.scroll(-1)
	case key.Matches(msg, km.Down):
		v.scroll(1)
	case key.Matches(msg, km.PageUp):
		v.scroll(-page)
	case key.Matches(msg, km.PageDown):
		v.scroll(page)
	case key.Matches(msg, km.HalfUp):
		v.scroll(-page / 2)
	case key.Matches(msg, km.HalfDown):
		v.scroll(page / 2)
	case key.Matches(msg, km.Home):
		v.top = 0
	case key.Matches(msg, km.End):
		v.top = v.maxTop()
	}
}

func (v *Model) scroll(n int) { v.top = min(max(v.top+n, 0), v.maxTop()) }

func (v *Model) maxTop() int {
	if v.diff == nil && v.tdiff == nil {
		return 0
	}
	return max(0, len(v.body())-v.bodyH())
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.diff == nil && v.tdiff == nil {
		return []key.Binding{km.Back}
	}
	return []key.Binding{km.Move, km.PageDown, km.Mark, km.Compare, km.Back}
}

// FullHelp returns every key of the view.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.RankKeys(), {km.Mark, km.Compare, km.Back}}
}
