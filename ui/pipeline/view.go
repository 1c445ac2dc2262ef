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
		var lines []string
		for _, l := range v.emptyText() {
			lines = append(lines, uikit.WrapText(l, max(10, v.w-2))...)
		}
		return uikit.PadLines(st.Muted.Render(indentLines(lines)), v.w, v.h)
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

// emptyText says why no run is listed, and only what can be done here.
func (v *Model) emptyText() []string {
	o := v.c.Opts
	out := []string{"This view shows the stages of what this inspector ingests itself, as a waterfall; nothing has run yet."}
	switch {
	case !v.c.CanWrite():
		return append(out, "It is read-only (--readonly): it ingests nothing, so nothing will show here.")
	case o.Demo:
		out = append(out, "The demo's simulated agent ingests in a pipeline of its own: its events show in the Stream, not here.")
	}
	for _, f := range o.Follow {
		out = append(out, "Following "+uikit.Clean(f)+": its new lines show here as they are ingested.")
	}
	if len(o.Follow) == 0 {
		return append(out, "Record an event (R), or start engram with --follow FILE.")
	}
	return append(out, "Record an event (R) to see one now.")
}

func indentLines(lines []string) string { return " " + strings.Join(lines, "\n ") }

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

// ShortHelp returns the pipeline's keys that work now.
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

// FullHelp returns every key of the pipeline view.
func (v *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.c.Keys.ListKeys(), {v.c.Keys.Enter}}
}
