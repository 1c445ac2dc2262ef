package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/ingest"
	"engram/model"
)

// clean makes event text safe for the terminal and puts it on one line:
// controls, escape sequences and bidi overrides come out escaped.
func clean(s string) string { return model.Printable(s, false) }

// fit truncates s (already clean) to w cells, adding … when cut, and pads
// it with spaces to exactly w cells. Wide characters count double.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// fitRight is fit aligned right.
func fitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// trunc cuts s to at most w cells, without padding.
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// padLines makes s exactly h lines, each cut or padded to w cells, so a
// view always fills the area it was given.
func padLines(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lw := ansi.StringWidth(l)
		if lw > w {
			l = ansi.Truncate(l, w, "")
			lw = ansi.StringWidth(l)
		}
		lines[i] = l + strings.Repeat(" ", max(0, w-lw))
	}
	for len(lines) < h {
		lines = append(lines, strings.Repeat(" ", w))
	}
	return strings.Join(lines, "\n")
}

// wrapText wraps clean text to w cells, keeping its own line breaks.
func wrapText(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		para = clean(strings.ReplaceAll(para, "\t", "    "))
		wrapped := ansi.Wrap(para, w, " /")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// phaseGlyph marks the phase of an event type.
func phaseGlyph(p model.Phase) string {
	switch p {
	case model.PhaseAction:
		return "▸"
	case model.PhaseOutcome:
		return "◆"
	}
	return "○"
}

// fmtTime shows a timestamp in loc within w cells: the time of day for
// today's; for older ones the date and, given 11 cells, the minute (like
// ls -l); "?" when it does not parse.
func fmtTime(ts string, now time.Time, loc *time.Location, w int) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "?"
	}
	t, now = t.In(loc), now.In(loc)
	switch {
	case t.YearDay() == now.YearDay() && t.Year() == now.Year():
		return t.Format("15:04:05")
	case w >= 11 && t.Year() == now.Year():
		return t.Format("01-02 15:04")
	case w >= 11:
		return t.Format("2006-01-02")
	case t.Year() == now.Year():
		return t.Format("Jan 02")
	}
	return t.Format("2006-01")
}

// fmtLatency shows milliseconds compactly.
func fmtLatency(ms *int64) string {
	if ms == nil {
		return ""
	}
	return fmtMillis(float64(*ms))
}

func fmtMillis(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.0fm", ms/60000)
}

func fmtDuration(d time.Duration) string { return ingest.FormatDuration(d) }

var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws v in [0,1] as a bar w cells long, in eighths of a cell.
func bar(v float64, w int) string {
	v = max(0, min(1, v))
	n := int(v*float64(w*8) + 0.5)
	s := strings.Repeat("█", n/8) + eighths[n%8]
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

// successMark is ✓, ✗ or blank for unknown.
func successMark(ok *bool) string {
	switch {
	case ok == nil:
		return " "
	case *ok:
		return "✓"
	}
	return "✗"
}

// width is the display width of s (styles and wide characters counted).
func width(s string) int { return lipgloss.Width(s) }
