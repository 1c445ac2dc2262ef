package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// View draws the column titles, the visible rows and the position line.
func (v *Model) View() string {
	st := v.c.Styles
	cols := v.layout()
	var b strings.Builder
	b.WriteString(st.Table.Head.Render(uikit.Fit(streamHead(cols), v.w)))
	now := v.c.Deps.Now()
	b.WriteString(v.cur.Draw(v.buf.Len(), func(i int, selected bool) string {
		return v.streamRow(v.buf.Row(i), cols, selected, now)
	}))
	b.WriteByte('\n')
	b.WriteString(st.Muted.Render(uikit.Fit(v.position(), v.w)))
	return b.String()
}

// layout sizes the columns to the rows on screen.
func (v *Model) layout() streamCols {
	from, to := v.cur.Visible(v.buf.Len())
	rows := make([]*model.IndexDoc, 0, to-from)
	for i := from; i < to; i++ {
		rows = append(rows, v.buf.Row(i))
	}
	now := v.c.Deps.Now().In(v.c.Opts.Location)
	today := func(ts string) bool {
		t, err := time.Parse(time.RFC3339Nano, ts)
		return err == nil && t.In(v.c.Opts.Location).Format(time.DateOnly) == now.Format(time.DateOnly)
	}
	return layoutStream(v.w, rows, today)
}

// position is the line under the rows: where the selection is in the
// window, whether more is loading, what filter applies.
func (v *Model) position() string {
	n := v.buf.Len()
	s := fmt.Sprintf(" row %s of %s loaded", uikit.Thousands(int64(v.cur.Sel()+1)), uikit.Thousands(int64(n)))
	switch {
	case n == 0 && v.good != "" && !v.loadingHead:
		s = " no rows match the filter: esc clears it"
	case n == 0:
		s = " no rows"
	}
	if !v.buf.End() {
		s += " · more below"
	}
	if !v.buf.AtHead() || v.jumped {
		s += " · newer above"
	}
	if v.order == query.SortTime && v.pendingN > 0 {
		s += fmt.Sprintf(" · %s new (home places them by time)", uikit.Thousands(int64(v.pendingN)))
	}
	if v.loadingOlder || v.loadingNewer || v.loadingHead {
		s += " · loading " + v.c.Spin.View()
	}
	if v.find != "" {
		s += " · find " + strconv.Quote(uikit.Clean(v.find)) + " (n/N, esc ends)"
	}
	if v.hscroll > 0 {
		s += fmt.Sprintf(" · summary from cell %d (←)", v.hscroll+1)
	}
	s += " · " + orderName(v.order) // before the filter, which may be long
	if v.expr != "" {
		s += " · filter: " + uikit.Clean(v.expr)
	}
	return s
}

// ShortHelp is the footer: only the keys that do something now.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	bs := []key.Binding{}
	if v.buf.Len() > 0 {
		bs = append(bs, km.Move, km.Enter)
	}
	if v.find != "" {
		bs = append(bs, uikit.Binding("n/N", "next/prev found", "n"))
	}
	return append(bs, v.PauseKey(), km.Filter)
}

// PauseKey is space named for what it does now (Turns shows it too).
func (v *Model) PauseKey() key.Binding {
	pause := v.c.Keys.Pause
	if v.following {
		pause.SetHelp("space", "pause")
	} else {
		pause.SetHelp("space", "follow")
	}
	return pause
}

// FullHelp is every key of the stream, grouped.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{km.ListKeys(), {km.Enter, km.Pause, v.OrderKey(), km.ScrollLeft}} // / is among the global keys
}
