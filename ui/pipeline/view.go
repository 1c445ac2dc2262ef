package pipeline

import (
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"

	"engram/ingest"
	"engram/ui/uikit"
)

// View draws the run list and the selected run's waterfall.
func (v *Model) View() string {
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

func outcomeText(st *uikit.Styles, r *run) string {
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

func (v *Model) runLine(r *run, selected bool) string {
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
func (v *Model) ShortHelp() []key.Binding {
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
func (v *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.c.Keys.ListKeys(), {v.c.Keys.Enter}}
}
