package stream

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"engram/model"
	"engram/ui/uikit"
)

// streamCols is the width of each stream column at one window width. A
// zero width hides the column: narrow windows drop turn, then agent.
type streamCols struct {
	time, typ, agent, turn, summary, imp, lat int
}

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
	used := uikit.GutterW + 1 + c.time + 1 + 1 + 1 + c.typ + 1 + c.imp + 1 + 1 + 1
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
	parts := []string{strings.Repeat(" ", uikit.GutterW-1), uikit.Fit("time", c.time), " ", uikit.Fit("type", c.typ)}
	if c.agent > 0 {
		parts = append(parts, uikit.Fit("agent", c.agent))
	}
	if c.turn > 0 {
		parts = append(parts, uikit.Fit("turn", c.turn))
	}
	parts = append(parts, uikit.Fit("summary", c.summary), uikit.Fit("imp", c.imp), "✓")
	if c.lat > 0 {
		title := "latency"
		if c.lat < len(title) {
			title = "took"
		}
		parts = append(parts, uikit.FitRight(title, c.lat))
	}
	return strings.Join(parts, " ")
}

// streamRow draws one document. Each cell is cleaned before it is
// measured, so escapes in event text never reach the terminal and wide
// characters are counted by their cells.
func (v *Model) streamRow(d *model.IndexDoc, c streamCols, selected bool, now time.Time) string {
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
	if v.c.Missing[d.EventID] {
		miss = paint("!", st.Error)
	}
	ph := d.Phase()
	parts := []string{
		gut + miss,
		paint(uikit.Fit(uikit.FormatTime(d.Timestamp, now, v.c.Opts.Location, c.time), c.time), st.Muted),
		paint(uikit.PhaseGlyph(ph), st.Phase[ph]),
		uikit.Fit(uikit.Clean(d.EventType), c.typ),
	}
	if c.agent > 0 {
		parts = append(parts, uikit.Fit(uikit.Clean(d.AgentID), c.agent))
	}
	if c.turn > 0 {
		parts = append(parts, paint(uikit.Fit(uikit.Clean(d.TurnKey()), c.turn), st.Muted))
	}
	parts = append(parts,
		uikit.Fit(uikit.Clean(d.Summary), c.summary),
		paint(uikit.Bar(d.ImportanceScore, c.imp), st.Accent),
		paint(uikit.SuccessMark(d.Success), uikit.SuccessStyle(st, d.Success)),
	)
	if c.lat > 0 {
		parts = append(parts, paint(uikit.FitRight(uikit.FormatLatency(d.LatencyMs), c.lat), st.Muted))
	}
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(line)
	}
	return line
}
