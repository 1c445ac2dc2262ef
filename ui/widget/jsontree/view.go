package jsontree

import (
	"slices"
	"strings"
	"unicode"

	"charm.land/lipgloss/v2"

	"engram/ui/uikit"
)

// View draws the visible lines, each exactly w cells wide.
func (j *Model) View() string {
	lines := make([]string, 0, j.h)
	from, to := j.cur.Visible(len(j.lines))
	for i := from; i < to; i++ {
		lines = append(lines, j.line(i))
	}
	return uikit.PadLines(strings.Join(lines, "\n"), j.w, j.h)
}

func (j *Model) line(i int) string {
	st := j.c.Styles
	l := j.lines[i]
	gut := "  "
	switch {
	case i == j.cur.Sel():
		gut = st.Accent.Render("›") + " "
	case j.ShowMarks && l.node.mark:
		gut = st.JSON.Marker.Render("+") + " "
	}
	var b strings.Builder
	b.WriteString(gut)
	b.WriteString(strings.Repeat("  ", l.depth))
	cur := len(j.matches) > 0 && l.node == j.matches[j.mi]
	for _, s := range l.segs {
		b.WriteString(j.paint(s, cur))
	}
	return b.String()
}

// paint styles one piece, underlining search hits in it; cur: the piece
// is of the current match, whose hits stand out from the others'.
func (j *Model) paint(s seg, cur bool) string {
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
	hit := st.Match
	if cur {
		hit = st.CurMatch
	}
	var b strings.Builder
	for {
		k := runeIndex(lower, term)
		if k < 0 || len(term) == 0 {
			b.WriteString(style.Render(string(runes)))
			return b.String()
		}
		b.WriteString(style.Render(string(runes[:k])))
		b.WriteString(hit.Render(string(runes[k : k+len(term)])))
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
