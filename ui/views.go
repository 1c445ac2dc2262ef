package ui

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"engram/model"
)

// viewID keys the view table; their order is the order of the tabs.
type viewID int

const (
	viewStream viewID = iota
	viewTurns
	viewDetail
	viewRecord
	viewPipeline
	viewOverview
	viewRecall
	viewTopics
	viewSimilar
	viewCompare
	viewSession
	numViews
)

// view is what every child view provides. Only the root builds the
// tea.View and owns the alt screen, the mouse and the window title.
type view interface {
	help.KeyMap
	Update(tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	Size() (w, h int)
	Busy() bool
}

// entry is a view as the root knows it: its tab, its model and the hooks
// the root calls on focus changes, Esc and the event-wide keys. A nil
// hook means the view has nothing to do there.
type entry struct {
	name string
	v    view
	// listed says whether Tab reaches the view now; nil is always.
	listed func() bool
	// shown runs when the view takes the focus, hidden when it leaves.
	shown  func() tea.Cmd
	hidden func()
	// current is the event the view is on, for y, e, D and the like.
	current func() *model.IndexDoc
	// back handles Esc inside the view; false lets the root go back.
	back func() bool
	// filters: the filter bar filters what the view lists.
	filters bool
}

// register builds the view table: one line a view.
func (m *Model) register() {
	c := m.c
	m.table = [numViews]entry{
		viewStream: {name: "Stream", v: m.stream, current: m.stream.Selected, filters: true},
		viewTurns: {name: "Turns", v: m.turns, current: m.turns.Current, back: m.turns.Back, filters: true,
			shown: func() tea.Cmd { return m.turns.Shown(m.stream.Seen()) }, hidden: m.turns.Hidden},
		viewOverview: {name: "Overview", v: m.overview, filters: true, shown: m.overview.Shown, hidden: m.overview.Hidden},
		viewDetail: {name: "Detail", v: m.detail, current: m.detail.Doc, hidden: m.detail.Close,
			shown: func() tea.Cmd { return m.detail.Shown(m.stream.Selected(), m.stream) }},
		viewRecord:   {name: "Record", v: m.record, listed: c.CanWrite},
		viewPipeline: {name: "Pipeline", v: m.pipeline},
		viewTopics: {name: "Topics", v: m.topics, back: m.topics.Back, shown: m.topics.Shown,
			listed: func() bool { return c.Deps.Bus != nil }},
		viewSimilar: {name: "Similar", v: m.similar, current: m.similar.Selected,
			listed: func() bool { return m.similar.Of() != nil }}, // once S has asked for one
		viewCompare: {name: "Compare", v: m.compare, current: m.compare.Current, listed: m.compare.Opened}, // once = has compared
		viewSession: {name: "Session", v: m.session, current: m.session.Current, listed: m.session.Opened}, // once g L has asked
		viewRecall: {name: "Recall", v: m.recall, current: m.recall.Selected, back: m.recall.Back, shown: m.recall.Shown,
			listed: func() bool { return c.Deps.Recall != nil }},
	}
}

// focused is the view keys go to.
func (m *Model) focused() view { return m.table[m.focus].v }

// resize gives every view, hidden ones too, the body's size: the window
// less the header line, the status line and the footer line.
func (m *Model) resize(w, h int) {
	m.w, m.h = w, h
	for _, e := range m.table {
		e.v.SetSize(w, max(1, h-3))
	}
	m.help.SetWidth(w)
	m.helpView.SetWidth(w)
	m.helpView.SetHeight(max(1, h-3))
	if m.showHelp { // the columns wrap to the new width
		m.helpView.SetContent(m.fullHelp())
	}
}

// busy: something is loading, so the spinner turns.
func (m *Model) busy() bool {
	for _, e := range m.table {
		if e.v.Busy() {
			return true
		}
	}
	return false
}

// views lists the views Tab cycles through now.
func (m *Model) views() []viewID {
	var ids []viewID
	for id, e := range m.table {
		if e.listed == nil || e.listed() {
			ids = append(ids, viewID(id))
		}
	}
	return ids
}

// setFocus shows another view, telling the ones that care.
func (m *Model) setFocus(id viewID) tea.Cmd {
	if from := m.table[m.focus]; m.focus != id && from.hidden != nil {
		from.hidden()
	}
	if id != viewDetail {
		m.back = id
	}
	m.focus = id
	if to := m.table[id]; to.shown != nil {
		return to.shown()
	}
	return nil
}

// toViews hands an answer the root does not know to the views: each takes
// the answers of its own commands and ignores the rest. The turns take
// the stream's expression once the stream has shown that it works.
func (m *Model) toViews(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, numViews+2)
	for _, e := range m.table {
		cmds = append(cmds, e.v.Update(msg))
	}
	if shown := m.stream.Shown(); shown != m.shown { // the Overview asked already when the filter was applied
		m.shown = shown
		cmds = append(cmds, m.overview.SetFilter(shown))
	}
	return tea.Batch(append(cmds, m.turns.SetFilter(m.stream.Shown(), m.stream.Seen()), m.followTurns())...)
}

// current is the event the focused view is on.
func (m *Model) current() *model.IndexDoc {
	if f := m.table[m.focus].current; f != nil {
		return f()
	}
	return nil
}

// filterable: the filter bar filters what the focused view lists (the
// turns are those of the stream's rows).
func (m *Model) filterable() bool { return m.table[m.focus].filters }
