package ui

import (
	"encoding/json"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/uikit"
)

// onKey handles a key press: the status clears, then global keys, the
// open overlay (help, filter, a chord) and finally the focused view.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.c.Keys
	m.status, m.statusErr = "", false
	m.stream.StopSeek() // a key ends a jump still looking (g t starts one)
	switch {
	case msg.String() == "ctrl+c":
		return m.quit()
	case m.fatal != nil:
		if key.Matches(msg, km.Quit, km.Back) {
			return m.quit()
		}
		return nil
	case m.showHelp:
		m.onHelpKey(msg)
		return nil
	case m.filter.open:
		if m.filter.update(msg) {
			return m.applyFilter()
		}
		return nil
	case m.cmdLine.open:
		if line, run := m.cmdLine.update(msg); run {
			return m.runCommand(line)
		}
		return nil
	case m.chord != "":
		return m.onChord(msg)
	case m.focus == viewRecord:
		// The form takes typed keys, Tab included (next field): only keys
		// that are not text leave it or open the help.
		switch {
		case key.Matches(msg, km.Back):
			return m.setFocus(viewStream)
		case key.Matches(msg, km.FormHelp):
			m.openHelp()
			return nil
		}
		return m.record.Update(msg)
	case m.focus == viewDetail && m.detail.Searching():
		return m.detail.Update(msg)
	case m.focus == viewRecall && m.recall.Typing() && !key.Matches(msg, km.NextView, km.PrevView):
		return m.recall.Update(msg) // the prompt takes typed keys (not tab: views); esc and enter leave it
	}
	return m.onGlobalKey(msg)
}

func (m *Model) onGlobalKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.c.Keys
	write := m.c.CanWrite()
	switch {
	case key.Matches(msg, km.Quit):
		return m.quit()
	case key.Matches(msg, km.Help):
		m.openHelp()
	case key.Matches(msg, km.Command):
		m.cmdLine.show(m.current())
	case key.Matches(msg, km.NextView):
		return m.cycle(1)
	case key.Matches(msg, km.PrevView):
		return m.cycle(-1)
	case key.Matches(msg, km.Filter) && m.filterable():
		m.filter.show()
	case key.Matches(msg, km.Back):
		return m.goBack()
	case key.Matches(msg, km.Yank) && m.current() != nil:
		m.chord = "y"
	case key.Matches(msg, km.Go) && m.canGo():
		m.chord = "g"
	case key.Matches(msg, km.Top): // no chord here: g is home at once (topKey names it)
		return m.focused().Update(tea.KeyPressMsg{Code: tea.KeyHome})
	case key.Matches(msg, km.Export, km.Duplicate, km.Record) && !write && m.focus != viewRecord:
		return m.refuse(msg)
	case key.Matches(msg, km.Export) && m.current() != nil:
		return export(m.c.Ctx, m.c.Deps.Archive, m.current(), m.c.Opts.ExportDir)
	case key.Matches(msg, km.Duplicate) && m.current() != nil:
		return m.duplicate()
	case key.Matches(msg, km.Record):
		return m.setFocus(viewRecord)
	case key.Matches(msg, km.Similar) && m.focus == viewDetail && m.detail.Doc() != nil:
		m.simBack, m.simNav = m.back, m.detail.Nav()
		cmd := m.similar.Open(m.detail.Doc())
		return tea.Batch(m.setFocus(viewSimilar), cmd)
	case key.Matches(msg, km.Mark) && m.canCompare():
		return m.markEvent()
	case key.Matches(msg, km.Compare) && m.canCompare():
		return m.openCompare()
	case key.Matches(msg, km.WhyNot) && m.current() != nil:
		return m.whyNot()
	case key.Matches(msg, km.Order) && m.ordered():
		return m.toggleOrder()
	case key.Matches(msg, km.Pause) && m.focus == viewTurns && !m.turns.ChainOpen():
		// The turns follow with the stream (followTurns): one state, one key.
		return tea.Batch(m.stream.TogglePause(), m.followTurns())
	default:
		return m.focused().Update(msg)
	}
	return nil
}

// onClick selects the tab or the list row clicked (--mouse); a click on
// the selected row opens it, as enter does.
func (m *Model) onClick(msg tea.MouseClickMsg) tea.Cmd {
	if msg.Button != tea.MouseLeft || m.fatal != nil || m.showHelp || m.filter.open {
		return nil
	}
	if msg.Y == 0 {
		if id, ok := m.tabAt(msg.X); ok && id != m.focus {
			return m.setFocus(id)
		}
		return nil
	}
	// Under the header line, the lists have their column titles.
	row := msg.Y - 2
	switch {
	case row < 0:
	case m.focus == viewStream:
		return m.stream.Click(row)
	case m.focus == viewTurns:
		return m.turns.Click(row)
	}
	return nil
}

// onPaste goes to whatever text field has the focus.
func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.filter.open:
		m.filter.update(msg)
	case m.cmdLine.open:
		m.cmdLine.update(msg)
	case m.focus == viewRecord, m.focus == viewDetail, m.focus == viewRecall:
		return m.focused().Update(msg)
	}
	return nil
}

// canJump: the jumps of g (same turn, session, trace, newest) move the
// stream's selection, so they work on the stream and on a stream row's
// detail only.
func (m *Model) canJump() bool {
	return m.focus == viewStream && m.stream.Selected() != nil ||
		m.focus == viewDetail && m.detail.Nav() == uikit.Navigator(m.stream)
}

// canGo: g is a chord wherever g L has an event to open the session of;
// outside the stream it offers g g (top) and g L only. Elsewhere a bare
// g goes to the top at once.
func (m *Model) canGo() bool {
	return m.canJump() || m.current() != nil
}

// goKeys are the second keys of g in the focused view: all of them on
// the stream, g g (the view's top) and g L elsewhere.
func (m *Model) goKeys() []key.Binding {
	km := m.c.Keys
	if m.canJump() {
		return []key.Binding{km.GoTop, km.GoTurn, km.GoSession, km.GoTrace, km.GoTimeline}
	}
	top := km.GoTop
	top.SetHelp(top.Help().Key, m.topKey().Help().Desc)
	return []key.Binding{top, km.GoTimeline}
}

// goBack is Esc outside any overlay.
func (m *Model) goBack() tea.Cmd {
	switch {
	case m.focus == viewDetail:
		return m.setFocus(m.back)
	case m.focus == viewSimilar:
		return m.leaveSimilar()
	case m.focus == viewCompare:
		return m.leaveCompare()
	case m.focus == viewSession:
		return m.leaveSession()
	case m.table[m.focus].back != nil && m.table[m.focus].back():
		return nil
	case m.focus == viewRecall && m.recall.Explained() != nil:
		return m.leaveWhy()
	case m.focus != viewStream:
		return m.setFocus(viewStream)
	case m.stream.Finding() != "":
		return m.stream.Find("")
	case m.drilled():
		return m.leaveDrill()
	case m.filter.applied != "":
		m.filter.applied = ""
		return m.applyFilter()
	}
	return nil
}

// leaveSimilar goes back to the detail of the event the list is of, as
// it was opened before S.
func (m *Model) leaveSimilar() tea.Cmd {
	of := m.similar.Of()
	cmd := m.setFocus(viewDetail)
	m.back = m.simBack
	if d := m.detail.Doc(); d == nil || d.EventID != of.EventID {
		return m.detail.Open(of, m.simNav)
	}
	return cmd
}

// applyFilter filters the stream; the turns follow once it loads.
// The Overview asks at once, beside the stream's first page, rather than
// after it: a filter the index refuses reverts both when the stream says
// so (toViews).
func (m *Model) applyFilter() tea.Cmd {
	return tea.Batch(m.stream.SetFilter(m.filter.applied), m.overview.SetFilter(m.filter.applied))
}

// onChord handles the key after y or g.
func (m *Model) onChord(msg tea.KeyPressMsg) tea.Cmd {
	chord := m.chord
	m.chord = ""
	if key.Matches(msg, m.c.Keys.Back) {
		return nil // the prefix taken back
	}
	if chord == "y" {
		return m.yank(msg)
	}
	km := m.c.Keys
	if key.Matches(msg, km.GoTimeline) {
		return m.openSession()
	}
	if !m.canJump() { // g g and g L only: the rest step through the stream
		if key.Matches(msg, km.GoTop) {
			return m.focused().Update(tea.KeyPressMsg{Code: tea.KeyHome})
		}
		return notAKey("g", msg)
	}
	if key.Matches(msg, km.GoTop) {
		return m.afterJump(m.stream.GoTop())
	}
	keys := map[string]func(*model.IndexDoc) string{
		"t": (*model.IndexDoc).TurnKey, "T": (*model.IndexDoc).TurnKey,
		"s": func(d *model.IndexDoc) string { return d.SessionID }, "S": func(d *model.IndexDoc) string { return d.SessionID },
		"r": func(d *model.IndexDoc) string { return d.TraceID }, "R": func(d *model.IndexDoc) string { return d.TraceID },
	}
	keyOf, ok := keys[msg.String()]
	if !ok {
		return notAKey("g", msg)
	}
	dir := 1
	if msg.String() == "T" || msg.String() == "S" || msg.String() == "R" {
		dir = -1
	}
	from := m.stream.Selected()
	if m.focus == viewDetail {
		from = m.detail.Doc() // the tail may have moved the stream's selection
	}
	found, cmd := m.stream.Jump(from, keyOf, dir)
	if !found {
		return uikit.StatusCmd("no other row shares it that way", false)
	}
	return m.afterJump(cmd)
}

// afterJump keeps the detail on the stream's selection.
func (m *Model) afterJump(cmd tea.Cmd) tea.Cmd {
	if m.focus == viewDetail {
		if d := m.stream.Selected(); d != nil && d != m.detail.Doc() {
			return tea.Batch(cmd, m.detail.Open(d, m.stream))
		}
	}
	return cmd
}

// yank copies the event id, the archive key or the JSON with OSC 52.
func (m *Model) yank(msg tea.KeyPressMsg) tea.Cmd {
	km := m.c.Keys
	d := m.current()
	if d == nil { // the rows changed between y and this key
		return nil
	}
	var text, what string
	switch {
	case key.Matches(msg, km.YankID):
		text, what = d.EventID, "event id"
	case key.Matches(msg, km.YankKey):
		text, what = d.ObjectStorageKey, "archive key"
	case key.Matches(msg, km.YankJSON):
		text, what = m.eventJSON(d)
	case key.Matches(msg, km.YankTrace):
		text, what = m.traceLinkOf(d)
		if text == "" {
			return uikit.StatusCmd("this event has no context.traceId", false)
		}
	default:
		return notAKey("y", msg)
	}
	// The event named: Compare and a turn's chain show more than one.
	return tea.Batch(tea.SetClipboard(text), uikit.StatusCmd(fmt.Sprintf("copied the %s (%s, %d bytes)", what, uikit.Clean(d.EventID), len(text)), false))
}

// notAKey says that a chord's second key does nothing (the footer showed
// the ones that do).
func notAKey(chord string, msg tea.KeyPressMsg) tea.Cmd {
	return uikit.StatusCmd(chord+" "+uikit.Clean(msg.String())+": not a key here", true)
}

// eventJSON is the archived event when the detail holds all of it, else
// the index document; what says which.
func (m *Model) eventJSON(d *model.IndexDoc) (text, what string) {
	if a := m.detail.Archived(); m.detail.Doc() == d && a != nil && !a.Truncated {
		return string(a.Body), "archived event's JSON"
	}
	b, _ := json.MarshalIndent(d, "", "  ")
	return string(b), "index document's JSON"
}

// duplicate opens the record form on a copy of the current event: the
// archived one when the detail has it, else what the index holds.
func (m *Model) duplicate() tea.Cmd {
	d := m.current()
	var archived []byte
	if a := m.detail.Archived(); m.detail.Doc() == d && a != nil {
		archived = a.Body
	}
	cmds := []tea.Cmd{m.setFocus(viewRecord), uikit.StatusCmd("a copy of "+uikit.Clean(d.EventID)+"; it gets a new id when recorded", false)}
	if !m.record.Duplicate(d, archived) {
		cmds = append(cmds, fetchCopy(m.c.Ctx, m.c.Deps.Archive, d, m.c.Opts.ArchiveLimit))
	}
	return tea.Batch(cmds...)
}
