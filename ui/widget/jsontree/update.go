package jsontree

import (
	"strings"

	"engram/ui/uikit"
)

// Move shifts the cursor by delta lines.
func (j *Model) Move(delta int) { j.cur.Move(delta, len(j.lines)) }

// Top puts the cursor on the first line (another document is shown).
func (j *Model) Top() {
	j.cur.Reset()
	j.scroll()
}

// scroll keeps the cursor line in sight.
func (j *Model) scroll() { j.cur.Scroll(len(j.lines)) }

// container is the node folding acts on at the cursor: the line's own
// container, or the one holding its scalar.
func (j *Model) container() *Node {
	if j.cur.Sel() >= len(j.lines) {
		return nil
	}
	n := j.lines[j.cur.Sel()].node
	for n != nil && !n.container() {
		n = n.parent
	}
	return n
}

// SetFold folds or unfolds the container at the cursor (toggle when
// fold is nil) and puts the cursor on its first line.
func (j *Model) SetFold(fold *bool) {
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

// FoldAll folds (or unfolds) every container below the root.
func (j *Model) FoldAll(f bool) {
	if j.root == nil {
		return
	}
	walk(j.root, func(n *Node) {
		if n.container() && n != j.root {
			j.folds[n.path] = f
		}
	})
	j.layout()
	j.scroll()
}

// Search finds term (case-insensitive) in member names and values,
// unfolding what hides the first match at or after the cursor.
func (j *Model) Search(term string) int {
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
func (j *Model) searchAgain() {
	j.matches = j.matches[:0]
	if j.term == "" || j.root == nil {
		return
	}
	walk(j.root, func(n *Node) {
		if containsFold(uikit.Clean(n.key), j.term) || !n.container() && containsFold(uikit.Clean(n.text), j.term) {
			j.matches = append(j.matches, n)
		}
	})
	j.mi = min(j.mi, max(0, len(j.matches)-1))
}

// NextMatch moves to the next (dir 1) or previous (-1) match.
func (j *Model) NextMatch(dir int) {
	if len(j.matches) == 0 {
		return
	}
	j.mi = (j.mi + dir + len(j.matches)) % len(j.matches)
	j.reveal()
}

// reveal unfolds every container above the current match and moves the
// cursor to it.
func (j *Model) reveal() {
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
