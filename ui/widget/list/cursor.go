// Package list is what every list of the inspector shares: the selection
// and the scrolled window drawn of it (Cursor, for the stream, the turns,
// a turn's chain, the pipeline runs and the lines of the detail's JSON),
// the keys that move it (Step), and the bounded window of a listing that
// pages with cursors (Window, for the stream and the turns).
package list

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// Cursor is the selected item of a list and the first item drawn. It does
// not hold the items: every call that needs their number is given it.
type Cursor struct {
	sel, top int
	h        int // items drawn at once
}

// Sel is the selected item.
func (c *Cursor) Sel() int { return c.sel }

// Top is the first item drawn.
func (c *Cursor) Top() int { return c.top }

// SetHeight sets how many items are drawn at once; the list scrolls when
// it next moves (call Scroll to scroll now).
func (c *Cursor) SetHeight(h int) { c.h = h }

// height is at least one item: a list always shows its selection.
func (c *Cursor) height() int { return max(1, c.h) }

// Visible is the items drawn of n: from up to, not including, to.
func (c *Cursor) Visible(n int) (from, to int) { return c.top, min(n, c.top+c.height()) }

// Draw is the lines of the items drawn, each after a line break: row(i,
// selected) of each, then empty lines down to the list's height.
func (c *Cursor) Draw(n int, row func(i int, selected bool) string) string {
	var b strings.Builder
	from, to := c.Visible(n)
	for i := from; i < to; i++ {
		b.WriteByte('\n')
		b.WriteString(row(i, i == c.sel))
	}
	for i := to - from; i < c.height(); i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// Select puts the selection on item i without scrolling (a move from i
// follows).
func (c *Cursor) Select(i int) { c.sel = i }

// Move selects the item delta away, within the n items, and scrolls to it.
func (c *Cursor) Move(delta, n int) {
	c.sel = max(0, min(n-1, c.sel+delta))
	c.Scroll(n)
}

// Scroll keeps the selection in sight with the fewest lines of movement,
// and leaves no empty space below the last of the n items.
func (c *Cursor) Scroll(n int) {
	h := c.height()
	switch {
	case c.sel < c.top:
		c.top = c.sel
	case c.sel >= c.top+h:
		c.top = c.sel - h + 1
	}
	c.top = max(0, min(c.top, n-h))
}

// ScrollTo draws from item top, then scrolls as little as keeps the
// selection in sight.
func (c *Cursor) ScrollTo(top, n int) {
	c.top = top
	c.Scroll(n)
}

// Shift moves the selection and the window by k items, as k items are put
// above them (or -k dropped from above), so they stay on the same items.
func (c *Cursor) Shift(k int) {
	c.sel, c.top = max(0, c.sel+k), max(0, c.top+k)
}

// Reset selects and draws from the first item.
func (c *Cursor) Reset() { c.sel, c.top = 0, 0 }

// Step is the move a list key asks for in a list of n items, page of them
// to a screen: ok is false for a key that is not a list key.
func Step(msg tea.KeyPressMsg, km *uikit.KeyMap, page, n int) (delta int, ok bool) {
	switch {
	case key.Matches(msg, km.Up):
		return -1, true
	case key.Matches(msg, km.Down):
		return 1, true
	case key.Matches(msg, km.PageUp):
		return -page, true
	case key.Matches(msg, km.PageDown):
		return page, true
	case key.Matches(msg, km.HalfUp):
		return -max(1, page/2), true
	case key.Matches(msg, km.HalfDown):
		return max(1, page/2), true
	case key.Matches(msg, km.Home):
		return -n, true
	case key.Matches(msg, km.End):
		return n, true
	}
	return 0, false
}
