package stream

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/model"
	"engram/ui/uikit"
)

// streamCols is the width of each stream column at one window width. A
// zero width hides the column: narrow windows drop turn, then agent.
type streamCols struct {
	time, typ, agent, turn, summary, imp, lat int
}

// Bounds of the columns sized to their content: the floor a column
// shrinks to for the summary's sake, the cap it never grows past.
const (
	typFloor, typCap     = 8, 16
	agentFloor, agentCap = 6, 14
	turnFloor, turnCap   = 7, 16
)

// layoutStream sizes the columns to the rows shown and the width: type,
// agent and turn as wide as their widest value (within their bounds),
// the time wide enough for a date when a row is not today's, and the
// summary the rest, at least a fifth of the width (and 16 cells) if the
// others can shrink that far.
func layoutStream(w int, rows []*model.IndexDoc, today func(string) bool) streamCols {
	c := streamCols{time: 8, imp: 4, lat: 6, typ: typFloor, agent: 5, turn: 4}
	for _, d := range rows {
		c.typ = max(c.typ, min(typCap, uikit.Width(uikit.Clean(d.EventType))))
		c.agent = max(c.agent, min(agentCap, uikit.Width(uikit.Clean(d.AgentID))))
		c.turn = max(c.turn, min(turnCap, uikit.Width(uikit.Clean(d.TurnKey()))))
		if w >= 72 && !today(d.Timestamp) {
			c.time = 11
		}
	}
	if w >= 120 {
		c.imp = 5
	}
	// Narrower windows drop the importance bar first (the detail has the
	// number), then the turn, then the agent: the turn tells rows of one
	// agent apart, the bar only ranks them.
	if w < 72 {
		c.imp = 0
	}
	if w < 60 {
		c.turn = 0
	}
	if w < 54 {
		c.agent = 0
	}
	if w < 48 {
		c.lat = 0
	}
	c.summary = max(0, w-c.used())
	for c.summary < max(16, w/5) && c.shrink() {
		c.summary = max(0, w-c.used())
	}
	return c
}

// used is every shown column but the summary, each with the space that
// separates it from the next: gutter, time, phase, type, imp, success.
func (c streamCols) used() int {
	used := uikit.GutterW + 1 + c.time + 1 + 1 + 1 + c.typ + 1 + 1 + 1
	for _, x := range []int{c.agent, c.turn, c.imp, c.lat} {
		if x > 0 {
			used += x + 1
		}
	}
	return used
}

// shrink takes a cell from the widest of type, agent and turn still above
// its floor; false when none is.
func (c *streamCols) shrink() bool {
	cols := []struct {
		w     *int
		floor int
	}{{&c.turn, turnFloor}, {&c.agent, agentFloor}, {&c.typ, typFloor}}
	var widest *int
	for _, x := range cols {
		if *x.w > x.floor && (widest == nil || *x.w > *widest) {
			widest = x.w
		}
	}
	if widest == nil {
		return false
	}
	*widest--
	return true
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
	parts = append(parts, uikit.Fit("summary", c.summary))
	if c.imp > 0 {
		parts = append(parts, uikit.Fit("imp", c.imp))
	}
	parts = append(parts, "✓")
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
	switch {
	case v.c.Missing[d.EventID]:
		miss = paint("!", st.Error)
	case model.SourceOf(d.Source, d.SessionID) == model.SourceSystem:
		miss = paint("s", st.Accent) // the source system's own work (system: sessions)
	case d.Source == model.SourceAmbient:
		miss = paint("a", st.Muted)
	}
	ph := d.Phase()
	parts := []string{
		gut + miss,
		paint(uikit.Fit(uikit.FormatTime(d.Timestamp, now, v.c.Opts.Location, c.time), c.time), st.Muted),
		paint(uikit.PhaseGlyph(ph), st.Phase[ph]),
		uikit.Fit(uikit.Clean(d.EventType), c.typ),
	}
	if c.agent > 0 {
		// Cut in the middle too: "agent-a" and "agent-b" differ at the end.
		parts = append(parts, uikit.Fit(uikit.TruncMiddle(uikit.Clean(d.AgentID), c.agent), c.agent))
	}
	if c.turn > 0 {
		// Cut in the middle: turn keys share their start and differ at the end.
		parts = append(parts, paint(uikit.Fit(uikit.TruncMiddle(uikit.Clean(d.TurnKey()), c.turn), c.turn), st.Muted))
	}
	summary := uikit.Fit(scrolled(uikit.OneLine(d.Summary), v.hscroll), c.summary)
	if v.find != "" && !selected { // the selected row is drawn in one style
		summary = uikit.Highlight(summary, v.find, st.Match)
	}
	parts = append(parts, summary)
	if c.imp > 0 {
		parts = append(parts, paint(uikit.Bar(d.ImportanceScore, c.imp), st.Accent))
	}
	parts = append(parts, paint(uikit.SuccessMark(d.Success), uikit.SuccessStyle(st, d.Success)))
	if c.lat > 0 {
		parts = append(parts, paint(uikit.FitRight(uikit.FormatLatency(d.LatencyMs), c.lat), st.Muted))
	}
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(line)
	}
	return line
}

// scrolled is s less its first n cells, marked with "…" when cut.
func scrolled(s string, n int) string {
	if n <= 0 || uikit.Width(s) <= n {
		if n > 0 {
			return ""
		}
		return s
	}
	return "…" + ansi.TruncateLeft(s, n+1, "")
}
