package ui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"engram/model"
)

// streamCols is the width of each stream column at one window width. A
// zero width hides the column: narrow windows drop turn, then agent.
type streamCols struct {
	time, typ, agent, turn, summary, imp, lat int
}

// Fixed parts of a row: the two-cell gutter (selection, archive missing),
// the phase glyph and the success mark.
const gutterW = 2

func layoutStream(w int) streamCols {
	c := streamCols{time: 8, typ: 11, agent: 10, turn: 8, imp: 4, lat: 6}
	if w >= 100 {
		c.time = 11
	}
	if w >= 120 {
		c.typ, c.agent, c.turn, c.imp = 16, 14, 14, 5
	}
	if w < 72 {
		c.turn = 0
	}
	if w < 60 {
		c.agent = 0
	}
	if w < 48 {
		c.lat = 0
	}
	// Every shown column but the summary, each with the space that
	// separates it from the next: gutter, time, phase, type, imp, success.
	used := gutterW + 1 + c.time + 1 + 1 + 1 + c.typ + 1 + c.imp + 1 + 1 + 1
	for _, x := range []int{c.agent, c.turn, c.lat} {
		if x > 0 {
			used += x + 1
		}
	}
	c.summary = max(0, w-used)
	return c
}

// streamHead is the column titles.
func streamHead(c streamCols) string {
	parts := []string{strings.Repeat(" ", gutterW-1), fit("time", c.time), " ", fit("type", c.typ)}
	if c.agent > 0 {
		parts = append(parts, fit("agent", c.agent))
	}
	if c.turn > 0 {
		parts = append(parts, fit("turn", c.turn))
	}
	parts = append(parts, fit("summary", c.summary), fit("imp", c.imp), "✓")
	if c.lat > 0 {
		title := "latency"
		if c.lat < len(title) {
			title = "took"
		}
		parts = append(parts, fitRight(title, c.lat))
	}
	return strings.Join(parts, " ")
}

// streamRow draws one document. Each cell is cleaned before it is
// measured, so escapes in event text never reach the terminal and wide
// characters are counted by their cells.
func (v *streamView) streamRow(d *model.IndexDoc, c streamCols, selected bool, now time.Time) string {
	st := v.c.Styles
	paint := func(s string, style lipgloss.Style) string {
		if selected {
			return s
		}
		return style.Render(s)
	}
	gut := " "
	if selected {
		gut = "›"
	}
	miss := " "
	if v.c.missing[d.EventID] {
		miss = paint("!", st.Error)
	}
	ph := d.Phase()
	parts := []string{
		gut + miss,
		paint(fit(fmtTime(d.Timestamp, now, v.c.Opts.Location, c.time), c.time), st.Muted),
		paint(phaseGlyph(ph), st.Phase[ph]),
		fit(clean(d.EventType), c.typ),
	}
	if c.agent > 0 {
		parts = append(parts, fit(clean(d.AgentID), c.agent))
	}
	if c.turn > 0 {
		parts = append(parts, paint(fit(clean(d.TurnKey()), c.turn), st.Muted))
	}
	parts = append(parts,
		fit(clean(d.Summary), c.summary),
		paint(bar(d.ImportanceScore, c.imp), st.Accent),
		paint(successMark(d.Success), successStyle(st, d.Success)),
	)
	if c.lat > 0 {
		parts = append(parts, paint(fitRight(fmtLatency(d.LatencyMs), c.lat), st.Muted))
	}
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(line)
	}
	return line
}

func successStyle(st *Styles, ok *bool) lipgloss.Style {
	switch {
	case ok == nil:
		return st.Muted
	case *ok:
		return st.Success
	}
	return st.Error
}

// thousands formats n with thin separators: 1,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
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
