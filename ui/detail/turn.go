package detail

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// archTurn is the causal chain of the event shown, found in the archive
// when the index holds no turn key for it (a document the source system
// wrote): one line under the facts.
type archTurn struct {
	want    bool // the event needs it and the reader can find it
	loading bool
	turn    *query.ArchiveTurn
	err     error
	req     uint64
	cancel  context.CancelFunc
}

// turnMsg answers findTurn.
type turnMsg struct {
	req  uint64
	turn *query.ArchiveTurn
	err  error
}

// openTurn starts finding doc's turn in the archive, when it has to come
// from there; the previous event's search ends.
func (v *Model) openTurn(doc *model.IndexDoc) tea.Cmd {
	t := &v.archTurn
	t.stop()
	t.req++
	f, ok := uikit.ArchiveTurnOf(v.c.Deps.Reader)
	// Written without the extensions (no ingested_at): its turn is the
	// archive's, whether the document is the index's own (no turn key) or
	// a chain's step filled in from the archive (found again, cached).
	t.want = ok && doc.IngestedAt == ""
	t.turn, t.err = nil, nil
	if !t.want {
		return nil
	}
	t.loading = true
	ctx, cancel := context.WithCancel(v.c.Ctx)
	t.cancel = cancel
	req, id := t.req, doc.EventID
	return func() tea.Msg {
		turn, err := f.FindTurn(ctx, id)
		return turnMsg{req, turn, err}
	}
}

// stop ends a search in flight; its answer is dropped, and the event
// opened again searches again.
func (t *archTurn) stop() {
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
	if t.loading {
		t.loading = false
		t.req++
	}
}

func (v *Model) onTurn(msg turnMsg) {
	t := &v.archTurn
	if msg.req != t.req {
		return
	}
	t.loading = false
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
	t.turn, t.err = msg.turn, msg.err
}

// turnLines is the chain line: how far the search is, or the turn's
// steps with this event's marked, and where it came from.
func (v *Model) turnLines() []string {
	t := &v.archTurn
	if !t.want {
		return nil
	}
	st := v.c.Styles
	switch {
	case t.loading:
		return []string{" " + st.Accent.Render(v.c.Spin.View()) + st.Muted.Render(" finding its turn in the archive…")}
	case t.err != nil:
		return []string{" " + st.Error.Render("✗ its turn from the archive: "+uikit.ErrorText(t.err))}
	case t.turn == nil: // left while searching: searched again when shown
		return []string{" " + st.Muted.Render("turn from the archive: not searched")}
	}
	at := 0
	for i, d := range t.turn.Docs {
		if d.EventID == v.doc.EventID {
			at = i
		}
	}
	head := fmt.Sprintf("turn %s from the archive · step %d of %d: ", uikit.Clean(t.turn.Key), at+1, len(t.turn.Docs))
	return []string{" " + st.Muted.Render(head) + chainSteps(st, t.turn.Docs, at, v.w-2-uikit.Width(head))}
}

// chainSteps is the phases of docs joined by arrows, step at in bold; a
// chain too long for w cells shows the steps around it.
func chainSteps(st *uikit.Styles, docs []*model.IndexDoc, at, w int) string {
	step := func(i int) string {
		ph := docs[i].Phase()
		s := uikit.PhaseGlyph(ph) + " " + ph.String()
		if i == at {
			return st.Selected.Render(s)
		}
		return st.Phase[ph].Render(s)
	}
	full := make([]string, len(docs))
	glyphs := make([]string, len(docs))
	for i, d := range docs {
		full[i], glyphs[i] = step(i), st.Phase[d.Phase()].Render(uikit.PhaseGlyph(d.Phase()))
	}
	glyphs[at] = full[at]
	for _, all := range [][]string{full, glyphs} {
		if s := strings.Join(all, " → "); uikit.Width(s) <= w {
			return s
		}
	}
	// Too long even as glyphs: the steps around this one.
	from, to := at, at+1
	parts := func() string {
		var p []string
		if from > 0 {
			p = append(p, "…")
		}
		for i := from; i < to; i++ {
			p = append(p, step(i))
		}
		if to < len(docs) {
			p = append(p, "…")
		}
		return strings.Join(p, " → ")
	}
	for grown := true; grown; {
		grown = false
		for _, try := range [][2]int{{from - 1, to}, {from, to + 1}} {
			if try[0] < 0 || try[1] > len(docs) {
				continue
			}
			f, t := from, to
			from, to = try[0], try[1]
			if uikit.Width(parts()) > w {
				from, to = f, t
				continue
			}
			grown = true
		}
	}
	return parts()
}
