package stream

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/ui/uikit"
)

// seek is a jump (g t, g s, g r…) that found no loaded row sharing the
// key: the stream pages on in its direction, as scrolling would, and
// looks at each page as it lands. It gives up at the end of the listing,
// after a window's worth of rows, or where going on would evict the row
// it started from, so a failed seek leaves the selection where it was.
type seek struct {
	keyOf func(*model.IndexDoc) string
	want  string
	from  string // the event the jump started from
	dir   int
	rows  int // rows looked at beyond the loaded ones
}

// startSeek looks beyond the loaded rows from row start; false when there
// is nothing beyond them in that direction.
func (v *Model) startSeek(start int, keyOf func(*model.IndexDoc) string, want string, dir int) (bool, tea.Cmd) {
	if dir > 0 && v.buf.End() || dir < 0 && v.buf.AtHead() {
		return false, nil
	}
	if v.loadingHead {
		return true, uikit.StatusCmd("the stream is loading; jump again once it shows", false)
	}
	v.cur.Select(start)
	v.seeking = &seek{keyOf: keyOf, want: want, from: v.buf.Row(start).EventID, dir: dir}
	return true, v.seekMore() // nil while a page is on its way: its answer goes on
}

// seekMore asks for the next page in the seek's direction unless one is
// on its way (its answer continues the seek).
func (v *Model) seekMore() tea.Cmd {
	s := v.seeking
	page := v.c.Opts.PageSize
	from := v.buf.Index(s.from)
	if from < 0 || s.rows >= v.c.Opts.BufferRows {
		return v.endSeek()
	}
	if s.dir > 0 {
		if v.loadingOlder {
			return nil
		}
		if from < v.buf.TopCut(page) { // the page would evict the start row
			return v.endSeek()
		}
		v.loadingOlder = true
		return loadOlder(v.c.Ctx, v.reader(), v.expr, v.seq, v.buf.Next(), page)
	}
	if v.loadingNewer || v.loadingHead {
		return nil
	}
	ev := v.buf.Above()
	k := ev.N // rows put above: the page, and for the head what came since
	if ev.Head {
		k += v.pendingN
	}
	if ev.Head && v.overflow || from >= v.buf.KeptAfterPrepend(k) {
		return v.endSeek() // a reload, or evicting the start row, would be needed
	}
	v.loadingNewer = true
	return loadNewer(v.c.Ctx, v.reader(), v.expr, v.seq, v.headAware(ev))
}

// onSeekPage continues the seek after a page of n rows landed.
func (v *Model) onSeekPage(n int) tea.Cmd {
	s := v.seeking
	if s == nil {
		return nil
	}
	s.rows += n
	from := v.buf.Index(s.from)
	if from < 0 {
		return v.endSeek()
	}
	for i := from + s.dir; i >= 0 && i < v.buf.Len(); i += s.dir {
		if s.keyOf(v.buf.Row(i)) == s.want {
			v.seeking = nil
			v.cur.Select(from) // move from the start row, as a found loaded row would
			return tea.Batch(v.move(i-from), func() tea.Msg { return SeekDoneMsg{} })
		}
	}
	if s.dir > 0 && v.buf.End() || s.dir < 0 && v.buf.AtHead() {
		return v.endSeek()
	}
	return v.seekMore()
}

func (v *Model) endSeek() tea.Cmd {
	s := v.seeking
	v.seeking = nil
	where := "older"
	if s.dir < 0 {
		where = "newer"
	}
	return uikit.StatusCmd(fmt.Sprintf("no row shares it within %d %s rows (filter by it with /)", s.rows, where), false)
}
