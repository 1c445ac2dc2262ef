package pipeline

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"engram/ingest"
	"engram/ui/uikit"
)

// waterfall draws a run's stages as bars on one time axis: where each
// started and how long it took, the slowest highlighted, errors in place.
func waterfall(st *uikit.Styles, r *run, w int) []string {
	total := time.Duration(0)
	for _, s := range r.stages {
		if s.Status == ingest.StatusPending || s.Status == ingest.StatusSkipped || s.Start.IsZero() {
			continue
		}
		total = max(total, s.Start.Sub(r.start)+s.Duration)
	}
	if r.trace != nil {
		total = max(total, r.trace.Total)
	}
	slowest := slowestStage(r)
	title := fmt.Sprintf("%s  %s", uikit.Clean(r.eventID), uikit.Clean(r.src))
	if r.trace != nil {
		title += "  " + r.trace.Outcome.String() + " in " + uikit.FormatDuration(r.trace.Total)
		if r.trace.Span.TraceID.IsValid() {
			title += "  trace " + r.trace.Span.TraceID.String()
		}
	}
	var lines []string
	for _, l := range uikit.WrapText(title, w-1) {
		lines = append(lines, st.Bold.Render(" "+l))
	}
	barW := max(10, w-34)
	for i, s := range r.stages {
		lines = append(lines, stageLine(st, ingest.Stage(i), s, r.start, total, barW, ingest.Stage(i) == slowest, w)...)
	}
	if r.trace != nil && r.trace.Err != nil && !stageErr(r, r.trace.Err) {
		lines = append(lines, wrapped(st.Error, "✗ "+uikit.ErrorText(r.trace.Err), 1, w)...)
	}
	return lines
}

// stageErr: err is a stage's own, already shown under that stage.
func stageErr(r *run, err error) bool {
	for _, s := range r.stages {
		if s.Err != nil && s.Err.Error() == err.Error() {
			return true
		}
	}
	return false
}

// wrapped is text wrapped to w cells at indent, each line styled.
func wrapped(style lipgloss.Style, text string, indent, w int) []string {
	pad := strings.Repeat(" ", indent)
	var out []string
	for _, l := range uikit.WrapText(text, max(10, w-indent)) {
		out = append(out, pad+style.Render(l))
	}
	return out
}

// slowestStage is the stage that took longest among those that ran.
func slowestStage(r *run) ingest.Stage {
	best := ingest.Stage(-1)
	var d time.Duration
	for i, s := range r.stages {
		if s.Status != ingest.StatusPending && s.Status != ingest.StatusSkipped && s.Duration > d {
			best, d = ingest.Stage(i), s.Duration
		}
	}
	return best
}

// stageLine is a stage's bar, its duration and "slowest"; its note and
// error follow on the lines below when the line has no room for them.
func stageLine(st *uikit.Styles, stage ingest.Stage, s ingest.StageRecord, start time.Time, total time.Duration, barW int, slowest bool, w int) []string {
	glyph, style, dur := uikit.StageMark(st, s, "▶")
	note := ""
	if s.Note != "" {
		note = " (" + uikit.Clean(s.Note) + ")"
	}
	bar := strings.Repeat(" ", barW)
	if total > 0 && !s.Start.IsZero() && s.Status != ingest.StatusSkipped {
		from := int(float64(s.Start.Sub(start)) / float64(total) * float64(barW))
		n := max(1, int(float64(s.Duration)/float64(total)*float64(barW)+0.5))
		from = max(0, min(from, barW-1))
		n = min(n, barW-from)
		bar = strings.Repeat(" ", from) + strings.Repeat("█", n) + strings.Repeat(" ", barW-from-n)
	}
	barStyle := style
	if slowest {
		barStyle = st.Stage.Slowest
	}
	line := fmt.Sprintf(" %s %-9s %s %9s", style.Render(glyph), stage, barStyle.Render(bar), dur)
	if slowest {
		line += st.Stage.Slowest.Render(" slowest")
	}
	var errText string
	if s.Err != nil {
		errText = uikit.ErrorText(s.Err)
	}
	if uikit.Width(line+note)+1+uikit.Width(errText) <= w {
		if errText != "" {
			errText = " " + st.Error.Render(errText)
		}
		return []string{line + st.Muted.Render(note) + errText}
	}
	out := []string{line}
	const under = 13 // under the bar, past the glyph and the stage name
	if note != "" {
		out = append(out, wrapped(st.Muted, strings.TrimSpace(note), under, w)...)
	}
	if errText != "" {
		out = append(out, wrapped(st.Error, errText, under, w)...)
	}
	return out
}
