package ui

import (
	"engram/ui/overview"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"engram/ui/record"
	"engram/ui/stream"
	"engram/ui/uikit"
)

// onAnswer routes the answers of commands to the views that asked.
func (m *Model) onAnswer(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case uikit.CountMsg:
		if msg.Err != nil {
			return uikit.StatusCmd("counting documents: "+uikit.ErrorText(msg.Err), true)
		}
		m.count, m.countKnown = msg.N, true
	case uikit.PipeMsg:
		m.pipeline.Update(msg)
		if msg.Record {
			m.record.Update(msg)
		}
		return m.listen()
	case record.DoneMsg:
		return m.onRecorded(msg)
	case record.FoundMsg:
		return m.stream.SelectID(msg.ID) // the status says so when the send ends
	case gotMsg:
		return m.onGot(msg)
	case copyMsg:
		if msg.err != nil {
			return uikit.StatusCmd("the copy holds only what the index has: "+uikit.ErrorText(msg.err), true)
		}
		m.record.CopyArchived(msg.id, msg.body)
	case followTickMsg:
		return m.followTick()
	case overview.OpenStreamMsg:
		return m.openStream(msg)
	case followedMsg:
		return m.onFollowed(msg)
	case coverageMsg:
		return m.onCoverage(msg)
	case coverageTickMsg:
		return loadCoverage(m.c.Ctx, m.c.Deps.Reader)
	case uikit.OpenDetailMsg:
		if m.focus == viewTurns {
			m.turns.Hidden()
		}
		m.back, m.focus = m.focus, viewDetail
		return m.detail.Open(msg.Doc, msg.Nav)
	case stream.SeekDoneMsg:
		return m.afterJump(nil)
	case stream.StartFailedMsg:
		m.fatal = msg.Err
		m.hint = "The index could not be read. Check --data (or ENGRAM_DATA) points at an engram data directory, or start afresh with an empty one."
	case stream.FilterRefusedMsg:
		m.filter.applied = m.stream.Shown()
		m.filter.fail(msg.Expr, msg.Err)
		return m.overview.SetFilter(m.stream.Shown())
	case uikit.StatusMsg:
		m.status, m.statusErr = msg.Text, msg.Err
	case uikit.ObservedMsg:
		m.status, m.statusErr = msg.Text, msg.Err
		return m.listen()
	default:
		return m.toViews(msg)
	}
	return nil
}

// followTurns reloads the turns shown when the tail brought documents and
// the stream follows: the header's "● following" holds for them too.
func (m *Model) followTurns() tea.Cmd {
	if m.focus != viewTurns || !m.stream.Following() {
		return nil
	}
	return m.turns.Shown(m.stream.Seen())
}

func (m *Model) onRecorded(msg record.DoneMsg) tea.Cmd {
	if !m.record.Recorded(msg) {
		if msg.Err != nil {
			return uikit.StatusCmd("recording failed: "+uikit.ErrorText(msg.Err), true)
		}
		return nil
	}
	return tea.Batch(m.stream.SelectID(msg.ID),
		uikit.StatusCmd(fmt.Sprintf("recorded %s: selected in the stream", uikit.Clean(msg.ID)), false))
}

// followTick starts a round on every followed file not already in one.
func (m *Model) followTick() tea.Cmd {
	cmds := []tea.Cmd{m.c.After(m.c.Opts.Poll, followTickMsg{})}
	for _, f := range m.followers {
		if f.busy {
			continue
		}
		f.busy = true
		m.followRun++
		cmds = append(cmds, followRound(m.c.Ctx, m.c.Deps.Recorder, f.File, m.events, m.followRun))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onFollowed(msg followedMsg) tea.Cmd {
	for _, f := range m.followers {
		if f.Name != msg.file {
			continue
		}
		f.busy = false
		f.File = msg.at // on an error, past a skipped line, else unchanged
		if msg.err != nil {
			f.failing = followError(f.Name, msg.err)
			return uikit.StatusCmd(f.failing, true)
		}
		if f.failing != "" && m.status == f.failing {
			m.status, m.statusErr = "", false // the file is back: the error no longer holds
		}
		f.failing = ""
		if bad := msg.sum.Rejected + msg.sum.Failed; bad > 0 {
			return uikit.StatusCmd(fmt.Sprintf("following %s: %d of %d lines not ingested (see Pipeline)", uikit.Clean(f.Name), bad, msg.sum.Total()), true)
		}
		if msg.at.Replaced {
			return uikit.StatusCmd("following "+uikit.Clean(f.Name)+": it was replaced, so it was read again from its start (events already indexed count as duplicates)", false)
		}
	}
	return nil
}

// openStream shows the stream filtered as the Overview asked, saying what
// the filter could not hold; Esc there comes back (leaveDrill).
func (m *Model) openStream(msg overview.OpenStreamMsg) tea.Cmd {
	m.drill.on, m.drill.expr, m.drill.prev = true, msg.Expr, m.filter.applied
	m.filter.applied = msg.Expr
	m.filter.remember(msg.Expr)
	cmds := []tea.Cmd{m.setFocus(viewStream), m.applyFilter()}
	if msg.Note != "" {
		cmds = append(cmds, uikit.StatusCmd(msg.Note, false))
	}
	return tea.Batch(cmds...)
}

// drilled: the stream shows what an Overview bucket opened, its filter
// not changed since.
func (m *Model) drilled() bool {
	return m.focus == viewStream && m.drill.on && m.filter.applied == m.drill.expr
}

// leaveDrill is Esc in the stream a bucket opened: back to the Overview,
// the filter as it was before, as a drill-down comes back up.
func (m *Model) leaveDrill() tea.Cmd {
	m.drill.on = false
	m.filter.applied = m.drill.prev
	return tea.Batch(m.applyFilter(), m.setFocus(viewOverview))
}
