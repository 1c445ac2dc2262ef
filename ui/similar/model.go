// Package similar is the inspector's Similar view: the events nearest to
// one event by embedding (what engram similar prints), as a list that
// opens like the stream: enter shows an event in the detail, where ] and
// [ step through this list.
package similar

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// limit is how many neighbours are listed.
const limit = 50

// Model is the Similar view.
type Model struct {
	c       *uikit.Common
	of      *model.IndexDoc // the event the others are near to
	rows    []query.Scored
	cur     list.Cursor
	w, h    int
	req     uint64 // numbers the loads; a stale answer is dropped
	loading bool
	err     error
	note    string // what the index says of its scores ("stub embedder: ...")
}

// New lists nothing until Open.
func New(c *uikit.Common) *Model { return &Model{c: c} }

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area: a title line, the column titles and
// the position line around the rows.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(len(v.rows))
}

func (v *Model) rowsH() int { return max(1, v.h-3) }

// Open lists the neighbours of d.
func (v *Model) Open(d *model.IndexDoc) tea.Cmd {
	v.of, v.rows, v.err, v.loading, v.note = d, nil, nil, true, ""
	v.cur.Reset()
	v.req++
	return load(v.c.Ctx, v.c.Deps.Reader, d.EventID, v.req)
}

// Of is the event the list is of, nil before any.
func (v *Model) Of() *model.IndexDoc { return v.of }

// Busy reports whether the neighbours are being looked for.
func (v *Model) Busy() bool { return v.loading }

// Selected is the selected neighbour, nil when there is none.
func (v *Model) Selected() *model.IndexDoc {
	if v.cur.Sel() >= len(v.rows) {
		return nil
	}
	return v.rows[v.cur.Sel()].Doc
}

// Step is the navigator for the detail: the neighbour delta away from
// the one with id from (nil at an end; nothing to page in).
func (v *Model) Step(from string, delta int) (*model.IndexDoc, tea.Cmd) {
	for i, s := range v.rows {
		if s.Doc.EventID != from {
			continue
		}
		if j := i + delta; j >= 0 && j < len(v.rows) {
			v.cur.Select(j)
			v.cur.Scroll(len(v.rows))
			return v.rows[j].Doc, nil
		}
	}
	return nil, nil
}

// loadedMsg answers one load.
type loadedMsg struct {
	req  uint64
	rows []query.Scored
	err  error
	note string
}

// load asks the index for the neighbours of id, itself left out.
func load(ctx context.Context, r uikit.Reader, id string, req uint64) tea.Cmd {
	return func() tea.Msg {
		rows, err := r.Similar(ctx, id, limit+1)
		out := rows[:0:0]
		for _, s := range rows {
			if s.Doc.EventID != id && len(out) < limit {
				out = append(out, s)
			}
		}
		note := ""
		if n, ok := r.(interface {
			ScoresNote(ctx context.Context, dim int) string
		}); ok && len(out) > 0 {
			note = n.ScoresNote(ctx, len(out[0].Doc.Embedding))
		}
		return loadedMsg{req, out, err, note}
	}
}
