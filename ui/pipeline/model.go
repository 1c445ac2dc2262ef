// Package pipeline is the inspector's Pipeline view: the stage waterfalls
// of the ingestions this process ran (the record form, followed files),
// failures first, then the newest.
package pipeline

import (
	"sort"
	"time"

	"engram/ingest"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// run is one input going through a pipeline of this process: live
// while its stages run, then its finished trace.
type run struct {
	id      uint64 // run<<32 | seq
	src     string
	eventID string
	stages  [ingest.NumStages]ingest.StageRecord
	start   time.Time
	trace   *ingest.Trace // set when done
	record  bool
}

func (r *run) failed() bool {
	return r.trace != nil && (r.trace.Outcome == ingest.OutcomeFailed || r.trace.Outcome == ingest.OutcomeRejected)
}

// Model is the Pipeline view.
type Model struct {
	c     *uikit.Common
	runs  map[uint64]*run
	order []*run // sorted for drawing
	cur   list.Cursor
	w, h  int
}

// Runs kept; the oldest finished successes go first.
const maxRuns = 1000

// New is the view with no run yet.
func New(c *uikit.Common) *Model {
	return &Model{c: c, runs: map[uint64]*run{}}
}

// SetSize takes effect on the list when it next moves.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.listH())
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// Runs is how many runs are kept.
func (v *Model) Runs() int { return len(v.order) }

// listH is the rows of the run list; the waterfall of the selected run
// takes the rest (ten lines: title, eight stages, error).
func (v *Model) listH() int { return max(1, v.h-12) }

// add records a stage or a finished trace.
func (v *Model) add(msg uikit.PipeMsg) {
	var seq uint64
	var src, id string
	if msg.Stage != nil {
		seq, src, id = msg.Stage.Seq, msg.Stage.Src.String(), msg.Stage.EventID
	} else {
		seq, src, id = msg.Trace.Seq, msg.Trace.Src.String(), msg.Trace.EventID
	}
	key := msg.Run<<32 | seq
	r := v.runs[key]
	if r == nil {
		r = &run{id: key, src: src, record: msg.Record, start: v.c.Deps.Now()}
		v.runs[key] = r
	}
	if id != "" {
		r.eventID = id
	}
	if msg.Stage != nil {
		r.stages[msg.Stage.Stage] = msg.Stage.StageRecord
	} else {
		r.trace = msg.Trace
		r.stages = msg.Trace.Stages
		r.start = msg.Trace.Start
	}
	v.sort()
}

func (v *Model) sort() {
	keep := v.order[:0]
	// The selection stays on its run, unless it is on the first row: then
	// it stays there, on whatever comes first.
	if cur := v.selected(); cur != nil && v.cur.Sel() > 0 {
		defer func() { v.selectRun(cur.id) }()
	}
	for _, r := range v.runs {
		keep = append(keep, r)
	}
	sort.Slice(keep, func(i, j int) bool {
		a, b := keep[i], keep[j]
		if a.failed() != b.failed() {
			return a.failed()
		}
		if (a.trace == nil) != (b.trace == nil) {
			return a.trace == nil
		}
		return a.id > b.id
	})
	for len(keep) > maxRuns {
		last := keep[len(keep)-1]
		delete(v.runs, last.id)
		keep = keep[:len(keep)-1]
	}
	v.order = keep
}

func (v *Model) selectRun(id uint64) {
	for i, r := range v.order {
		if r.id == id {
			v.cur.Select(i)
		}
	}
	v.cur.Scroll(len(v.order))
}

func (v *Model) selected() *run {
	if v.cur.Sel() >= len(v.order) {
		return nil
	}
	return v.order[v.cur.Sel()]
}

// Busy reports whether a run is still going through its stages.
func (v *Model) Busy() bool {
	for _, r := range v.order {
		if r.trace == nil {
			return true
		}
	}
	return false
}
