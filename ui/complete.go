package ui

import (
	"strings"

	"engram/ui/uikit"
)

// completer is what tab does in the filter bar and the command line: the
// first tab completes as far as the candidates agree and lists them, the
// next ones cycle through them (shift+tab backwards).
type completer struct {
	head   string   // the text before the word being completed
	cands  []string // the candidates listed, when several remain
	at     int      // the one shown, -1 before the first cycle
	spaced bool     // a candidate chosen is followed by a space
	shown  string   // the input's text as the last tab left it
}

// candidates finds the completions of typed: the text before the word,
// the words, and whether a chosen one is followed by a space.
type candidates func(typed string) (head string, cands []string, spaced bool)

// tab is the input's text after a tab (dir 1) or shift+tab (dir -1).
func (c *completer) tab(typed string, dir int, find candidates) string {
	if len(c.cands) > 1 && typed == c.shown {
		c.at = (c.at + dir + len(c.cands)) % len(c.cands)
		if c.at < 0 {
			c.at += len(c.cands)
		}
		c.shown = c.head + c.cands[c.at]
		return c.shown
	}
	head, cands, spaced := find(typed)
	c.reset()
	switch len(cands) {
	case 0:
		return typed
	case 1:
		if spaced {
			return head + cands[0] + " "
		}
		return head + cands[0]
	}
	c.head, c.cands, c.at, c.spaced = head, cands, -1, spaced
	if dir < 0 {
		c.at = 0 // shift+tab on a new list starts from its last
	}
	c.shown = head + commonPrefix(cands)
	return c.shown
}

func (c *completer) reset() { *c = completer{at: -1} }

// listed is the candidates to show, the one chosen marked, or nil.
func (c *completer) listed() (cands []string, at int) {
	if len(c.cands) < 2 {
		return nil, -1
	}
	return c.cands, c.at
}

// candLine lists the candidates in w cells, the chosen one marked (in
// reverse, and between brackets for a terminal without colour), starting
// late enough that the chosen one shows.
func candLine(st *uikit.Styles, cands []string, at, w int) string {
	parts := make([]string, len(cands))
	for i, c := range cands {
		if i == at {
			parts[i] = st.TabOn.Render("[" + uikit.Clean(c) + "]")
		} else {
			parts[i] = st.Muted.Render(uikit.Clean(c))
		}
	}
	from := 0
	for from < at && uikit.Width(" "+strings.Join(parts[from:at+1], "  ")) > w {
		from++
	}
	prefix := " "
	if from > 0 {
		prefix = " … "
	}
	return uikit.Fit(prefix+strings.Join(parts[from:], "  "), w)
}
