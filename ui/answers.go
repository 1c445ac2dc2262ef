package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
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
	case countMsg:
		if msg.err != nil {
			return statusCmd("counting documents: "+errorText(msg.err), true)
		}
		m.count, m.countKnown = msg.n, true
	case archiveMsg:
		return m.detail.Update(msg)
	case turnsMsg, chainMsg:
		return m.turns.Update(msg)
	case pipeMsg:
		m.pipeline.onPipe(msg)
		if msg.record {
			m.record.Update(msg)
		}
		return m.listen()
	case recordedMsg:
		return m.onRecorded(msg)
	case followTickMsg:
		return m.followTick()
	case followedMsg:
		return m.onFollowed(msg)
	case openDetailMsg:
		m.back, m.focus = m.focus, viewDetail
		return m.detail.open(msg.doc, msg.nav)
	case docMsg:
		if msg.err != nil {
			return statusCmd("event "+clean(msg.id)+": "+errorText(msg.err), true)
		}
		m.back, m.focus = m.focus, viewDetail
		return m.detail.open(msg.doc, nil)
	case seekDoneMsg:
		return m.afterJump(nil)
	case statusMsg:
		m.status, m.statusErr = msg.text, msg.err
	case observedMsg:
		m.status, m.statusErr = msg.text, msg.err
		return m.listen()
	}
	return nil
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
	if msg.seq == m.stream.seq && msg.err == nil && m.turns.expr != m.stream.expr {
		// The turns take an expression once the stream has shown it works.
		cmd = tea.Batch(cmd, m.turns.setFilter(m.stream.expr, m.newSeen))
	}
	return cmd
}

func (m *Model) onRecorded(msg recordedMsg) tea.Cmd {
	if !m.record.onRecorded(msg) {
		if msg.err != nil {
			return statusCmd("recording failed: "+errorText(msg.err), true)
		}
		return nil
	}
	return tea.Batch(m.stream.selectID(msg.id),
		statusCmd(fmt.Sprintf("recorded %s: selected in the stream", clean(msg.id)), false))
}

// followTick starts a round on every followed file not already in one.
func (m *Model) followTick() tea.Cmd {
	cmds := []tea.Cmd{m.c.after(m.c.Opts.Poll, followTickMsg{})}
	for _, f := range m.followers {
		if f.busy {
			continue
		}
		f.busy = true
		m.followRun++
		cmds = append(cmds, followRound(m.c.ctx, m.c.Deps.Recorder, f.File, m.events, m.followRun))
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
			return statusCmd("following "+clean(f.Name)+": "+errorText(msg.err), true)
		}
		if bad := msg.sum.Rejected + msg.sum.Failed; bad > 0 {
			return statusCmd(fmt.Sprintf("following %s: %d of %d lines not ingested (see Pipeline)", clean(f.Name), bad, msg.sum.Total()), true)
		}
	}
	return nil
}

var _ ingest.Observer = chanObserver{}
