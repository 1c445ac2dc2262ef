// Package compare is the inspector's Compare view: two events side by
// side, field by field, what differs marked (what engram diff prints), or
// two turns step by step (engram diff --turn). m marks an event anywhere
// (a turn in the Turns list), = on another opens the view on the two, Esc
// goes back to where = was pressed.
package compare

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	qc "engram/query/compare"
	"engram/ui/uikit"
)

// Model is the Compare view.
type Model struct {
	c *uikit.Common
	// marked is the event m marked, the left of the next comparison.
	marked      *model.IndexDoc
	left, right *model.IndexDoc
	diff        *qc.EventDiff
	// A comparison of two turns: their keys, its diff, the right turn's
	// events; markTurn is the turn m marked in the Turns list.
	markTurn     string
	lturn, rturn string
	tdiff        *qc.TurnDiff
	rdocs        []*model.IndexDoc
	err          error
	// lines is the body drawn for width linesW; top the first one shown.
	lines   []string
	linesW  int
	top     int
	w, h    int
	req     uint64 // numbers the loads; a stale answer is dropped
	loading bool
}

// New compares nothing until Open.
func New(c *uikit.Common) *Model { return &Model{c: c} }

// Mark remembers d as the left of the next comparison.
func (v *Model) Mark(d *model.IndexDoc) { v.marked = d }

// Marked is the marked event, nil before m.
func (v *Model) Marked() *model.IndexDoc { return v.marked }

// Opened reports whether a comparison was asked for (Tab then reaches the view).
func (v *Model) Opened() bool { return v.left != nil || v.lturn != "" }

// Current is the right event, the one = was pressed on.
func (v *Model) Current() *model.IndexDoc {
	if v.lturn != "" {
		if len(v.rdocs) > 0 {
			return v.rdocs[0]
		}
		return nil
	}
	return v.right
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area; the body is drawn again for a new
// width.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.top = min(v.top, v.maxTop())
}

// Busy reports whether the two events are being read.
func (v *Model) Busy() bool { return v.loading }

// Open compares left with right: both read from the archive (the index
// document standing in for a missing object), then aligned.
func (v *Model) Open(left, right *model.IndexDoc) tea.Cmd {
	v.left, v.right, v.diff, v.loading, v.lines, v.top = left, right, nil, true, nil, 0
	v.lturn, v.rturn, v.tdiff, v.rdocs, v.err = "", "", nil, nil, nil
	v.req++
	return load(v.c.Ctx, v.c.Deps.Archive, v.c.Opts.ArchiveTimeout, left, right, v.req)
}

// loadedMsg answers one load.
type loadedMsg struct {
	req  uint64
	diff *qc.EventDiff
}

func load(ctx context.Context, ar ingest.ArchiveReader, timeout time.Duration, l, r *model.IndexDoc, req uint64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return loadedMsg{req, qc.Events(qc.FromDoc(ctx, ar, l), qc.FromDoc(ctx, ar, r))}
	}
}
