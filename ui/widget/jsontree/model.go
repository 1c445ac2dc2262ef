package jsontree

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// role is how a piece of a JSON line is coloured.
type role uint8

const (
	rPlain role = iota
	rKey
	rString
	rNumber
	rBool
	rNull
	rPunct
	rMuted
	rError
	rSpin
)

type seg struct {
	text string // clean: nothing in it can drive the terminal
	role role
}

// jline is one screen line of a JSON document.
type jline struct {
	node  *Node
	depth int
	segs  []seg
}

// Model draws one JSON tree in a pane and moves a cursor through it.
type Model struct {
	c     *uikit.Common
	root  *Node
	folds map[string]bool // by path: true folded, false unfolded; shared across events
	// ShowMarks draws the marks MarkUnheld set.
	ShowMarks bool
	lines     []jline
	first     map[*Node]int // a node's first line
	w, h      int
	cur       list.Cursor // the cursor line and the first drawn

	term    string
	matches []*Node
	mi      int
}

// New is a tree view with no document yet; folds, shared with the
// caller, holds the paths folded or unfolded.
func New(c *uikit.Common, folds map[string]bool) *Model {
	return &Model{c: c, folds: folds}
}

// Height is the lines drawn at once.
func (j *Model) Height() int { return j.h }

// Len is the number of lines the document takes as laid out.
func (j *Model) Len() int { return len(j.lines) }

// Line is the path of the value line i shows ("archive.input.text"; a long
// string's on each of its lines) and whether it is marked.
func (j *Model) Line(i int) (path string, marked bool) {
	n := j.lines[i].node
	return n.path, n.mark
}

// Cursor is the cursor line.
func (j *Model) Cursor() int { return j.cur.Sel() }

// Match is the current search match and how many there are.
func (j *Model) Match() (i, n int) { return j.mi, len(j.matches) }

// SetRoot shows another document, keeping the cursor on the same path
// when there is one.
func (j *Model) SetRoot(root *Node) {
	path := ""
	if j.cur.Sel() < len(j.lines) {
		path = j.lines[j.cur.Sel()].node.path
	}
	j.root = root
	j.layout()
	j.cur.Reset()
	if path != "" {
		for n, i := range j.first {
			if n.path == path {
				j.cur.Select(i)
			}
		}
	}
	j.searchAgain()
	j.scroll()
}

// SetSize lays the document out again for the new width.
func (j *Model) SetSize(w, h int) {
	if w != j.w {
		j.w, j.h = w, h
		j.layout()
	}
	j.w, j.h = w, h
	j.cur.SetHeight(h)
	j.scroll()
}

// folded says whether a container is drawn on one line. Embeddings are
// folded unless unfolded: they are long and say little to a person.
func (j *Model) folded(n *Node) bool {
	if f, ok := j.folds[n.path]; ok {
		return f
	}
	return strings.HasSuffix(n.path, "embedding")
}

// layout turns the tree into lines for the current width and folds.
func (j *Model) layout() {
	j.lines = j.lines[:0]
	j.first = make(map[*Node]int)
	if j.root != nil && j.w > 0 {
		j.emit(j.root, 0, true)
	}
	j.cur.Select(max(0, min(j.cur.Sel(), len(j.lines)-1)))
}

func (j *Model) add(n *Node, depth int, segs ...seg) {
	if _, ok := j.first[n]; !ok {
		j.first[n] = len(j.lines)
	}
	j.lines = append(j.lines, jline{n, depth, segs})
}

func (j *Model) emit(n *Node, depth int, last bool) {
	pre := keySegs(n, n == j.root)
	comma := seg{",", rPunct}
	if last {
		comma = seg{}
	}
	open, close := "{", "}"
	if n.kind == jArray {
		open, close = "[", "]"
	}
	switch {
	case n.kind == jNote:
		r := rMuted
		if n.errNote {
			r = rError
		} else if n.spin {
			r = rSpin
		}
		j.add(n, depth, append(pre, seg{uikit.Clean(n.text), r})...)
	case n.container() && len(n.kids) == 0:
		j.add(n, depth, append(pre, seg{open + close, rPunct}, comma)...)
	case n.container() && j.folded(n):
		j.add(n, depth, append(pre, seg{open + "…" + close, rPunct}, seg{" " + countOf(n), rMuted}, comma)...)
	case n.container():
		j.add(n, depth, append(pre, seg{open, rPunct})...)
		for i, k := range n.kids {
			j.emit(k, depth+1, i == len(n.kids)-1)
		}
		j.add(n, depth, seg{close, rPunct}, comma)
	case n.kind == jString:
		j.emitString(n, depth, pre, comma)
	default:
		r := map[jkind]role{jNumber: rNumber, jBool: rBool, jNull: rNull}[n.kind]
		j.add(n, depth, append(pre, seg{n.text, r}, comma)...)
	}
}

// keySegs is `"name": ` before a member's value; array elements and an
// unnamed root have none.
func keySegs(n *Node, root bool) []seg {
	if n.idx >= 0 || root && n.key == "" {
		return nil
	}
	return []seg{{`"` + uikit.Clean(n.key) + `"`, rKey}, {": ", rPunct}}
}

func countOf(n *Node) string {
	unit := "keys"
	if n.kind == jArray {
		unit = "items"
	}
	if len(n.kids) == 1 {
		unit = unit[:len(unit)-1]
	}
	return fmt.Sprintf("%d %s", len(n.kids), unit)
}

// emitString draws a string value: on one line when it fits, else wrapped
// to the width with its line breaks kept, continuation lines indented
// under the key, so reasoning and outputs read as paragraphs.
func (j *Model) emitString(n *Node, depth int, pre []seg, comma seg) {
	avail := j.w - uikit.GutterW - 2*depth
	preW := 0
	for _, s := range pre {
		preW += ansi.StringWidth(s.text)
	}
	one := uikit.Clean(n.text)
	if !strings.Contains(n.text, "\n") && preW+ansi.StringWidth(one)+3 <= avail {
		j.add(n, depth, append(pre, seg{`"` + one + `"`, rString}, comma)...)
		return
	}
	contW := max(8, avail-4)
	firstW := max(8, avail-preW-3)
	var chunks []string
	for i, para := range strings.Split(n.text, "\n") {
		if i == 0 {
			chunks = append(chunks, wrapFirst(para, firstW, contW)...)
		} else {
			chunks = append(chunks, uikit.WrapText(para, contW)...)
		}
	}
	for i, ch := range chunks {
		text := ch
		if i == 0 {
			text = `"` + text
		}
		var segs []seg
		if i == 0 {
			segs = append(segs, pre...)
		} else {
			segs = append(segs, seg{"  ", rPlain})
		}
		segs = append(segs, seg{text, rString})
		if i == len(chunks)-1 {
			segs = append(segs, seg{`"`, rString}, comma)
		}
		j.add(n, depth, segs...)
	}
}

// wrapFirst wraps one paragraph whose first line has w1 cells and the
// others w2.
func wrapFirst(para string, w1, w2 int) []string {
	lines := uikit.WrapText(para, w1)
	if len(lines) <= 1 {
		return lines
	}
	whole := uikit.Clean(strings.ReplaceAll(para, "\t", "    "))
	if !strings.HasPrefix(whole, lines[0]) {
		return uikit.WrapText(para, w2)
	}
	rest := strings.TrimLeft(whole[len(lines[0]):], " ")
	return append([]string{lines[0]}, uikit.WrapText(rest, w2)...)
}
