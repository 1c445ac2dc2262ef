package turns

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"engram/query"
	"engram/ui/uikit"
)

// View draws the list, or the chain when one is open.
func (v *Model) View() string {
	if v.chain.open {
		return v.chain.View()
	}
	st := v.c.Styles
	cols := layoutTurns(v.w, v.olderShown())
	var b strings.Builder
	b.WriteString(st.Table.Head.Render(uikit.Fit(turnsHead(cols), v.w)))
	now := v.c.Deps.Now()
	b.WriteString(v.cur.Draw(v.buf.Len(), func(i int, selected bool) string {
		return v.turnRow(v.buf.Row(i), cols, selected, now)
	}))
	pos := fmt.Sprintf(" turn %s of %s loaded", uikit.Thousands(int64(v.cur.Sel()+1)), uikit.Thousands(int64(v.buf.Len())))
	switch {
	case v.loading && !v.loaded: // a reload while following keeps its rows
		pos = " loading turns " + v.c.Spin.View()
	case v.buf.Len() == 0 && v.expr != "":
		// Esc goes back to the stream first, and clears the filter there.
		pos = " no turns match the filter: esc twice clears it"
	case v.buf.Len() == 0:
		pos = " no turns"
	case v.jumped || !v.buf.AtHead():
		pos += " · newer above" // as the stream says it
	}
	pos += " · " + orderName(v.order)
	if v.expr != "" {
		pos += " · filter: " + uikit.Clean(v.expr) + " (whole turns with a match)"
	}
	if v.note != "" && v.buf.Len() > 0 {
		// The whole note when it fits, else the gist (the help has the rest).
		if note := pos + " · " + uikit.Clean(v.note); uikit.Width(note) <= v.w {
			pos = note
		} else {
			pos += " · turns from the archive"
		}
	}
	b.WriteString("\n" + st.Muted.Render(uikit.Fit(pos, v.w)))
	return b.String()
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	if v.chain.open {
		return v.chain.ShortHelp()
	}
	km := v.c.Keys
	if v.buf.Len() == 0 {
		return []key.Binding{km.Filter}
	}
	return []key.Binding{km.Move, v.openKey(), km.Filter}
}

// openKey is enter on a turn, named as the footer and the help both say.
func (v *Model) openKey() key.Binding {
	open := v.c.Keys.Enter
	open.SetHelp(open.Help().Key, "causal chain")
	return open
}

// FullHelp returns every key of the turns, or of the chain when one is open.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	if v.chain.open {
		return [][]key.Binding{km.RankKeys(), v.chain.ShortHelp()} // oldest step first
	}
	return [][]key.Binding{km.ListKeys(), {v.openKey(), km.Pause, v.orderKey()}} // / and esc are among the global keys
}

// turnCols are the widths of the turn list's columns; about, the turn's
// summary, takes what is left (0: no room).
type turnCols struct{ time, key, session, agent, events, fail, dur, imp, about int }

// olderShown: a turn on screen ended before today, so the time column
// needs the date as well as the minute.
func (v *Model) olderShown() bool {
	now := v.c.Deps.Now().In(v.c.Opts.Location)
	from, to := v.cur.Visible(v.buf.Len())
	for i := from; i < to; i++ {
		if last := v.buf.Row(i).Last.In(v.c.Opts.Location); !last.IsZero() && last.YearDay() != now.YearDay() || last.Year() != now.Year() {
			return true
		}
	}
	return false
}

func layoutTurns(w int, dated bool) turnCols {
	c := turnCols{time: 8, session: 12, agent: 10, events: 6, fail: 4, dur: 7, imp: 4}
	if dated && w >= 72 {
		c.time = 11
	}
	if w < 110 { // the summary says more than the session
		c.session = 0
	}
	used := uikit.GutterW + c.time + 1 + c.agent + 1 + c.events + 1 + c.fail + 1 + c.dur + 1 + c.imp + 1
	if c.session > 0 {
		used += c.session + 1
	}
	// The key gets a third of what is left (11 to 24 cells: turn-000001
	// whole, a UUID cut), the summary the rest; too narrow, the key all.
	rest := w - used
	if rest < 30 {
		c.key = max(8, rest)
		return c
	}
	c.key = min(24, max(11, rest/3))
	c.about = rest - c.key - 1
	return c
}

func turnsHead(c turnCols) string {
	parts := []string{" ", uikit.Fit("last", c.time), uikit.Fit("turn", c.key)}
	if c.session > 0 {
		parts = append(parts, uikit.Fit("session", c.session))
	}
	parts = append(parts, uikit.Fit("agent", c.agent), uikit.FitRight("events", c.events), uikit.Fit("fail", c.fail), uikit.FitRight("span", c.dur), uikit.Fit("imp", c.imp))
	if c.about > 0 {
		parts = append(parts, uikit.Fit("about", c.about))
	}
	return strings.Join(parts, " ")
}

func (v *Model) turnRow(t query.TurnSummary, c turnCols, selected bool, now time.Time) string {
	st := v.c.Styles
	gut, fail := " ", uikit.Fit("", c.fail)
	if selected {
		gut = "›"
	}
	if t.AnyFailed {
		fail = uikit.Fit(" ✗", c.fail) // under the middle of "fail"
	}
	ts := ""
	if !t.Last.IsZero() {
		ts = uikit.FormatTime(t.Last.Format(time.RFC3339Nano), now, v.c.Opts.Location, c.time)
	}
	parts := []string{gut, uikit.Fit(ts, c.time), uikit.Fit(uikit.Clean(t.Key), c.key)}
	if c.session > 0 {
		parts = append(parts, uikit.Fit(uikit.Clean(t.SessionID), c.session))
	}
	parts = append(parts, uikit.Fit(uikit.Clean(t.AgentID), c.agent), uikit.FitRight(fmt.Sprint(t.Events), c.events), fail,
		uikit.FitRight(uikit.FormatMillis(float64(t.Last.Sub(t.First).Milliseconds())), c.dur), uikit.Bar(t.MaxImportance, c.imp))
	if c.about > 0 {
		parts = append(parts, uikit.Fit(uikit.Clean(t.Summary), c.about))
	}
	line := strings.Join(parts, " ")
	if selected {
		return st.Selected.Render(line)
	}
	if t.AnyFailed {
		return strings.Replace(line, " ✗ ", " "+st.Error.Render("✗")+" ", 1)
	}
	return line
}
