package pipeline

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Update records what the pipelines report and handles the list keys;
// Enter opens the event of an ingested run.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	km := v.c.Keys
	switch msg := msg.(type) {
	case uikit.PipeMsg:
		v.add(msg)
	case tea.MouseWheelMsg:
		v.move(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp])
	case tea.KeyPressMsg:
		if delta, ok := list.Step(msg, km, v.listH(), len(v.order)); ok {
			v.move(delta)
			return nil
		}
		if key.Matches(msg, km.Enter) {
			if r := v.selected(); r != nil && r.trace != nil && r.eventID != "" {
				id := r.eventID
				return loadDoc(v.c.Ctx, v.c.Deps.Reader, id)
			}
		}
	}
	return nil
}

func (v *Model) move(d int) { v.cur.Move(d, len(v.order)) }

// loadDoc looks the event up in the index, to open it in the detail.
func loadDoc(ctx context.Context, r uikit.Reader, id string) tea.Cmd {
	return func() tea.Msg {
		d, err := r.Document(ctx, id)
		if err != nil {
			return uikit.StatusMsg{Text: "event " + uikit.Clean(id) + ": " + uikit.ErrorText(err), Err: true}
		}
		return uikit.OpenDetailMsg{Doc: d}
	}
}
