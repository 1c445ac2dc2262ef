package topics

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"

	"engram/ui/uikit"
)

// View draws the title, the topic table and the newest messages, or the
// JSON of the message opened.
func (v *Model) View() string {
	if v.c.Deps.Bus == nil {
		return uikit.PadLines(v.needs(), v.w, v.h)
	}
	if v.pane != nil {
		return uikit.PadLines(v.paneTitle()+"\n\n"+v.pane.View(), v.w, v.h)
	}
	lines := append([]string{v.title()}, v.table()...)
	lines = append(lines, v.columns())
	// The rows come each after a line break (list.Cursor.Draw).
	body := strings.Join(lines, "\n") + v.rows() + "\n" + v.position()
	return uikit.PadLines(body, v.w, v.h)
}

// needs is the view without a bus: what it takes to have one.
func (v *Model) needs() string {
	st := v.c.Styles
	var lines []string
	for _, l := range uikit.WrapText("No event bus to watch. Set kafka.brokers (--kafka-brokers or KAFKA_BROKERS) to watch a deployment's topics, or open a data directory (--data) to watch its topic files.", max(20, v.w-4)) {
		lines = append(lines, "  "+l)
	}
	return "\n" + st.Title.Render("  Topics") + "\n\n" + st.Muted.Render(strings.Join(lines, "\n"))
}

func (v *Model) title() string {
	st := v.c.Styles
	s := st.Title.Render(" Topics") + st.Muted.Render(" · "+uikit.Clean(v.c.Deps.Bus.Where()))
	if g := v.stats.Group; g != "" {
		s += st.Muted.Render(" · group " + uikit.Clean(g))
		if v.stats.GroupState != "" {
			s += st.Muted.Render(fmt.Sprintf(" (%s, %s)", uikit.Clean(v.stats.GroupState), uikit.Plural(v.stats.Members, "member")))
		}
	}
	return uikit.Trunc(s, v.w)
}

// Widths of the topic table's number columns.
const (
	partsW = 5
	endW   = 12
	rateW  = 8
	lagW   = 10
)

// table is the column titles and a line per topic.
func (v *Model) table() []string {
	st := v.c.Styles
	nameW := max(10, min(44, v.w-partsW-endW-rateW-lagW-6))
	head := " " + uikit.Fit("topic", nameW) + uikit.FitRight("parts", partsW+1) + uikit.FitRight("end offsets", endW+1) +
		uikit.FitRight("rate/s", rateW+1) + uikit.FitRight("lag", lagW+1)
	// What is left of a wide window shows each partition's end offset.
	perW := v.w - uikit.Width(head) - 3
	if perW >= 12 {
		head += "   by partition"
	}
	out := []string{st.Header.Render(uikit.Fit(head, v.w))}
	byName := map[string]uikit.TopicStats{}
	for _, t := range v.stats.Topics {
		byName[t.Name] = t
	}
	for i, t := range v.topics() {
		name := uikit.Fit(uikit.Clean(t.Name), nameW)
		if i == v.only {
			name = st.Accent.Render(name)
		}
		s, ok := byName[t.Name]
		switch {
		case !ok && v.serr != nil:
			out = append(out, " "+name+st.Error.Render(uikit.Trunc(" "+uikit.ErrorText(v.serr), v.w-nameW-2)))
		case !ok:
			out = append(out, " "+name+st.Muted.Render(uikit.FitRight("…", partsW+1)))
		case s.Err != nil:
			out = append(out, " "+name+st.Error.Render(uikit.Trunc(" "+uikit.ErrorText(s.Err), v.w-nameW-2)))
		default:
			out = append(out, " "+name+v.numbers(s)+perPartition(s.Ends, perW))
		}
	}
	if g := v.stats.GroupErr; g != nil {
		return append(out, st.Warning.Render(uikit.Trunc(" group lag unknown: "+uikit.ErrorText(g), v.w)))
	}
	return append(out, "")
}

// perPartition is the partitions' end offsets in w cells ("" when
// narrower than 12).
func perPartition(ends []int64, w int) string {
	if w < 12 || len(ends) == 0 {
		return ""
	}
	parts := make([]string, len(ends))
	for i, e := range ends {
		parts[i] = strconv.FormatInt(e, 10)
	}
	return "   " + uikit.Trunc(strings.Join(parts, " "), w)
}

func (v *Model) numbers(s uikit.TopicStats) string {
	st := v.c.Styles
	rate := "—"
	if r, ok := v.rate(s.Name); ok {
		rate = strconv.FormatFloat(r, 'f', 1, 64)
	}
	lag := st.Muted.Render(uikit.FitRight("—", lagW+1))
	if s.Lag >= 0 {
		style := st.Success
		if s.Lag > 0 {
			style = st.Warning
		}
		lag = style.Render(uikit.FitRight(uikit.Thousands(s.Lag), lagW+1))
	}
	return uikit.FitRight(strconv.Itoa(s.Partitions), partsW+1) + uikit.FitRight(uikit.Thousands(s.End), endW+1) +
		uikit.FitRight(rate, rateW+1) + lag
}

// The message columns; traceparent shows from tpFrom cells on.
const (
	timeW  = 8
	placeW = 10
	sizeW  = 6
	tpW    = 22
	tpFrom = 110
)

// topicW is the topic column: the part the topic plays (the table above
// names it in full).
func (v *Model) topicW() int { return 8 }
func (v *Model) keyW() int   { return min(28, max(12, v.w/6)) }

func (v *Model) columns() string {
	s := " " + uikit.Fit("time", timeW) + " " + uikit.Fit("topic", v.topicW()) + " " + uikit.Fit("p@offset", placeW) + " " +
		uikit.Fit("key", v.keyW()) + " " + uikit.FitRight("size", sizeW) + " "
	if v.w >= tpFrom {
		s += uikit.Fit("traceparent", tpW) + " "
	}
	return v.c.Styles.Header.Render(uikit.Fit(s+"value", v.w))
}

func (v *Model) rows() string {
	rows := v.shown()
	if len(rows) == 0 {
		st := v.c.Styles.Muted
		if v.watch == nil && v.werr != nil {
			st = v.c.Styles.Error
		}
		lines := uikit.WrapText(v.waiting(), max(10, v.w-2))
		lines = lines[:min(len(lines), v.rowsH())]
		out := ""
		for _, l := range lines {
			out += "\n " + st.Render(l)
		}
		return out + strings.Repeat("\n", v.rowsH()-len(lines))
	}
	return v.cur.Draw(len(rows), func(i int, sel bool) string { return v.row(&rows[i], sel) })
}

// waiting says why no message shows.
func (v *Model) waiting() string {
	switch {
	case v.werr != nil && v.watch == nil:
		return "the watch could not start: " + uikit.ErrorText(v.werr) + " (tried again every 5 s; r now)"
	case v.werr != nil:
		return ""
	case v.watch == nil:
		return "starting the watch…"
	case v.only >= 0:
		return "no message of " + uikit.Clean(v.topics()[v.only].Name) + " yet (t shows the next topic)"
	}
	return "no message yet: the newest of each partition, and each new one, show here"
}

func (v *Model) row(m *uikit.BusMessage, sel bool) string {
	st := v.c.Styles
	when := ""
	if !m.Time.IsZero() {
		when = m.Time.In(v.c.Opts.Location).Format("15:04:05")
	}
	place := fmt.Sprintf("%d@%d", m.Partition, m.Offset)
	// The key cut in the middle: event ids share their start and differ at the end.
	key := uikit.TruncMiddle(uikit.Clean(m.Key), v.keyW())
	s := " " + uikit.Fit(when, timeW) + " " + uikit.Fit(uikit.Clean(v.label(m.Topic)), v.topicW()) + " " + uikit.Fit(place, placeW) + " " +
		uikit.Fit(key, v.keyW()) + " " + uikit.FitRight(size(len(m.Value)), sizeW) + " "
	if v.w >= tpFrom {
		s += uikit.Fit(uikit.TruncMiddle(uikit.Clean(m.Header("traceparent")), tpW), tpW) + " "
	}
	s = uikit.Fit(s+uikit.OneLine(string(m.Value)), v.w)
	if sel {
		return st.Selected.Render(s)
	}
	return s
}

// label is a topic's part, or its name when it plays none.
func (v *Model) label(topic string) string {
	if t := v.topicOf(topic); t.Role != "" {
		return t.Role
	}
	return topic
}

func size(n int) string {
	if n < 10000 {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(n>>10) + "k"
}

// position is the line under the rows: where the selection is, and
// whether new messages show (following) or are held (paused).
func (v *Model) position() string {
	st := v.c.Styles
	rows := v.shown()
	at := fmt.Sprintf(" %s of %s", uikit.Thousands(int64(min(v.cur.Sel()+1, len(rows)))), uikit.Plural(len(rows), "message"))
	if v.only >= 0 {
		at += " of " + uikit.Clean(v.topics()[v.only].Name)
	}
	state := st.Success.Render("● following")
	if !v.following {
		state = st.Warning.Render("‖ paused")
		if len(v.held) > 0 {
			state += st.Warning.Render(" · " + uikit.Thousands(int64(len(v.held))) + " new")
		}
	}
	line := st.Muted.Render(at) + "  " + state
	if v.werr != nil && v.watch != nil {
		line += "  " + st.Error.Render(uikit.ErrorText(v.werr))
	}
	return uikit.Trunc(line, v.w)
}

func (v *Model) paneTitle() string {
	st := v.c.Styles
	m := v.paneOf
	return uikit.Trunc(st.Title.Render(" Message")+st.Muted.Render(fmt.Sprintf(" · %s[%d]@%d · esc back", uikit.Clean(m.Topic), m.Partition, m.Offset)), v.w)
}

// ShortHelp is the footer's keys for what the view shows now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.pane != nil {
		return []key.Binding{km.Move, km.Fold, km.Back}
	}
	if v.werr != nil && v.watch == nil {
		return []key.Binding{retryKey(), km.TopicNext}
	}
	return []key.Binding{km.Move, km.Enter, km.Pause, km.TopicNext}
}

// FullHelp is every key of the view now.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	if v.pane != nil {
		return [][]key.Binding{km.ListKeys(), {km.Fold, km.Expand, km.Collapse, km.ExpandAll, km.CollapseAll, km.Back}}
	}
	acts := []key.Binding{openKey(), km.Pause, km.TopicNext}
	if v.werr != nil && v.watch == nil {
		acts = append(acts, retryKey())
	}
	return [][]key.Binding{km.ListKeys(), acts}
}

// HelpNote is the help's word on the columns: what a message's time is
// (the bus says) and how the rate is measured.
func (v *Model) HelpNote() string {
	if v.c.Deps.Bus == nil {
		return ""
	}
	return v.c.Deps.Bus.TimeNote() + ".\n" + fmt.Sprintf("rate/s: messages per second over the last %s (end offsets read every %s); — until two readings.",
		uikit.FormatDuration(rateWindow), uikit.FormatDuration(statsPoll))
}

// retryKey is r while the watch could not start.
func retryKey() key.Binding { return uikit.Binding("r", "start the watch again", "r") }

// openKey says what enter does here.
func openKey() key.Binding {
	return uikit.Binding("enter", "open: a notification's event, else the message's JSON", "enter")
}
