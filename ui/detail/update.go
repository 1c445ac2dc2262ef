package detail

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
	"engram/ui/widget/list"
)

// Update handles the detail's keys.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if v.searching {
			return v.onSearchKey(msg)
		}
		return v.onKey(msg)
	case tea.PasteMsg:
		if v.searching && v.input.Update(msg) {
			v.searchAll()
		}
	case tea.MouseWheelMsg:
		d := 3
		if msg.Button == tea.MouseWheelUp {
			d = -3
		}
		for _, p := range v.panes() {
			p.Move(d)
		}
	case archiveMsg:
		v.onArchive(msg)
	case turnMsg:
		v.onTurn(msg)
		v.layout() // the chain line may take another height
	case linksMsg:
		v.onLinks(msg)
		v.layout()
	case followMsg:
		return v.onFollow(msg)
	}
	return nil
}

// archiveMsg answers one archive fetch.
type archiveMsg struct {
	req  uint64
	id   string
	arch *query.Archived
	tree *jsontree.Node // the archived event parsed, when it parses
	err  error
}

// fetchArchive reads and parses the archived event of doc; cancel (or the
// timeout) ends it when the detail view moves on.
func fetchArchive(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, limit int64, req uint64) tea.Cmd {
	return func() tea.Msg {
		a, err := query.FetchArchive(ctx, ar, doc, limit)
		msg := archiveMsg{req: req, id: doc.EventID, arch: a, err: err}
		if a != nil && !a.Truncated {
			tree, perr := jsontree.Parse(a.Body, "archive")
			if perr == nil {
				jsontree.MarkUnheld(tree, "archive", indexHolds)
				msg.tree = tree
			} else if err == nil {
				msg.err = fmt.Errorf("archived object is not valid JSON: %w", perr)
			}
		}
		return msg
	}
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	yes, no := true, false
	each := func(fn func(*jsontree.Model)) {
		for _, p := range v.panes() {
			fn(p)
		}
	}
	switch {
	case v.doc == nil:
		return nil
	case isListKey(msg, km):
		each(func(p *jsontree.Model) {
			delta, _ := list.Step(msg, km, p.Height(), p.Len())
			p.Move(delta)
		})
	case key.Matches(msg, km.Fold):
		each(func(p *jsontree.Model) { p.SetFold(nil) })
	case key.Matches(msg, km.Expand):
		each(func(p *jsontree.Model) { p.SetFold(&no) })
	case key.Matches(msg, km.Collapse):
		each(func(p *jsontree.Model) { p.SetFold(&yes) })
	case key.Matches(msg, km.ExpandAll):
		each(func(p *jsontree.Model) { p.FoldAll(false) })
	case key.Matches(msg, km.CollapseAll):
		each(func(p *jsontree.Model) { p.FoldAll(true) })
	case key.Matches(msg, km.Search):
		v.searching = true
		v.input.SetValue("")
		v.input.Focus()
	case key.Matches(msg, km.NextMatch):
		each(func(p *jsontree.Model) { p.NextMatch(1) })
	case key.Matches(msg, km.PrevMatch):
		each(func(p *jsontree.Model) { p.NextMatch(-1) })
	case key.Matches(msg, km.SideBySide):
		v.side = !v.side
	case key.Matches(msg, km.Retry):
		return v.Open(v.doc, v.nav)
	case key.Matches(msg, km.NextEvent), key.Matches(msg, km.PrevEvent):
		return v.stepEvent(key.Matches(msg, km.NextEvent))
	default:
		if cmd, ok := v.followKey(msg.String()); ok {
			return cmd
		}
	}
	return nil
}

// stepEvent opens the next or previous event of the list the detail was
// opened from; the fetch of this one is cancelled.
func (v *Model) stepEvent(next bool) tea.Cmd {
	if v.nav == nil {
		return nil
	}
	delta := -1
	if next {
		delta = 1
	}
	d, more := v.nav.Step(v.doc.EventID, delta)
	switch {
	case d == nil && more != nil:
		return tea.Batch(more, uikit.StatusCmd("loading more rows…", false))
	case d == nil:
		return uikit.StatusCmd("no more events that way", false)
	}
	return tea.Batch(v.Open(d, v.nav), more)
}

// onSearchKey edits the search; every change searches again.
func (v *Model) onSearchKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		v.searching = false
		v.input.Blur()
		return nil
	case "esc":
		v.searching = false
		v.input.Blur()
		v.input.SetValue("")
		for _, p := range v.allPanes() {
			p.Search("")
		}
		return nil
	}
	if v.input.Update(msg) {
		v.searchAll()
	}
	return nil
}

// searchAll searches every pane for what is typed.
func (v *Model) searchAll() {
	for _, p := range v.allPanes() {
		p.Search(v.input.Value())
	}
}

// isListKey: msg moves through a list (the JSON lines).
func isListKey(msg tea.KeyPressMsg, km *uikit.KeyMap) bool {
	_, ok := list.Step(msg, km, 0, 0)
	return ok
}
