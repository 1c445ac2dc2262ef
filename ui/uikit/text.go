package uikit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/ingest"
	"engram/model"
	"engram/query"
)

// Clean makes event text safe for the terminal and puts it on one line:
// controls, escape sequences and bidi overrides come out escaped.
func Clean(s string) string { return model.Printable(s, false) }

// Fit truncates s (already clean) to w cells, adding … when cut, and pads
// it with spaces to exactly w cells. Wide characters count double.
func Fit(s string, w int) string {
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

// FitRight is fit aligned right.
func FitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return Fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// Trunc cuts s to at most w cells, without padding.
func Trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// PadLines makes s exactly h lines, each cut or padded to w cells, so a
// view always fills the area it was given.
func PadLines(s string, w, h int) string {
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

// IndexFold is the rune index of the first term in s, case aside; -1
// when there is none. Rune by rune, so that it indexes s itself (a
// lower-cased copy can have other offsets).
func IndexFold(s, term string) int {
	hay, needle := []rune(strings.ToLower(s)), []rune(strings.ToLower(term))
	if len(hay) != len([]rune(s)) || len(needle) == 0 {
		return -1 // a rune changed its length in lower case: no offset to trust
	}
	for i := 0; i+len(needle) <= len(hay); i++ {
		if string(hay[i:i+len(needle)]) == string(needle) {
			return i
		}
	}
	return -1
}

// Highlight styles every term in s (plain text), case aside.
func Highlight(s, term string, style lipgloss.Style) string {
	var b strings.Builder
	rs, n := []rune(s), len([]rune(term))
	for {
		i := IndexFold(string(rs), term)
		if i < 0 || n == 0 {
			b.WriteString(string(rs))
			return b.String()
		}
		b.WriteString(string(rs[:i]) + style.Render(string(rs[i:i+n])))
		rs = rs[i+n:]
	}
}

// OneLine is text for one line of a list: its line breaks shown as ↵ (as
// the record form shows them), then cleaned like all event text.
func OneLine(s string) string { return Clean(lineBreaks.Replace(s)) }

var lineBreaks = strings.NewReplacer("\r\n", "↵", "\n", "↵", "\r", "↵")

// Plural is n and noun, with an s unless n is one: "1 event", "3 events".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// TruncMiddle cuts s to w cells in its middle: "turn-0004" in 7 is
// "tu…0004", for values that share a start and differ at the end.
func TruncMiddle(s string, w int) string {
	if Width(s) <= w || w < 3 {
		return Trunc(s, w)
	}
	left := (w - 1) / 3
	right := w - 1 - left
	return ansi.Truncate(s, left, "") + "…" + ansi.TruncateLeft(s, Width(s)-right, "")
}

// WrapText wraps clean text to w cells, keeping its own line breaks.
func WrapText(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		para = Clean(strings.ReplaceAll(para, "\t", "    "))
		wrapped := ansi.Wrap(para, w, " /")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// PhaseGlyph marks the phase of an event type.
func PhaseGlyph(p model.Phase) string {
	switch p {
	case model.PhaseAction:
		return "▸"
	case model.PhaseOutcome:
		return "◆"
	}
	return "○"
}

// FormatTime shows a timestamp in loc within w cells: the time of day for
// today's; for older ones the date and, given 11 cells, the minute (like
// ls -l); "?" when it does not parse.
func FormatTime(ts string, now time.Time, loc *time.Location, w int) string {
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

// FormatLatency shows milliseconds compactly.
func FormatLatency(ms *int64) string {
	if ms == nil {
		return ""
	}
	return FormatMillis(float64(*ms))
}

// FormatMillis writes a duration in milliseconds as 850ms, 1.2s or 3m.
func FormatMillis(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.0fms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.0fm", ms/60000)
}

// FormatDuration writes d as ingest.FormatDuration does.
func FormatDuration(d time.Duration) string { return ingest.FormatDuration(d) }

var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Bar draws v in [0,1] as a bar w cells long, in eighths of a cell.
func Bar(v float64, w int) string {
	v = max(0, min(1, v))
	n := int(v*float64(w*8) + 0.5)
	s := strings.Repeat("█", n/8) + eighths[n%8]
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

// SuccessMark is ✓, ✗ or blank for unknown.
func SuccessMark(ok *bool) string {
	switch {
	case ok == nil:
		return " "
	case *ok:
		return "✓"
	}
	return "✗"
}

// Width is the display width of s (styles and wide characters counted).
func Width(s string) int { return lipgloss.Width(s) }

// GutterW is the width of a row's two-cell gutter (selection, archive
// missing); the phase glyph and the success mark are its other fixed parts.
const GutterW = 2

// SuccessStyle is the style of a success mark: muted for unknown.
func SuccessStyle(st *Styles, ok *bool) lipgloss.Style {
	switch {
	case ok == nil:
		return st.Muted
	case *ok:
		return st.Success
	}
	return st.Error
}

// Thousands formats n with thin separators: 1,000,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// JoinH puts blocks of equal height side by side.
func JoinH(blocks ...string) string {
	split := make([][]string, len(blocks))
	h := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		h = max(h, len(split[i]))
	}
	out := make([]string, h)
	for r := range h {
		var b strings.Builder
		for _, s := range split {
			if r < len(s) {
				b.WriteString(s[r])
			}
		}
		out[r] = b.String()
	}
	return strings.Join(out, "\n")
}

// ErrorText is an error made safe and short for one line.
func ErrorText(err error) string {
	s := Clean(err.Error())
	var d *query.LayersDisagreeError
	if errors.As(err, &d) {
		s = Clean(d.Reason)
	}
	return s
}
