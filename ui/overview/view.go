package overview

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/query"
	"engram/ui/uikit"
)

// View draws the title, the histogram, its time axis, a row a group and
// the selected bucket's figures.
func (v *Model) View() string {
	st := v.c.Styles
	lines := []string{uikit.Fit(v.title(), v.w)}
	s := v.stats
	switch {
	case s == nil && v.err != nil:
		lines = append(lines, st.Error.Render(uikit.Fit(" ✗ "+uikit.ErrorText(v.err), v.w)))
	case s == nil:
		lines = append(lines, st.Muted.Render(" counting "+v.c.Spin.View()))
	case s.All.Count == 0:
		lines = append(lines, st.Muted.Render(uikit.Fit(v.emptyText(), v.w)))
	default:
		under := v.wrap(v.selection())
		if v.compare {
			under = append(under, v.wrap(v.comparison())...)
		}
		tableH := len(s.Groups) + 2
		chartH := max(3, v.h-len(lines)-tableH-len(under)-2)
		lines = append(lines, v.chart(chartH)...)
		lines = append(lines, v.axis())
		lines = append(lines, v.table()...)
		lines = append(lines, under...)
	}
	return uikit.PadLines(strings.Join(lines, "\n"), v.w, v.h)
}

// wrap lays a line under the table on at most two lines of the width:
// the figures and changes at its end are cut only past the second.
func (v *Model) wrap(s string) []string {
	lines := strings.Split(ansi.Wrap(s, max(10, v.w), " "), "\n")
	if len(lines) > 2 {
		lines = []string{lines[0], strings.Join(lines[1:], " ")}
	}
	for i, l := range lines {
		if i > 0 {
			l = " " + l // under the first line's leading space
		}
		lines[i] = uikit.Fit(l, v.w)
	}
	return lines
}

func (v *Model) title() string {
	st := v.c.Styles
	t := st.Title.Render(" Overview") + st.Muted.Render(fmt.Sprintf("  last %s · split by %s", spanText(v.Span()), v.By()))
	if s := v.stats; s != nil {
		t += st.Muted.Render(" · every " + spanText(s.Every))
	}
	if v.expr != "" {
		t += st.Muted.Render(" · ") + st.Accent.Render("/"+uikit.OneLine(v.expr))
	}
	switch {
	case v.loading:
		t += " " + v.c.Spin.View()
	case v.err != nil && v.stats != nil:
		t += st.Error.Render(" ✗ " + uikit.ErrorText(v.err))
	case v.stats != nil && v.stats.Approximate:
		t += st.Muted.Render(" · percentiles approximate")
	}
	return t
}

func (v *Model) emptyText() string {
	t := " no events in the last " + spanText(v.Span())
	more := "- zooms out"
	if v.span == len(spans)-1 { // nothing wider to offer: say where older events are
		t += " (the widest range)"
		more = "the stream's G and :time reach older ones"
	}
	if v.expr != "" {
		return t + " matching the filter: esc clears it, " + more
	}
	return t + ": " + more
}

// glyphs tell the groups apart without colour; the last is (other)'s.
var glyphs = []string{"█", "▓", "▒", "░", "▚", "·"}

// groupStyle is the colour of group g: outcomes by meaning, others by
// place.
func (v *Model) groupStyle(g int) lipgloss.Style {
	st := v.c.Styles
	s := v.stats
	if s.Groups[g] == query.GroupOther || s.Groups[g] == query.GroupNone {
		return st.Muted
	}
	if s.By == query.ByOutcome {
		switch s.Groups[g] {
		case query.OutcomeOK:
			return st.Success
		case query.OutcomeFailed:
			return st.Error
		}
		return st.Muted
	}
	cycle := []lipgloss.Style{st.Accent, st.Phase[0], st.Phase[1], st.Phase[2], st.Warning}
	return cycle[g%len(cycle)]
}

func (v *Model) glyph(g int) string {
	if v.stats.Groups[g] == query.GroupOther {
		return glyphs[len(glyphs)-1]
	}
	return glyphs[g%(len(glyphs)-1)]
}

// axisW is the width of the count labels left of the chart.
const axisW = 7

// colW is the columns a bucket takes.
func (v *Model) colW() int {
	return max(1, (v.w-axisW)/max(1, len(v.stats.Buckets)))
}

// chart is the histogram, h lines: a column a bucket, its cells filled
// from the bottom by the groups in order, a cell going to the group
// whose part of the stack covers the cell's middle. A bucket with any
// document shows at least one cell.
func (v *Model) chart(h int) []string {
	s := v.stats
	var peak int64
	for _, b := range s.Buckets {
		peak = max(peak, b.All.Count)
	}
	cw := v.colW()
	lines := make([]string, h)
	for r := range h {
		row := h - 1 - r // 0 is the bottom
		var b strings.Builder
		label := ""
		switch r {
		case 0:
			label = uikit.Thousands(peak)
		case h - 1:
			label = "0"
		}
		b.WriteString(v.c.Styles.Muted.Render(uikit.FitRight(label, axisW-1) + " "))
		for _, bk := range s.Buckets {
			b.WriteString(widen(v.cell(bk, row, h, peak), cw))
		}
		lines[r] = b.String()
	}
	return lines
}

// widen repeats a drawn cell to fill a bucket cw columns wide, with a
// gap of one column between buckets wide enough to spare it.
func widen(cell string, cw int) string {
	if cw >= 3 {
		return strings.Repeat(cell, cw-1) + " "
	}
	return strings.Repeat(cell, cw)
}

// cell is the glyph of bucket bk at row (0 the bottom) of h rows.
func (v *Model) cell(bk query.Bucket, row, h int, peak int64) string {
	if bk.All.Count == 0 || peak == 0 {
		return " "
	}
	mid := (float64(row) + 0.5) * float64(peak) / float64(h)
	if row > 0 && float64(bk.All.Count) < mid {
		return " "
	}
	if len(v.stats.Groups) == 0 {
		return v.c.Styles.Accent.Render("█")
	}
	var cum float64
	for g := range v.stats.Groups {
		cum += float64(bk.Groups[g].Count)
		if cum >= mid || g == len(v.stats.Groups)-1 {
			return v.groupStyle(g).Render(v.glyph(g))
		}
	}
	return " "
}

// axis marks the selected bucket under the chart, with the range's ends.
func (v *Model) axis() string {
	s := v.stats
	cw := v.colW()
	i := v.bucket()
	marks := []rune(strings.Repeat("─", len(s.Buckets)*cw))
	if i >= 0 {
		marks[i*cw] = '▲'
	}
	long := s.Until.Sub(s.Since) > 24*time.Hour || s.Since.Local().YearDay() != s.Until.Local().YearDay()
	left, right := edgeText(s.Since, long), edgeText(s.Until, long)
	line := uikit.FitRight("", axisW) + string(marks)
	axis := v.c.Styles.Muted.Render(uikit.Fit(line, v.w))
	labels := uikit.FitRight("", axisW) + left
	gap := axisW + len(s.Buckets)*cw - uikit.Width(labels) - uikit.Width(right)
	if gap > 0 {
		labels += strings.Repeat(" ", gap) + right
	}
	return axis + "\n" + v.c.Styles.Muted.Render(uikit.Fit(labels, v.w))
}

// table is a row for all documents and one a group, the selected one
// highlighted, each with its figures over the range and its trend.
func (v *Model) table() []string {
	st := v.c.Styles
	s := v.stats
	nameW := 16
	head := fmt.Sprintf("  %-*s %8s %6s %7s %7s %7s %6s %5s  %s", nameW, v.By(), "events", "fail%", "p50", "p95", "p99", "reward", "imp", "trend")
	lines := []string{st.Table.Head.Render(uikit.Fit(head, v.w))}
	row := func(g int, mark, name string, a query.Agg, count func(query.Bucket) int64) string {
		counts := make([]int64, len(s.Buckets))
		for i, b := range s.Buckets {
			counts[i] = count(b)
		}
		line := fmt.Sprintf(" %s%-*s %8s %5.1f%% %7s %7s %7s %6.2f %5.2f  ", mark, nameW, uikit.Fit(name, nameW),
			uikit.Thousands(a.Count), 100*a.FailureRate(), latText(a, a.Latency.P50), latText(a, a.Latency.P95),
			latText(a, a.Latency.P99), a.Reward.Mean, a.Importance.Mean)
		if room := v.w - uikit.Width(line); room >= 4 { // the newest buckets that fit
			line += sparkline(counts[max(0, len(counts)-room):])
		}
		line = uikit.Fit(line, v.w)
		if g == v.group {
			return st.Selected.Render(line)
		}
		return line
	}
	lines = append(lines, row(-1, " ", "all", s.All, func(b query.Bucket) int64 { return b.All.Count }))
	for g, name := range s.Groups {
		mark := v.glyph(g)
		if g != v.group {
			mark = v.groupStyle(g).Render(mark)
		}
		lines = append(lines, row(g, mark, uikit.Clean(name), s.Total[g], func(b query.Bucket) int64 { return b.Groups[g].Count }))
	}
	return lines
}

// selection is the selected bucket's and group's figures, and what enter
// does with them.
func (v *Model) selection() string {
	s := v.stats
	i := v.bucket()
	if i < 0 {
		return ""
	}
	b := s.Buckets[i]
	a, who := b.All, ""
	if v.group >= 0 {
		a, who = b.Groups[v.group], " · "+uikit.Clean(s.Groups[v.group])
	}
	events := uikit.Thousands(a.Count) + " events"
	if a.Count == 1 {
		events = "1 event"
	}
	t := fmt.Sprintf(" %s–%s%s: %s, %s failed (%.1f%%)", timeText(b.Start, s.Every), timeText(b.Start.Add(s.Every), s.Every),
		who, events, uikit.Thousands(a.Failures), 100*a.FailureRate())
	if a.Latency.N > 0 {
		t += fmt.Sprintf(" · p50 %s p95 %s p99 %s", latText(a, a.Latency.P50), latText(a, a.Latency.P95), latText(a, a.Latency.P99))
	}
	if uikit.Width(t) <= v.w && uikit.Width(t+" · enter: open") > v.w {
		return v.c.Styles.Muted.Render(t) // the footer names enter: no second line for it
	}
	return v.c.Styles.Muted.Render(t + " · enter: open")
}

// comparison is how the selected bucket (and group) differs from the
// bucket before it, measure by measure, worse and better said.
func (v *Model) comparison() string {
	s, i := v.stats, v.bucket()
	if i < 1 {
		return v.c.Styles.Muted.Render(" c: no bucket before this one to compare with")
	}
	pick := func(b query.Bucket) query.Agg {
		if v.group >= 0 {
			return b.Groups[v.group]
		}
		return b.All
	}
	changes, small := query.CompareAggs(pick(s.Buckets[i-1]), pick(s.Buckets[i]))
	if small != "" {
		return v.c.Styles.Muted.Render(" vs the bucket before: " + small)
	}
	parts := []string{}
	for _, c := range changes {
		if !c.Known || c.Delta == 0 || c.Measure == query.MeasureImportance || c.Measure == query.MeasureP50 {
			continue
		}
		parts = append(parts, v.changeText(c))
	}
	if len(parts) == 0 {
		return v.c.Styles.Muted.Render(" vs the bucket before: no change")
	}
	return v.c.Styles.Muted.Render(" vs the bucket before: ") + strings.Join(parts, v.c.Styles.Muted.Render(" · "))
}

// changeText is one change, its arrow coloured by its verdict (and named,
// for NO_COLOR).
func (v *Model) changeText(c query.Change) string {
	st := v.c.Styles
	arrow := "▲"
	if c.Delta < 0 {
		arrow = "▼"
	}
	var d string
	switch {
	case c.Measure == query.MeasureEvents:
		d = fmt.Sprintf("%+.0f", c.Delta)
	case c.Measure == query.MeasureFailureRate:
		d = fmt.Sprintf("%+.1f pts", 100*c.Delta)
	case strings.HasPrefix(c.Measure, "latency"):
		d = fmt.Sprintf("%+.0fms", c.Delta)
	default:
		d = fmt.Sprintf("%+.2f", c.Delta)
	}
	t := c.Measure + " " + arrow + d
	switch {
	case c.Worse:
		return st.Error.Render(t + " worse")
	case c.Better:
		return st.Success.Render(t + " better")
	}
	return st.Muted.Render(t)
}

// sparkline draws counts scaled to their largest, one glyph each; an
// empty bucket is a space, so gaps stand out.
func sparkline(vs []int64) string {
	blocks := []rune("▁▂▃▄▅▆▇█")
	var top int64
	for _, v := range vs {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range vs {
		if v <= 0 {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(blocks[min(len(blocks)-1, int((v*int64(len(blocks))-1)/top))])
	}
	return b.String()
}

func latText(a query.Agg, ms float64) string {
	if a.Latency.N == 0 {
		return "-"
	}
	if ms >= 1000 {
		return fmt.Sprintf("%.1fs", ms/1000)
	}
	return fmt.Sprintf("%.0fms", ms)
}

// timeText is a bucket boundary as precise as the buckets are.
func timeText(t time.Time, every time.Duration) string {
	t = t.Local()
	if every >= 24*time.Hour {
		return t.Format("Jan 02")
	}
	if every >= time.Hour {
		return t.Format("Jan 02 15:04")
	}
	return t.Format("15:04")
}

// edgeText is an end of the range, with its day when the range spans days.
func edgeText(t time.Time, long bool) string {
	if long {
		return t.Local().Format("Jan 02 15:04")
	}
	return t.Local().Format("15:04")
}

// spanText is a duration as people say it: 24h, 7d, 15m.
func spanText(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	if v.stats == nil || v.stats.All.Count == 0 {
		if v.span == len(spans)-1 {
			return []key.Binding{keyZoomIn, keySplit}
		}
		return []key.Binding{keyZoomOu, keySplit}
	}
	return []key.Binding{keyBucket, keyGroup, keyOpen, keyZoomIn, keyZoomOu, keySplit}
}

// FullHelp returns every key of the view.
func (v *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{{keyBucket, keyEnds, keyGroup}, {keyOpen, keyZoomIn, keyZoomOu, keySplit, keyCompare, keyReload}}
}
