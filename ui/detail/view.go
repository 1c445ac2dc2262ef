package detail

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"engram/ui/uikit"
)

// View draws the event's head lines, its JSON and the search line.
func (v *Model) View() string {
	st := v.c.Styles
	if v.doc == nil {
		msg := "No event selected. Pick one in the stream (enter) or in a turn."
		return uikit.PadLines(st.Muted.Render(" "+msg), v.w, v.h)
	}
	var body string
	if v.side {
		sep := strings.TrimSuffix(strings.Repeat(st.Border.Render("│")+"\n", v.left.Height()), "\n")
		body = uikit.JoinH(v.left.View(), sep, v.right.View())
	} else {
		body = v.one.View()
	}
	lines := append(append(append(append([]string{v.title()}, v.facts()...), v.turnLines()...), v.linkLines()...), v.archiveLine(), body, v.searchLine())
	return uikit.PadLines(strings.Join(lines, "\n"), v.w, v.h)
}

func (v *Model) title() string {
	st := v.c.Styles
	d := v.doc
	ph := d.Phase()
	ts := d.Timestamp
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		ts = t.In(v.c.Opts.Location).Format("2006-01-02 15:04:05.000 MST")
	}
	return " " + st.Phase[ph].Render(uikit.PhaseGlyph(ph)+" "+uikit.Clean(d.EventType)) + "  " +
		st.Bold.Render(uikit.Clean(d.EventID)) + "  " + st.Muted.Render(uikit.Clean(ts))
}

// facts are the index document's key fields, on as many lines as the
// width needs: a fact is never cut.
func (v *Model) facts() []string {
	st := v.c.Styles
	d := v.doc
	var parts []string
	add := func(label, val string) {
		if val != "" {
			parts = append(parts, st.Muted.Render(label+" ")+uikit.Clean(val))
		}
	}
	add("agent", d.AgentID)
	add("session", d.SessionID)
	if !v.archTurn.want { // else the chain line names the archive's turn
		add("turn", d.TurnKey())
	}
	add("trace", d.TraceID)
	add("span", v.SpanID())
	add("tool", d.Tool)
	if d.Success != nil {
		parts = append(parts, uikit.SuccessStyle(st, d.Success).Render(uikit.SuccessMark(d.Success)))
	}
	add("latency", uikit.FormatLatency(d.LatencyMs))
	parts = append(parts, st.Muted.Render("imp ")+st.Accent.Render(uikit.Bar(d.ImportanceScore, 4))+fmt.Sprintf(" %.3g", d.ImportanceScore))
	return packParts(parts, st.Subtle.Render(" · "), v.w-1)
}

// packParts joins parts with sep into lines of at most w cells, each
// indented by one.
func packParts(parts []string, sep string, w int) []string {
	var lines []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case uikit.Width(line+sep+p) <= w:
			line += sep + p
		default:
			lines, line = append(lines, " "+line), p
		}
	}
	return append(lines, " "+line)
}

func (v *Model) archiveLine() string {
	st := v.c.Styles
	key := uikit.Clean(v.doc.ObjectStorageKey)
	switch {
	case v.fetching:
		return " " + st.Accent.Render(v.c.Spin.View()) + st.Muted.Render(" fetching archive "+key)
	case v.archErr != nil:
		return " " + st.Error.Render("✗ archive: "+uikit.ErrorText(v.archErr)) + st.Muted.Render(" · r refetch")
	case v.arch != nil:
		legend := ""
		if v.side { // the side-by-side legend counts in the width: cut, it would not explain the +
			legend = " · " + st.JSON.Marker.Render("+") + st.Muted.Render(" only in the archive")
		}
		s := fmt.Sprintf("✓ archive %s · %s bytes", key, uikit.Thousands(v.arch.Size))
		if uikit.Width(s)+uikit.Width(legend)+1 > v.w { // the key is long: y k copies it, the size is the news
			s = fmt.Sprintf("✓ archived · %s bytes", uikit.Thousands(v.arch.Size))
		}
		return " " + st.Success.Render(s) + legend
	}
	return " " + st.Muted.Render("archive "+key)
}

func (v *Model) searchLine() string {
	st := v.c.Styles
	if v.searching {
		if v.input.Value() == "" { // nothing asked yet: "no match" would be wrong
			return " " + v.input.View(st, v.w-24)
		}
		return " " + v.input.View(st, v.w-24) + "  " + st.Muted.Render(v.matchCount())
	}
	if t := v.input.Value(); t != "" {
		return " " + st.Muted.Render("search ") + uikit.Clean(t) + "  " + st.Muted.Render(v.matchCount()+" · n/N")
	}
	return ""
}

func (v *Model) matchCount() string {
	p := v.panes()[len(v.panes())-1]
	i, n := p.Match()
	if n == 0 {
		return "no match"
	}
	return fmt.Sprintf("%d/%d", i+1, n)
}

// ShortHelp returns the detail's keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	if v.searching {
		return []key.Binding{uikit.Binding("enter", "done", "enter"), uikit.Binding("esc", "clear", "esc")}
	}
	if v.doc == nil {
		return nil
	}
	bs := []key.Binding{km.Fold, km.Search}
	if _, n := v.panes()[0].Match(); n > 0 {
		bs = append(bs, km.NextMatch)
	}
	bs = append(bs, km.SideBySide)
	if v.archErr != nil {
		bs = append(bs, km.Retry)
	}
	if v.nav != nil {
		bs = append(bs, km.NextEvent)
	}
	if len(v.links.list) > 0 {
		bs = append(bs, uikit.Binding("1-9", "follow link", "1"))
	}
	return append(bs, km.Similar, km.Back)
}

// FullHelp returns every key of the detail.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{
		km.RankKeys(),
		{km.Fold, km.Expand, km.Collapse, km.ExpandAll, km.CollapseAll},
		{km.Search, km.NextMatch, km.PrevMatch, km.SideBySide, km.Retry, km.NextEvent, km.PrevEvent, km.Similar,
			uikit.Binding("1-9", "open the link of that number", "1")},
	}
}
