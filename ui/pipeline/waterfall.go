package pipeline

import (
	"fmt"
	"strings"
	"time"

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
	title := fmt.Sprintf(" %s  %s", uikit.Clean(r.eventID), uikit.Clean(r.src))
	if r.trace != nil {
		title += "  " + r.trace.Outcome.String() + " in " + uikit.FormatDuration(r.trace.Total)
		if r.trace.Span.TraceID.IsValid() {
			title += "  trace " + r.trace.Span.TraceID.String()
		}
	}
	lines := []string{st.Bold.Render(uikit.Trunc(title, w))}
	barW := max(10, w-34)
	for i, s := range r.stages {
		lines = append(lines, stageLine(st, ingest.Stage(i), s, r.start, total, barW, ingest.Stage(i) == slowest))
	}
	if r.trace != nil && r.trace.Err != nil {
		lines = append(lines, st.Error.Render(uikit.Trunc(" ✗ "+uikit.ErrorText(r.trace.Err), w)))
	}
	return lines
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

func stageLine(st *uikit.Styles, stage ingest.Stage, s ingest.StageRecord, start time.Time, total time.Duration, barW int, slowest bool) string {
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
	line += st.Muted.Render(note)
	if s.Err != nil {
		line += " " + st.Error.Render(uikit.ErrorText(s.Err))
	}
	return line
}
