package session

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/uikit"
)

// Update steps through the turns and takes the answer of the load.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loadedMsg:
		if msg.req == v.req {
			v.s, v.docs, v.err, v.loading, v.sel = msg.s, msg.docs, msg.err, false, msg.sel
			v.follow()
		}
	case tea.KeyPressMsg:
		return v.onKey(msg)
	case tea.MouseWheelMsg:
		v.step(map[bool]int{true: -1, false: 1}[msg.Button == tea.MouseWheelUp])
	}
	return nil
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	page := max(1, v.axisH()-1)
	switch {
	case key.Matches(msg, km.Up):
		v.step(-1)
	case key.Matches(msg, km.Down):
		v.step(1)
	case key.Matches(msg, km.PageUp):
		v.step(-page)
	case key.Matches(msg, km.PageDown):
		v.step(page)
	case key.Matches(msg, km.HalfUp):
		v.step(-max(1, page/2))
	case key.Matches(msg, km.HalfDown):
		v.step(max(1, page/2))
	case key.Matches(msg, km.Home):
		v.step(-v.sel)
	case key.Matches(msg, km.End):
		v.step(v.turns())
	case key.Matches(msg, km.Enter):
		if d := v.Current(); d != nil {
			return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d} }
		}
	}
	return nil
}

func (v *Model) turns() int {
	if v.s == nil {
		return 0
	}
	return len(v.s.Turns)
}

func (v *Model) step(n int) {
	v.sel = min(max(v.sel+n, 0), max(v.turns()-1, 0))
	v.follow()
}

// follow scrolls the axis so that the selected turn, and the gap line
// before it, show.
func (v *Model) follow() {
	lines, at := v.axisLines(v.w)
	if v.sel >= len(at) {
		v.top = 0
		return
	}
	first := at[v.sel]
	if first > 0 && lines[first-1].gap {
		first--
	}
	h := v.axisH()
	switch {
	case first < v.top:
		v.top = first
	case at[v.sel] >= v.top+h:
		v.top = at[v.sel] - h + 1
	}
	v.top = min(max(v.top, 0), max(len(lines)-h, 0))
}

// axisLine is a line of the axis: a turn (turn >= 0) or the gap before one.
type axisLine struct {
	text string
	turn int
	gap  bool
}

// Column widths of a turn's line before its bar.
const (
	offW, idleW, eventsW, latW, outW = 8, 7, 6, 8, 8
)

func keyW(w int) int { return min(28, max(10, w/6)) }

// axisLines are the axis's lines for width w, and the line of each turn.
func (v *Model) axisLines(w int) ([]axisLine, []int) {
	if v.s == nil {
		return nil, nil
	}
	kw := keyW(w)
	barW := max(10, w-2-offW-idleW-kw-eventsW-latW-outW-7-2)
	var out []axisLine
	at := make([]int, len(v.s.Turns))
	for i, t := range v.s.Turns {
		if t.Gap {
			out = append(out, axisLine{text: "  ┄┄ " + fmtMs(t.IdleBeforeMs) + " idle ┄┄", turn: -1, gap: true})
		}
		at[i] = len(out)
		idle := ""
		if i > 0 {
			idle = fmtMs(t.IdleBeforeMs)
		}
		lat := "—"
		if t.LatencyMs != nil {
			lat = fmtMs(*t.LatencyMs)
		}
		text := fmt.Sprintf("%s %s %s %s %s %s %s │%s│", uikit.Fit("+"+fmtMs(t.OffsetMs), offW), uikit.Fit(idle, idleW),
			uikit.Fit(uikit.Clean(t.Key), kw), uikit.FitRight(fmt.Sprint(t.Events), eventsW), uikit.FitRight(lat, latW),
			uikit.Fit(t.Outcome, outW), "", bar(t.OffsetMs, t.DurationMs, v.s.SpanMs, barW))
		out = append(out, axisLine{text: text, turn: i})
	}
	return out, at
}

// stepsH is the height of the selected turn's steps under the axis.
func (v *Model) stepsH() int {
	if v.s == nil || len(v.s.Turns) == 0 {
		return 0
	}
	return min(len(v.s.Turns[v.sel].Steps)+1, max(2, v.h/3))
}

// axisH is the height of the axis: the view less the title, the column
// titles, the steps and the position line.
func (v *Model) axisH() int { return max(1, v.h-3-v.stepsH()) }

// View draws the session's title, the axis of its turns (the selected one
// marked), the selected turn's steps and where the selection is.
func (v *Model) View() string {
	st := v.c.Styles
	switch {
	case v.id == "":
		return uikit.PadLines(st.Muted.Render(" No session yet: g L on an event lays out its session's turns on a time axis."), v.w, v.h)
	case v.loading:
		return uikit.PadLines(st.Title.Render(" Session "+uikit.Clean(v.id))+"\n"+st.Muted.Render(" reading its turns "+v.c.Spin.View()), v.w, v.h)
	case v.err != nil:
		return uikit.PadLines(st.Title.Render(" Session "+uikit.Clean(v.id))+"\n"+st.Error.Render(" ✗ "+uikit.ErrorText(v.err)), v.w, v.h)
	case len(v.s.Turns) == 0:
		return uikit.PadLines(st.Title.Render(" Session "+uikit.Clean(v.id))+"\n"+st.Muted.Render(" no turn of this session is indexed"), v.w, v.h)
	}
	s := v.s
	last := shortTime(s.Last)
	if first := shortTime(s.First); len(first) > 11 && strings.HasPrefix(last, first[:11]) {
		last = last[11:] // the same day: its time alone
	}
	title := st.Title.Render(" Session "+uikit.Clean(s.ID)) + st.Muted.Render(fmt.Sprintf("  %s · %s → %s (%s)",
		uikit.Plural(len(s.Turns), "turn"), shortTime(s.First), last, fmtMs(s.SpanMs)))
	title += st.Muted.Render(agentsText(s.Agents, v.w-uikit.Width(title)))
	kw := keyW(v.w)
	head := st.Table.Head.Render(uikit.Fit(fmt.Sprintf("  %s %s %s %s %s %s  time axis", uikit.Fit("offset", offW), uikit.Fit("idle", idleW),
		uikit.Fit("turn", kw), uikit.FitRight("events", eventsW), uikit.FitRight("latency", latW), uikit.Fit("outcome", outW)), v.w))
	lines, _ := v.axisLines(v.w)
	out := []string{uikit.Fit(title, v.w), head}
	h := v.axisH()
	for i := v.top; i < min(v.top+h, len(lines)); i++ {
		l := lines[i]
		switch {
		case l.gap:
			out = append(out, st.Warning.Render(uikit.Fit(l.text, v.w)))
		case l.turn == v.sel:
			out = append(out, st.Selected.Render(uikit.Fit("› "+l.text, v.w)))
		case s.Turns[l.turn].Outcome == "failed":
			out = append(out, "  "+st.Error.Render(uikit.Fit(l.text, v.w-2)))
		default:
			out = append(out, uikit.Fit("  "+l.text, v.w))
		}
	}
	for len(out) < 2+h {
		out = append(out, "")
	}
	out = append(out, v.steps()...)
	pos := fmt.Sprintf(" turn %d of %d", v.sel+1, len(s.Turns))
	if s.Cut {
		pos += fmt.Sprintf(" · only the newest %d turns", maxTurns)
	}
	return uikit.PadLines(strings.Join(out, "\n"), v.w, v.h-1) + "\n" + st.Muted.Render(uikit.Fit(pos, v.w))
}

// steps are the selected turn's events: offset in the turn, phase, id,
// type, tool, latency and success.
func (v *Model) steps() []string {
	st := v.c.Styles
	t := v.s.Turns[v.sel]
	n := v.stepsH()
	rule := "── steps of " + uikit.Clean(t.Key) + " "
	if n := v.w - uikit.Width(rule); n > 0 {
		rule += strings.Repeat("─", n) // the rule to the edge, not cut with "…"
	}
	out := []string{st.Subtle.Render(uikit.Fit(rule, v.w))}
	for i, s := range t.Steps {
		if len(out) == n-1 && i < len(t.Steps)-1 {
			out = append(out, st.Muted.Render(fmt.Sprintf("    … %d more", len(t.Steps)-i)))
			break
		}
		line := fmt.Sprintf("    %s %s %s %s", uikit.Fit("+"+fmtMs(s.OffsetMs-t.OffsetMs), 9),
			uikit.PhaseGlyph(model.PhaseOf(s.Type)), uikit.Fit(uikit.Clean(s.ID), 24), uikit.Clean(s.Type))
		if s.Tool != "" {
			line += "  " + uikit.Clean(s.Tool)
		}
		if s.LatencyMs != nil {
			line += "  " + fmtMs(*s.LatencyMs)
		}
		if s.Success != nil {
			line += "  " + uikit.SuccessMark(s.Success)
		}
		out = append(out, uikit.SuccessStyle(st, s.Success).Render(uikit.Fit(line, v.w)))
	}
	return out
}

// agentsText is " · " and as many of the agents as fit in w cells whole,
// the rest counted ("+2"): a name cut would name no agent.
func agentsText(agents []string, w int) string {
	for n := len(agents); n > 0; n-- {
		t := " · " + uikit.Clean(strings.Join(agents[:n], ", "))
		if n < len(agents) {
			t += fmt.Sprintf(", +%d", len(agents)-n)
		}
		if uikit.Width(t) <= w {
			return t
		}
	}
	return ""
}

func shortTime(ts string) string {
	t, err := model.ParseTimestamp(ts)
	if err != nil {
		return uikit.Clean(ts)
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// bar is a turn's place on an axis of width columns spanning span ms: at
// least one column wide.
func bar(offset, duration, span int64, width int) string {
	if span <= 0 {
		return "█" + strings.Repeat(" ", width-1)
	}
	from := int(offset * int64(width) / (span + 1))
	to := int((offset + duration) * int64(width) / (span + 1))
	from = min(max(from, 0), width-1)
	to = min(max(to, from+1), width)
	return strings.Repeat(" ", from) + strings.Repeat("█", to-from) + strings.Repeat(" ", width-to)
}

// fmtMs is a duration in milliseconds for people.
func fmtMs(ms int64) string {
	if ms < 0 {
		return "-" + fmtMs(-ms)
	}
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.turns() == 0 {
		return []key.Binding{km.Back}
	}
	return []key.Binding{km.Move, km.Enter, km.Back}
}

// FullHelp returns every key of the view.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.RankKeys(), {km.Enter, km.Back}}
}
