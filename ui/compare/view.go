package compare

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	qc "engram/query/compare"
	"engram/ui/uikit"
)

// textContext is how many words of a long kept run stay next to a change.
const textContext = 12

// View draws the two events' ids, where each was read from, the counts,
// then the measures and every field in two columns, left and right, with
// a mark before what differs: ~ changed, - only left, + only right.
func (v *Model) View() string {
	st := v.c.Styles
	if !v.Opened() {
		msg := " Nothing to compare yet: m marks an event (in any view) or a turn (in the Turns list), = on another compares the two."
		if v.marked != nil {
			msg = " Marked " + uikit.Clean(v.marked.EventID) + ": = on another event compares the two."
		}
		return uikit.PadLines(st.Muted.Render(msg), v.w, v.h)
	}
	head := v.header()
	switch {
	case v.err != nil:
		return uikit.PadLines(strings.Join(head, "\n")+"\n"+st.Error.Render(" ✗ "+uikit.ErrorText(v.err)), v.w, v.h)
	case v.loading:
		return uikit.PadLines(strings.Join(head, "\n")+"\n"+st.Muted.Render(" reading both "+map[bool]string{true: "turns", false: "events"}[v.lturn != ""]+" "+v.c.Spin.View()), v.w, v.h)
	}
	body := v.body()
	end := min(v.top+v.bodyH(), len(body))
	lines := append(head, body[v.top:end]...)
	pos := fmt.Sprintf(" lines %d–%d of %d", v.top+1, end, len(body))
	if len(body) == 0 {
		pos = " no fields"
	}
	return uikit.PadLines(strings.Join(lines, "\n"), v.w, v.h-1) + "\n" + st.Muted.Render(uikit.Fit(pos, v.w))
}

// header is the lines above the scrolling body.
func (v *Model) header() []string {
	if v.lturn != "" {
		return v.turnHeader()
	}
	st := v.c.Styles
	pathW, colW := v.columns()
	title := st.Title.Render(" Compare ") + st.Muted.Render(uikit.Clean(v.left.EventID)+" ⇄ "+uikit.Clean(v.right.EventID))
	out := []string{uikit.Fit(title, v.w)}
	row := func(label, l, r string) string {
		return st.Table.Head.Render(uikit.Fit("  "+label, 2+pathW)) + " " + uikit.Fit(l, colW) + st.Subtle.Render(" │ ") + uikit.Fit(r, colW)
	}
	out = append(out, row("event", "◀ "+uikit.Clean(v.left.EventID), "▶ "+uikit.Clean(v.right.EventID)))
	out = append(out, row("", uikit.Clean(v.left.EventType+" · "+v.left.Timestamp), uikit.Clean(v.right.EventType+" · "+v.right.Timestamp)))
	if v.diff == nil {
		return out
	}
	d := v.diff
	out = append(out, row("read from", source(d.Left), source(d.Right)))
	for _, s := range []struct {
		name string
		side qc.Side
	}{{"left", d.Left}, {"right", d.Right}} {
		if s.side.Note != "" {
			out = append(out, st.Warning.Render(uikit.Fit(" ⚠ "+s.name+": "+uikit.Clean(s.side.Note), v.w)))
		}
	}
	c := d.Counts
	counts := fmt.Sprintf(" %d changed · %d only left · %d only right · %d the same", c.Changed, c.OnlyLeft, c.OnlyRight, c.Same)
	return append(out, st.Muted.Render(uikit.Fit(counts, v.w)))
}

func source(s qc.Side) string {
	if s.Source == qc.SourceArchive {
		return "the archive"
	}
	return "the index ⚠ (archive object unreadable)"
}

// columns are the widths of the path column and of each value column:
// the mark (2), the path, a space, left, " │ ", right.
func (v *Model) columns() (pathW, colW int) {
	pathW = min(28, max(12, v.w/5))
	colW = max(8, (v.w-2-pathW-1-3)/2)
	return pathW, colW
}

// bodyH is the height of the scrolling body: the view less the header
// and the position line.
func (v *Model) bodyH() int { return max(1, v.h-len(v.header())-1) }

// body is the measures and the fields drawn for the current width, drawn
// once per comparison and width: scrolling only slices it.
func (v *Model) body() []string {
	if v.lturn != "" {
		return v.turnBody()
	}
	if v.diff == nil {
		return nil
	}
	if v.lines != nil && v.linesW == v.w {
		return v.lines
	}
	st := v.c.Styles
	var out []string
	for _, m := range v.diff.Measures {
		r := num(m.Right)
		if dt := qc.DeltaText(m.Left, m.Right, m.Delta); m.Delta != nil && dt != "0" {
			r += "  Δ " + dt
		}
		out = append(out, v.line(" ", st.Bold, m.Name, num(m.Left), r, m.Left == nil && m.Right == nil))
	}
	out = append(out, st.Subtle.Render(strings.Repeat("─", max(0, v.w))))
	out = append(out, v.fieldLines(v.diff.Fields, true)...)
	v.lines, v.linesW = out, v.w
	return out
}

// line is one line of the two columns: the mark and the path (styled ms),
// the left value and the right one; dim draws it all muted.
func (v *Model) line(mark string, ms lipgloss.Style, path string, l, r string, dim bool) string {
	st := v.c.Styles
	pathW, colW := v.columns()
	p := uikit.Fit(path, pathW)
	if dim {
		return st.Muted.Render(mark+" "+p+" ") + st.Muted.Render(uikit.Fit(l, colW)) + st.Subtle.Render(" │ ") + st.Muted.Render(uikit.Fit(r, colW))
	}
	return ms.Render(mark+" "+p) + " " + uikit.Fit(l, colW) + st.Subtle.Render(" │ ") + uikit.Fit(r, colW)
}

// fieldLines are the lines of fields: those the same too when same.
func (v *Model) fieldLines(fields []qc.Field, same bool) []string {
	st := v.c.Styles
	_, colW := v.columns()
	var out []string
	for _, f := range fields {
		if f.Status == qc.Same && !same {
			continue
		}
		mark, ms := markOf(st, f.Status)
		if f.Words != nil {
			lw := uikit.WrapText(sideText(f.Words, qc.OpDelete), colW)
			rw := uikit.WrapText(sideText(f.Words, qc.OpInsert), colW)
			for i := range max(len(lw), len(rw)) {
				var l, r string
				if i < len(lw) {
					l = lw[i]
				}
				if i < len(rw) {
					r = rw[i]
				}
				if i == 0 {
					out = append(out, v.line(mark, ms, uikit.Clean(f.Path), l, r, false))
				} else {
					out = append(out, v.line(" ", ms, "", l, r, false))
				}
			}
			continue
		}
		l, r := value(f.Left), value(f.Right)
		if f.Delta != nil {
			r += "  Δ " + qc.DeltaText(qc.NumberOf(f.Left), qc.NumberOf(f.Right), f.Delta)
		}
		out = append(out, v.line(mark, ms, uikit.Clean(f.Path), l, r, f.Status == qc.Same))
	}
	return out
}

func markOf(st *uikit.Styles, s qc.Status) (string, lipgloss.Style) {
	switch s {
	case qc.Changed:
		return "~", st.Warning
	case qc.OnlyLeft:
		return "-", st.Error
	case qc.OnlyRight:
		return "+", st.Success
	}
	return " ", st.Muted
}

// sideText is one side of a word diff: the kept words (a long run cut to
// its words next to a change) and that side's own, marked [-…-] on the
// left (side OpDelete) and {+…+} on the right (OpInsert).
func sideText(spans []qc.Span, side qc.Op) string {
	var b strings.Builder
	for i, s := range spans {
		switch s.Op {
		case qc.OpEqual:
			b.WriteString(qc.Elide(s.Text, textContext, i > 0, i < len(spans)-1))
		case side:
			if side == qc.OpDelete {
				b.WriteString("[-" + s.Text + "-]")
			} else {
				b.WriteString("{+" + s.Text + "+}")
			}
		}
	}
	return b.String()
}

// value is a JSON value on one line, clean; an array of more than eight
// numbers (an embedding) only counted; absent is empty.
func value(v []byte) string {
	if v == nil {
		return ""
	}
	if n, ok := qc.Numbers(v); ok && n > 8 {
		return fmt.Sprintf("[%d numbers]", n)
	}
	return uikit.Clean(string(v))
}

func num(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprint(*p)
}
