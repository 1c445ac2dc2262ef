package ui

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// pipeRun is one input going through a pipeline of this process: live
// while its stages run, then its finished trace.
type pipeRun struct {
	id      uint64 // run<<32 | seq
	src     string
	eventID string
	stages  [ingest.NumStages]ingest.StageRecord
	start   time.Time
	trace   *ingest.Trace // set when done
	record  bool
}

func (r *pipeRun) failed() bool {
	return r.trace != nil && (r.trace.Outcome == ingest.OutcomeFailed || r.trace.Outcome == ingest.OutcomeRejected)
}

// pipelineView is the stage waterfalls of the ingestions this process ran
// (the record form, followed files): failures first, then the newest.
type pipelineView struct {
	c     *uikit.Common
	runs  map[uint64]*pipeRun
	order []*pipeRun // sorted for drawing
	cur   list.Cursor
	w, h  int
}

// Runs kept; the oldest finished successes go first.
const maxRuns = 1000

func newPipelineView(c *uikit.Common) *pipelineView {
	return &pipelineView{c: c, runs: map[uint64]*pipeRun{}}
}

// SetSize takes effect on the list when it next moves.
func (v *pipelineView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.listH())
}

// listH is the rows of the run list; the waterfall of the selected run
// takes the rest (ten lines: title, eight stages, error).
func (v *pipelineView) listH() int { return max(1, v.h-12) }

// onPipe records a stage or a finished trace.
func (v *pipelineView) onPipe(msg uikit.PipeMsg) {
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
		r = &pipeRun{id: key, src: src, record: msg.Record, start: v.c.Deps.Now()}
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

func (v *pipelineView) sort() {
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

func (v *pipelineView) selectRun(id uint64) {
	for i, r := range v.order {
		if r.id == id {
			v.cur.Select(i)
		}
	}
	v.cur.Scroll(len(v.order))
}

func (v *pipelineView) selected() *pipeRun {
	if v.cur.Sel() >= len(v.order) {
		return nil
	}
	return v.order[v.cur.Sel()]
}

func (v *pipelineView) busy() bool {
	for _, r := range v.order {
		if r.trace == nil {
			return true
		}
	}
	return false
}

// Update handles the list keys; Enter opens the event of an ingested run.
func (v *pipelineView) Update(msg tea.Msg) tea.Cmd {
	km := v.c.Keys
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		v.move(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp])
	case tea.KeyPressMsg:
		if delta, ok := list.Step(msg, km, v.listH(), len(v.order)); ok {
			v.move(delta)
			return nil
		}
		if key.Matches(msg, km.Enter) {
			if r := v.selected(); r != nil && r.trace != nil && r.eventID != "" {
				id := r.eventID
				return loadDoc(v.c.Ctx, v.c.Deps.Reader, id)
			}
		}
	}
	return nil
}

func (v *pipelineView) move(d int) { v.cur.Move(d, len(v.order)) }

// View draws the run list and the selected run's waterfall.
func (v *pipelineView) View() string {
	st := v.c.Styles
	if len(v.order) == 0 {
		msg := " No ingestion has run in this session yet. Record an event (R) or start engram with --follow FILE;\n its stages show here as a waterfall."
		return uikit.PadLines(st.Muted.Render(msg), v.w, v.h)
	}
	var lines []string
	from, to := v.cur.Visible(len(v.order))
	for i := from; i < to; i++ {
		lines = append(lines, v.runLine(v.order[i], i == v.cur.Sel()))
	}
	for len(lines) < v.listH() {
		lines = append(lines, "")
	}
	lines = append(lines, st.Border.Render(strings.Repeat("─", v.w)))
	if r := v.selected(); r != nil {
		lines = append(lines, waterfall(st, r, v.w)...)
	}
	return uikit.PadLines(strings.Join(lines, "\n"), v.w, v.h)
}

func outcomeText(st *uikit.Styles, r *pipeRun) string {
	if r.trace == nil {
		return st.Stage.Running.Render(uikit.Fit("running", 9))
	}
	o := r.trace.Outcome
	s := uikit.Fit(strings.Fields(o.String())[0], 9)
	switch o {
	case ingest.OutcomeFailed, ingest.OutcomeRejected, ingest.OutcomeCanceled:
		return st.Error.Render(s)
	case ingest.OutcomeDuplicate:
		return st.Warning.Render(s)
	}
	return st.Success.Render(s)
}

func (v *pipelineView) runLine(r *pipeRun, selected bool) string {
	st := v.c.Styles
	total := ""
	if r.trace != nil {
		total = uikit.FormatDuration(r.trace.Total)
	}
	src := filepath.Base(r.src)
	if r.record {
		src = "record form"
	}
	idW := max(10, (v.w-34)/2)
	line := fmt.Sprintf("%s %s %s %s %s", map[bool]string{true: "›", false: " "}[selected], outcomeText(st, r),
		uikit.Fit(uikit.Clean(r.eventID), idW), uikit.FitRight(total, 9), uikit.Trunc(uikit.Clean(src), max(0, v.w-idW-23)))
	if selected {
		return st.Bold.Render(line)
	}
	return line
}

// ShortHelp: the pipeline's keys that work now.
func (v *pipelineView) ShortHelp() []key.Binding {
	km := v.c.Keys
	if len(v.order) == 0 {
		return nil
	}
	open := km.Enter
	open.SetHelp("enter", "open event")
	if r := v.selected(); r == nil || r.trace == nil || r.eventID == "" {
		return []key.Binding{km.Move}
	}
	return []key.Binding{km.Move, open}
}

// FullHelp: every key of the pipeline view.
func (v *pipelineView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.c.Keys.ListKeys(), {v.c.Keys.Enter}}
}
