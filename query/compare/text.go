package compare

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Op is what a span of a word diff is: kept, only on the left (removed)
// or only on the right (added).
type Op string

// The ops of a Span.
const (
	OpEqual  Op = "="
	OpDelete Op = "-"
	OpInsert Op = "+"
)

// Span is a run of words of a text diff.
type Span struct {
	Op   Op     `json:"op"`
	Text string `json:"text"`
}

// textTimeout bounds one text diff. A pair of texts that needs longer
// (two unrelated 100 KB texts) is finished coarsely: what is left is shown
// as one removal and one insertion, still correct, only less fine.
const textTimeout = 60 * time.Millisecond

// diffWords diffs two texts word by word (a word: a run of letters, digits
// and underscores, of white space, or one other character), with
// diffmatchpatch on words encoded as runes. Like the library's line mode, it
// diffs by sentence and line first and by word only where they differ, so a
// long revised text costs a fraction; textTimeout bounds the whole.
func diffWords(a, b string) []Span { return wordsWithin(a, b, textTimeout) }

func wordsWithin(a, b string, timeout time.Duration) []Span {
	if a == b {
		if a == "" {
			return nil
		}
		return []Span{{OpEqual, a}}
	}
	deadline := time.Now().Add(timeout)
	ta, tb := tokens(a), tokens(b)
	sa, sb := segments(ta), segments(tb)
	segs := encoder{ids: make(map[string]rune, len(sa))}
	ka, kb := segs.encode(segmentKeys(sa)), segs.encode(segmentKeys(sb))
	words := &encoder{ids: make(map[string]rune, len(ta)/4)}
	if segs.overflow {
		return absorbShort(foldSpaces(wordDiff(ta, tb, words, deadline)))
	}
	var spans []Span
	var pa, pb []string // the stretch that differs, as words
	flush := func() {
		if len(pa)+len(pb) > 0 {
			spans = append(spans, wordDiff(pa, pb, words, deadline)...)
		}
		pa, pb = nil, nil
	}
	ia, ib := 0, 0
	for _, d := range dmpUntil(deadline).DiffMainRunes(ka, kb, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			for _, sg := range sa[ia : ia+n] {
				pa = append(pa, sg...)
			}
			ia += n
		case diffmatchpatch.DiffInsert:
			for _, sg := range sb[ib : ib+n] {
				pb = append(pb, sg...)
			}
			ib += n
		default:
			flush()
			spans = append(spans, Span{OpEqual, joinSegments(sa[ia : ia+n])})
			ia, ib = ia+n, ib+n
		}
	}
	flush()
	return absorbShort(foldSpaces(spans))
}

// wordDiff diffs two runs of words (either may be empty), finishing
// coarsely past the deadline.
func wordDiff(ta, tb []string, enc *encoder, deadline time.Time) []Span {
	whole := func() []Span {
		var out []Span
		if len(ta) > 0 {
			out = append(out, Span{OpDelete, strings.Join(ta, "")})
		}
		if len(tb) > 0 {
			out = append(out, Span{OpInsert, strings.Join(tb, "")})
		}
		return out
	}
	if len(ta) == 0 || len(tb) == 0 {
		return whole()
	}
	ra, rb := enc.encode(ta), enc.encode(tb)
	if enc.overflow || !time.Now().Before(deadline) {
		return whole()
	}
	return fromDiffs(dmpUntil(deadline).DiffMainRunes(ra, rb, false), enc.words)
}

// dmpUntil is the library set to stop at deadline.
func dmpUntil(deadline time.Time) *diffmatchpatch.DiffMatchPatch {
	d := diffmatchpatch.New()
	d.DiffTimeout = max(time.Until(deadline), time.Millisecond)
	return d
}

func newDMP() *diffmatchpatch.DiffMatchPatch {
	d := diffmatchpatch.New()
	d.DiffTimeout = textTimeout
	return d
}

// segments cuts words into sentences and lines: a segment ends with the
// white space after a line break or after ". ! ? ; :".
func segments(ts []string) [][]string {
	var out [][]string
	start := 0
	for i, t := range ts {
		if !isSpace(t) {
			continue
		}
		end := strings.Contains(t, "\n")
		if i > 0 {
			switch ts[i-1] {
			case ".", "!", "?", ";", ":":
				end = true
			}
		}
		if end {
			out = append(out, ts[start:i+1])
			start = i + 1
		}
	}
	if start < len(ts) {
		out = append(out, ts[start:])
	}
	return out
}

func segmentKeys(segs [][]string) []string {
	out := make([]string, len(segs))
	for i, sg := range segs {
		out[i] = strings.Join(sg, "")
	}
	return out
}

func joinSegments(segs [][]string) string {
	var b strings.Builder
	for _, sg := range segs {
		for _, t := range sg {
			b.WriteString(t)
		}
	}
	return b.String()
}

// fromDiffs decodes the library's diffs into spans (words: the rune → word
// table).
func fromDiffs(ds []diffmatchpatch.Diff, words []string) []Span {
	spans := make([]Span, 0, len(ds))
	for _, d := range ds {
		buf := make([]byte, 0, len(d.Text)*4)
		for _, r := range d.Text {
			buf = append(buf, words[r]...)
		}
		op := OpEqual
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = OpDelete
		case diffmatchpatch.DiffInsert:
			op = OpInsert
		}
		spans = append(spans, Span{op, string(buf)})
	}
	return spans
}

// foldSpaces turns an equal run of white space between two changes into a
// removal and an insertion of it, then regroups: removals first, then
// insertions, within each stretch of changes.
func foldSpaces(spans []Span) []Span {
	for i := 1; i+1 < len(spans); i++ {
		if spans[i].Op == OpEqual && spans[i-1].Op != OpEqual && spans[i+1].Op != OpEqual && isSpace(spans[i].Text) {
			spans[i].Op = "~" // both sides
		}
	}
	out := make([]Span, 0, len(spans))
	for i := 0; i < len(spans); {
		if spans[i].Op == OpEqual {
			out = appendSpan(out, spans[i])
			i++
			continue
		}
		j := i
		var del, ins []byte
		for ; j < len(spans) && spans[j].Op != OpEqual; j++ {
			switch spans[j].Op {
			case OpDelete:
				del = append(del, spans[j].Text...)
			case OpInsert:
				ins = append(ins, spans[j].Text...)
			default:
				del = append(del, spans[j].Text...)
				ins = append(ins, spans[j].Text...)
			}
		}
		if len(del) > 0 {
			out = appendSpan(out, Span{OpDelete, string(del)})
		}
		if len(ins) > 0 {
			out = appendSpan(out, Span{OpInsert, string(ins)})
		}
		i = j
	}
	return out
}

func appendSpan(out []Span, s Span) []Span {
	if n := len(out); n > 0 && out[n-1].Op == s.Op {
		out[n-1].Text += s.Text
		return out
	}
	return append(out, s)
}

func isSpace(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return s != ""
}

// tokens splits s into words, runs of white space and single other
// characters (punctuation, symbols, invalid bytes).
func tokens(s string) []string {
	out := make([]string, 0, len(s)/4)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		if cls := class(r); cls != 0 {
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if class(r2) != cls || r2 == utf8.RuneError && n2 == 1 {
					break
				}
				j += n2
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// class is 1 for a word rune, 2 for white space, 0 for a rune that stands
// alone.
func class(r rune) int {
	switch {
	case r == utf8.RuneError:
		return 0
	case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return 1
	case unicode.IsSpace(r):
		return 2
	}
	return 0
}

// encoder gives each distinct word a rune, skipping the surrogate range
// (not valid in UTF-8, which the library's diffs are built from).
type encoder struct {
	ids      map[string]rune
	words    []string // by rune; words[0] unused
	overflow bool
}

func (e *encoder) encode(ts []string) []rune {
	out := make([]rune, len(ts))
	if e.words == nil {
		e.words = []string{""}
	}
	for i, t := range ts {
		id, ok := e.ids[t]
		if !ok {
			if len(e.words) == 0xD800 {
				for len(e.words) < 0xE000 { // past the surrogates
					e.words = append(e.words, "")
				}
			}
			id = rune(len(e.words))
			if id > unicode.MaxRune {
				e.overflow = true
				return nil
			}
			e.words = append(e.words, t)
			e.ids[t] = id
		}
		out[i] = id
	}
	return out
}

// absorbShort folds a lone kept word between two changes of four words or
// more into them (a lone "the" shared by two unrelated sentences), so that a
// rewritten passage reads as one change, while a revision that changed
// one word in ten keeps every unchanged word. (The library's semantic
// cleanup measures equalities against whole changes and, on dense edits,
// merges most of a text into one change.)
func absorbShort(spans []Span) []Span {
	var absorb []int
	for i := 1; i+1 < len(spans); i++ {
		if spans[i].Op == OpEqual && wordsIn(spans[i].Text) <= 1 &&
			changeWords(spans, i, -1) >= 4 && changeWords(spans, i, 1) >= 4 {
			absorb = append(absorb, i)
		}
	}
	if len(absorb) == 0 {
		return spans
	}
	for _, i := range absorb { // decided first: one absorption does not enable the next
		spans[i].Op = "~"
	}
	return foldSpaces(spans)
}

// changeWords counts the words of the change next to spans[i] on side dir
// (-1 before, 1 after), removed and added.
func changeWords(spans []Span, i, dir int) int {
	n := 0
	for j := i + dir; j >= 0 && j < len(spans) && spans[j].Op != OpEqual; j += dir {
		n += wordsIn(spans[j].Text)
	}
	return n
}

// wordsIn counts what is not white space among s's tokens.
func wordsIn(s string) int {
	n := 0
	for _, t := range tokens(s) {
		if !isSpace(t) {
			n++
		}
	}
	return n
}
