// Package session is the inspector's Session view: every turn of one
// session in time order on a time axis (what engram session prints), the
// idle time between turns visible and the gaps marked; j/k step turn by
// turn, the selected turn's steps are listed under the axis, enter opens
// the selected turn's first event in the detail.
package session

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	qc "engram/query/compare"
	"engram/ui/uikit"
)

// maxTurns is how many turns of a session are read (the newest).
const maxTurns = 500

// Model is the Session view.
type Model struct {
	c       *uikit.Common
	id      string
	s       *qc.Session
	docs    map[string][]*model.IndexDoc // the turns' events, by turn key
	sel     int                          // the selected turn
	top     int                          // the first line of the axis shown
	w, h    int
	req     uint64 // numbers the loads; a stale answer is dropped
	loading bool
	err     error
}

// New shows nothing until Open.
func New(c *uikit.Common) *Model { return &Model{c: c} }

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area.
func (v *Model) SetSize(w, h int) { v.w, v.h = w, h; v.follow() }

// Busy reports whether the session's turns are being read.
func (v *Model) Busy() bool { return v.loading }

// Opened reports whether a session was asked for (Tab then reaches the view).
func (v *Model) Opened() bool { return v.id != "" }

// Open reads the turns of session id; at selects the turn holding event
// at (its first turn when "").
func (v *Model) Open(id, at string) tea.Cmd {
	v.id, v.s, v.docs, v.err, v.loading, v.sel, v.top = id, nil, nil, nil, true, 0, 0
	v.req++
	return load(v.c.Ctx, v.c.Deps.Reader, id, at, v.req)
}

// Current is the first event of the selected turn.
func (v *Model) Current() *model.IndexDoc {
	if v.s == nil || v.sel >= len(v.s.Turns) {
		return nil
	}
	if docs := v.docs[v.s.Turns[v.sel].Key]; len(docs) > 0 {
		return docs[0]
	}
	return nil
}

// loadedMsg answers one load.
type loadedMsg struct {
	req  uint64
	s    *qc.Session
	docs map[string][]*model.IndexDoc
	sel  int
	err  error
}

// load lists the session's turns (the newest maxTurns), reads each one's
// chain and lays them out.
func load(ctx context.Context, r uikit.Reader, id, at string, req uint64) tea.Cmd {
	return func() tea.Msg {
		src := `session:"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id) + `"`
		var sums []query.TurnSummary
		var after query.Cursor
		cut := false
		for {
			p, err := r.Turns(ctx, src, after, min(query.MaxPage, maxTurns-len(sums)))
			if err != nil {
				return loadedMsg{req: req, err: err}
			}
			sums = append(sums, p.Turns...)
			if p.Next == "" {
				break
			}
			if len(sums) >= maxTurns {
				cut = true
				break
			}
			after = p.Next
		}
		docs := make(map[string][]*model.IndexDoc, len(sums))
		for _, t := range sums {
			d, err := r.Turn(ctx, t.Key)
			if err != nil {
				return loadedMsg{req: req, err: err}
			}
			docs[t.Key] = d
		}
		s := qc.Timeline(id, docs)
		s.Cut = cut
		sel := 0
		for i, t := range s.Turns {
			for _, st := range t.Steps {
				if st.ID == at {
					sel = i
				}
			}
		}
		return loadedMsg{req: req, s: s, docs: docs, sel: sel}
	}
}
