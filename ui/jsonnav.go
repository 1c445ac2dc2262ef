package ui

import (
	"slices"
	"strings"
	"unicode"

	"charm.land/lipgloss/v2"

	"engram/ui/uikit"
)

// move shifts the cursor by delta lines.
func (j *jsonView) move(delta int) { j.cur.Move(delta, len(j.lines)) }

// scroll keeps the cursor line in sight.
func (j *jsonView) scroll() { j.cur.Scroll(len(j.lines)) }

// container is the node folding acts on at the cursor: the line's own
// container, or the one holding its scalar.
func (j *jsonView) container() *jnode {
	if j.cur.Sel() >= len(j.lines) {
		return nil
	}
	n := j.lines[j.cur.Sel()].node
	for n != nil && !n.container() {
		n = n.parent
	}
	return n
}

// setFold folds or unfolds the container at the cursor (toggle when
// fold is nil) and puts the cursor on its first line.
func (j *jsonView) setFold(fold *bool) {
	n := j.container()
	if n == nil || n.parent == nil && fold != nil && *fold {
		return
	}
	f := !j.folded(n)
	if fold != nil {
		f = *fold
	}
	j.folds[n.path] = f
	j.layout()
	j.cur.Select(j.first[n])
	j.scroll()
}

// foldAll folds (or unfolds) every container below the root.
func (j *jsonView) foldAll(f bool) {
	if j.root == nil {
		return
	}
	walk(j.root, func(n *jnode) {
		if n.container() && n != j.root {
			j.folds[n.path] = f
		}
	})
	j.layout()
	j.scroll()
}

// search finds term (case-insensitive) in member names and values,
// unfolding what hides the first match at or after the cursor.
func (j *jsonView) search(term string) int {
	j.term = strings.ToLower(term)
	j.searchAgain()
	if len(j.matches) == 0 {
		return 0
	}
	j.mi = 0
	at := j.lines[j.cur.Sel()].node
	for i, n := range j.matches {
		if l, ok := j.first[n]; ok && l >= j.first[at] {
			j.mi = i
			break
		}
	}
	j.reveal()
	return len(j.matches)
}

// searchAgain recomputes the matches (after the document changed).
func (j *jsonView) searchAgain() {
	j.matches = j.matches[:0]
	if j.term == "" || j.root == nil {
		return
	}
	walk(j.root, func(n *jnode) {
		if containsFold(uikit.Clean(n.key), j.term) || !n.container() && containsFold(uikit.Clean(n.text), j.term) {
			j.matches = append(j.matches, n)
		}
	})
	j.mi = min(j.mi, max(0, len(j.matches)-1))
}

// nextMatch moves to the next (dir 1) or previous (-1) match.
func (j *jsonView) nextMatch(dir int) {
	if len(j.matches) == 0 {
		return
	}
	j.mi = (j.mi + dir + len(j.matches)) % len(j.matches)
	j.reveal()
}

// reveal unfolds every container above the current match and moves the
// cursor to it.
func (j *jsonView) reveal() {
	n := j.matches[j.mi]
	changed := false
	for p := n.parent; p != nil; p = p.parent {
		if j.folded(p) {
			j.folds[p.path] = false
			changed = true
		}
	}
	if changed {
		j.layout()
	}
	j.cur.Select(j.first[n])
	// A long string spans lines: go to the one that holds the hit.
	for i := j.cur.Sel(); i < len(j.lines) && j.lines[i].node == n; i++ {
		var b strings.Builder
		for _, s := range j.lines[i].segs {
			b.WriteString(s.text)
		}
		if strings.Contains(strings.ToLower(b.String()), j.term) {
			j.cur.Select(i)
			break
		}
	}
	// Centre the match: context above it helps more than below.
	j.cur.ScrollTo(j.cur.Sel()-j.h/3, len(j.lines))
}

// View draws the visible lines, each exactly w cells wide.
func (j *jsonView) View() string {
	lines := make([]string, 0, j.h)
	from, to := j.cur.Visible(len(j.lines))
	for i := from; i < to; i++ {
		lines = append(lines, j.line(i))
	}
	return uikit.PadLines(strings.Join(lines, "\n"), j.w, j.h)
}

func (j *jsonView) line(i int) string {
	st := j.c.Styles
	l := j.lines[i]
	gut := "  "
	switch {
	case i == j.cur.Sel():
		gut = st.Accent.Render("›") + " "
	case j.marks && l.node.mark:
		gut = st.JSON.Marker.Render("+") + " "
	}
	var b strings.Builder
	b.WriteString(gut)
	b.WriteString(strings.Repeat("  ", l.depth))
	for _, s := range l.segs {
		b.WriteString(j.paint(s))
	}
	return b.String()
}

// paint styles one piece, underlining search hits in it.
func (j *jsonView) paint(s seg) string {
	st := j.c.Styles
	style := map[role]lipgloss.Style{
		rPlain: lipgloss.NewStyle(), rKey: st.JSON.Key, rString: st.JSON.String,
		rNumber: st.JSON.Number, rBool: st.JSON.Bool, rNull: st.JSON.Null,
		rPunct: st.JSON.Punct, rMuted: st.Muted, rError: st.Error, rSpin: st.Accent,
	}[s.role]
	text := s.text
	if s.role == rSpin {
		text = j.c.Spin.View() + " " + text
	}
	if j.term == "" || s.role == rPunct {
		return style.Render(text)
	}
	// Compared rune by rune, lower-cased one at a time: offsets into a
	// lower-cased string need not be offsets into the text.
	runes, term := []rune(text), lowerRunes(j.term)
	lower := lowerRunes(text)
	var b strings.Builder
	for {
		k := runeIndex(lower, term)
		if k < 0 || len(term) == 0 {
			b.WriteString(style.Render(string(runes)))
			return b.String()
		}
		b.WriteString(style.Render(string(runes[:k])))
		b.WriteString(st.Match.Render(string(runes[k : k+len(term)])))
		runes, lower = runes[k+len(term):], lower[k+len(term):]
	}
}

// containsFold: s holds term, case aside, the way paint highlights it.
func containsFold(s, term string) bool { return runeIndex(lowerRunes(s), lowerRunes(term)) >= 0 }

func lowerRunes(s string) []rune {
	rs := []rune(s)
	for i, r := range rs {
		rs[i] = unicode.ToLower(r)
	}
	return rs
}

// runeIndex is the index of the first needle in hay, -1 if none.
func runeIndex(hay, needle []rune) int {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}
