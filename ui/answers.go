package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"engram/ui/record"
	"engram/ui/uikit"
)

// onAnswer routes the answers of commands to the views that asked.
func (m *Model) onAnswer(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case headMsg:
		return m.onHead(msg)
	case olderMsg, newerMsg, tailTickMsg:
		return m.stream.Update(msg)
	case tailMsg:
		m.newSeen += msg.seen
		return m.stream.Update(msg)
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
	case followTickMsg:
		return m.followTick()
	case followedMsg:
		return m.onFollowed(msg)
	case uikit.OpenDetailMsg:
		m.back, m.focus = m.focus, viewDetail
		return m.detail.Open(msg.Doc, msg.Nav)
	case seekDoneMsg:
		return m.afterJump(nil)
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

// toViews hands an answer the root does not know to the views: each takes
// the answers of its own commands and ignores the rest.
func (m *Model) toViews(msg tea.Msg) tea.Cmd {
	return tea.Batch(m.detail.Update(msg), m.turns.Update(msg))
}

// onHead: a failed first load is a start-up failure; a failed filtered
// load reopens the filter bar on the error.
func (m *Model) onHead(msg headMsg) tea.Cmd {
	if msg.seq == m.stream.seq && msg.err != nil {
		if msg.first {
			m.fatal = msg.err
			m.hint = "The index could not be read. Check --data (or ENGRAM_DATA) points at an engram data directory, or start afresh with an empty one."
			return nil
		}
		if m.stream.expr != "" {
			// The rows shown stay those of the last expression that worked.
			bad := m.stream.expr
			m.stream.loadingHead = false
			m.stream.expr, m.filter.applied = m.stream.good, m.stream.good
			m.filter.fail(bad, msg.err)
			return nil
		}
	}
	cmd := m.stream.Update(msg)
	if msg.seq == m.stream.seq && msg.err == nil {
		// The turns take an expression once the stream has shown it works.
		cmd = tea.Batch(cmd, m.turns.SetFilter(m.stream.expr, m.newSeen))
	}
	return cmd
}

func (m *Model) onRecorded(msg record.DoneMsg) tea.Cmd {
	if !m.record.Recorded(msg) {
		if msg.Err != nil {
			return uikit.StatusCmd("recording failed: "+uikit.ErrorText(msg.Err), true)
		}
		return nil
	}
	return tea.Batch(m.stream.selectID(msg.ID),
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
			return uikit.StatusCmd("following "+uikit.Clean(f.Name)+": "+uikit.ErrorText(msg.err), true)
		}
		if bad := msg.sum.Rejected + msg.sum.Failed; bad > 0 {
			return uikit.StatusCmd(fmt.Sprintf("following %s: %d of %d lines not ingested (see Pipeline)", uikit.Clean(f.Name), bad, msg.sum.Total()), true)
		}
	}
	return nil
}
