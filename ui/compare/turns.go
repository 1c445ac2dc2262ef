package compare

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	qc "engram/query/compare"
	"engram/ui/uikit"
)

// MarkTurn remembers turn key as the left of the next comparison of two
// turns (m in the Turns list).
func (v *Model) MarkTurn(key string) { v.markTurn = key }

// MarkedTurn is the marked turn's key, "" before m in the Turns list.
func (v *Model) MarkedTurn() string { return v.markTurn }

// OpenTurns compares turn lkey with turn rkey: their chains aligned step by
// step (what engram diff --turn prints).
func (v *Model) OpenTurns(lkey, rkey string) tea.Cmd {
	v.left, v.right, v.diff, v.loading, v.lines, v.top = nil, nil, nil, true, nil, 0
	v.lturn, v.rturn, v.tdiff, v.rdocs, v.err = lkey, rkey, nil, nil, nil
	v.req++
	return loadTurns(v.c.Ctx, v.c.Deps.Reader, v.c.Deps.Archive, v.c.Opts.ArchiveTimeout, lkey, rkey, v.req)
}

// turnsLoadedMsg answers one load of two turns.
type turnsLoadedMsg struct {
	req   uint64
	diff  *qc.TurnDiff
	rdocs []*model.IndexDoc
	err   error
}

func loadTurns(ctx context.Context, r uikit.Reader, ar ingest.ArchiveReader, timeout time.Duration, lkey, rkey string, req uint64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*timeout)
		defer cancel()
		var chains [2][]*qc.Event
		var rdocs []*model.IndexDoc
		for i, key := range []string{lkey, rkey} {
			docs, err := r.Turn(ctx, key)
			if err == nil && len(docs) == 0 {
				err = fmt.Errorf("turn %s: %w", model.Quote(key), backend.ErrNotFound)
			}
			if err != nil {
				return turnsLoadedMsg{req: req, err: err}
			}
			chains[i], rdocs = qc.FetchAll(ctx, ar, docs), docs
		}
		return turnsLoadedMsg{req: req, diff: qc.Turns(lkey, chains[0], rkey, chains[1]), rdocs: rdocs}
	}
}

func (v *Model) onTurnsLoaded(msg turnsLoadedMsg) {
	if msg.req == v.req {
		v.tdiff, v.rdocs, v.err, v.loading, v.lines = msg.diff, msg.rdocs, msg.err, false, nil
	}
}

// turnHeader is the lines above a turn comparison's body.
func (v *Model) turnHeader() []string {
	st := v.c.Styles
	pathW, colW := v.columns()
	title := st.Title.Render(" Compare turns ") + st.Muted.Render(uikit.Clean(v.lturn)+" ⇄ "+uikit.Clean(v.rturn))
	out := []string{uikit.Fit(title, v.w)}
	row := func(label, l, r string) string {
		return st.Table.Head.Render(uikit.Fit("  "+label, 2+pathW)) + " " + uikit.Fit(l, colW) + st.Subtle.Render(" │ ") + uikit.Fit(r, colW)
	}
	out = append(out, row("turn", "◀ "+uikit.Clean(v.lturn), "▶ "+uikit.Clean(v.rturn)))
	if v.tdiff == nil {
		return out
	}
	l, r := v.tdiff.Left, v.tdiff.Right
	out = append(out, row("", uikit.Clean(l.SessionID+" · "+l.First), uikit.Clean(r.SessionID+" · "+r.First)))
	out = append(out, row("outcome", l.Totals.Outcome, r.Totals.Outcome))
	if n := len(l.Notes) + len(r.Notes); n > 0 {
		out = append(out, st.Warning.Render(uikit.Fit(fmt.Sprintf(" ⚠ %s read from the index: their archive objects could not be read", uikit.Plural(n, "step")), v.w)))
	}
	return out
}

// turnBody is the totals with their deltas, then every step: its place,
// the two events, and the fields that differ between them.
func (v *Model) turnBody() []string {
	if v.tdiff == nil {
		return nil
	}
	if v.lines != nil && v.linesW == v.w {
		return v.lines
	}
	st := v.c.Styles
	var out []string
	for _, m := range v.tdiff.Deltas {
		r := num(m.Right)
		if dt := qc.DeltaText(m.Left, m.Right, m.Delta); m.Delta != nil && dt != "0" {
			r += "  Δ " + dt
		}
		out = append(out, v.line(" ", st.Bold, m.Name, num(m.Left), r, m.Left == nil && m.Right == nil))
	}
	for i, p := range v.tdiff.Steps {
		out = append(out, st.Subtle.Render(strings.Repeat("─", max(0, v.w))))
		mark, ms := markOf(st, p.Status)
		out = append(out, v.line(mark, ms, fmt.Sprintf("step %d %s", i+1, p.Phase), stepText(p.Left), stepText(p.Right), false))
		if p.Diff != nil {
			out = append(out, v.fieldLines(p.Diff.Fields, false)...)
		}
	}
	v.lines, v.linesW = out, v.w
	return out
}

// stepText names a step; a step the other turn has and this one lacks
// says so, rather than leaving its column blank.
func stepText(s *qc.Step) string {
	if s == nil {
		return "— no such step"
	}
	t := s.ID + " · " + s.Type
	if s.Tool != "" {
		t += " · " + s.Tool
	}
	return uikit.Clean(t)
}
