package similar

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Update handles the list's keys and the answer of its load.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.req == v.req {
			v.rows, v.err, v.loading, v.note = msg.rows, msg.err, false, msg.note
			v.cur.Scroll(len(v.rows))
		}
	case tea.KeyPressMsg:
		km := v.c.Keys
		if key.Matches(msg, km.Enter) {
			if d := v.Selected(); d != nil {
				return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d, Nav: v} }
			}
		}
		if delta, ok := list.Step(msg, km, v.rowsH(), len(v.rows)); ok {
			v.cur.Move(delta, len(v.rows))
		}
	case tea.MouseWheelMsg:
		v.cur.Move(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp], len(v.rows))
	}
	return nil
}

// View draws the event the list is of, the neighbours and where the
// selection is.
func (v *Model) View() string {
	st := v.c.Styles
	if v.of == nil {
		return uikit.PadLines(st.Muted.Render(" Nothing asked yet: S in the detail lists the events nearest to the one shown."), v.w, v.h)
	}
	title := st.Title.Render(" Similar to "+uikit.Clean(v.of.EventID)) + st.Muted.Render("  "+uikit.OneLine(v.of.Summary))
	typW, sumW := 12, max(10, v.w-uikit.GutterW-6-1-12-1-14-3)
	head := st.Table.Head.Render(uikit.Fit("  score  "+uikit.Fit("type", typW)+" "+uikit.Fit("agent", 14)+" summary", v.w))
	rows := v.cur.Draw(len(v.rows), func(i int, selected bool) string {
		s := v.rows[i]
		gut := " "
		if selected {
			gut = "›"
		}
		line := fmt.Sprintf("%s %5.3f  %s %s %s", gut, s.Score, uikit.Fit(uikit.Clean(s.Doc.EventType), typW),
			uikit.Fit(uikit.Clean(s.Doc.AgentID), 14), uikit.Fit(uikit.OneLine(s.Doc.Summary), sumW))
		if selected {
			return st.Selected.Render(line)
		}
		return line
	})
	return uikit.PadLines(uikit.Fit(title, v.w)+"\n"+head+rows+"\n"+st.Muted.Render(uikit.Fit(v.position(), v.w)), v.w, v.h)
}

func (v *Model) position() string {
	switch {
	case v.loading:
		return " looking for the nearest events " + v.c.Spin.View()
	case v.err != nil:
		return " ✗ " + uikit.ErrorText(v.err)
	case len(v.rows) == 0:
		return " no other event has an embedding near this one"
	}
	pos := fmt.Sprintf(" %d of %d nearest by embedding (cosine)", v.cur.Sel()+1, len(v.rows))
	if v.note != "" {
		pos += " · " + v.note
	}
	return pos
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	if len(v.rows) == 0 {
		return []key.Binding{km.Back}
	}
	return []key.Binding{km.Move, km.Enter, km.Back}
}

// FullHelp returns every key of the list.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.RankKeys(), {km.Enter, km.Back}}
}

// compile-time check that the view is a navigator for the detail.
var _ uikit.Navigator = (*Model)(nil)
