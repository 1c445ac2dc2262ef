// Package jsontree shows a JSON document as pretty, coloured, foldable
// lines, with long strings wrapped and their own line breaks kept, a
// search, and marks on chosen members (the detail view's index document
// and archived event).
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// jkind is the kind of a JSON tree node.
type jkind uint8

const (
	jObject jkind = iota
	jArray
	jString
	jNumber
	jBool
	jNull
	// jNote is not JSON: a line standing in for a value still loading or
	// that failed (the archived event before it arrives).
	jNote
)

// Node is one value of a parsed JSON document, members kept in order.
type Node struct {
	key    string // member name; "" for array elements and the root
	idx    int    // index in the parent array, else -1
	kind   jkind
	text   string // scalars: the decoded string or the literal; notes: the text
	kids   []*Node
	path   string // "archive.input.embedding", "index.tags[0]"
	parent *Node
	// mark: an archived member that the index does not hold.
	mark bool
	// errNote: a note saying what failed; spin: a note still loading.
	errNote, spin bool
}

func (n *Node) container() bool { return n.kind == jObject || n.kind == jArray }

// Parse reads one JSON value into a tree rooted at path.
func Parse(b []byte, path string) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseValue(dec, path, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the JSON value")
	}
	return n, nil
}

// maxDepth guards the recursion against hostile nesting.
const maxDepth = 200

func parseValue(dec *json.Decoder, path string, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &Node{path: path, idx: -1}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n.kind = jObject
			return n, parseMembers(dec, n, depth)
		}
		n.kind = jArray
		return n, parseElements(dec, n, depth)
	case string:
		n.kind, n.text = jString, t
	case json.Number:
		n.kind, n.text = jNumber, t.String()
	case bool:
		n.kind, n.text = jBool, strconv.FormatBool(t)
	case nil:
		n.kind, n.text = jNull, "null"
	}
	return n, nil
}

func parseMembers(dec *json.Decoder, n *Node, depth int) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		kid, err := parseValue(dec, joinPath(n.path, name), depth+1)
		if err != nil {
			return err
		}
		kid.key, kid.parent = name, n
		n.kids = append(n.kids, kid)
	}
	_, err := dec.Token() // }
	return err
}

func parseElements(dec *json.Decoder, n *Node, depth int) error {
	for i := 0; dec.More(); i++ {
		kid, err := parseValue(dec, fmt.Sprintf("%s[%d]", n.path, i), depth+1)
		if err != nil {
			return err
		}
		kid.idx, kid.parent = i, n
		n.kids = append(n.kids, kid)
	}
	_, err := dec.Token() // ]
	return err
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// ObjectOf builds an object node from members already parsed (the detail
// view's root: the index document and the archived event side by side).
func ObjectOf(path string, kids ...*Node) *Node {
	n := &Node{kind: jObject, path: path, idx: -1}
	for _, k := range kids {
		k.parent = n
		n.kids = append(n.kids, k)
	}
	return n
}

// Note is a placeholder value: loading (spin) or an error.
func Note(key, path, text string, isErr, spin bool) *Node {
	return &Node{key: key, path: path, idx: -1, kind: jNote, text: text, errNote: isErr, spin: spin}
}

// Rekey sets a node's member name and re-roots every path under path.
func Rekey(n *Node, key, path string) *Node {
	n.key = key
	var walk func(n *Node, p string)
	walk = func(n *Node, p string) {
		n.path = p
		for _, k := range n.kids {
			if k.idx >= 0 {
				walk(k, fmt.Sprintf("%s[%d]", p, k.idx))
			} else {
				walk(k, joinPath(p, k.key))
			}
		}
	}
	walk(n, path)
	return n
}

// walk visits n and every node below it in document order.
func walk(n *Node, fn func(*Node)) {
	fn(n)
	for _, k := range n.kids {
		walk(k, fn)
	}
}

// MarkUnheld marks every member below root that held says nothing of.
// held is asked for paths relative to prefix ("input.text"); a member is
// unmarked when it or one below it is held.
func MarkUnheld(root *Node, prefix string, held func(rel string) bool) {
	var visit func(n *Node) bool // reports whether n or a descendant is held
	visit = func(n *Node) bool {
		rel := strings.TrimPrefix(strings.TrimPrefix(n.path, prefix), ".")
		if held(rel) {
			return true
		}
		any := false
		for _, k := range n.kids {
			if visit(k) {
				any = true
			}
		}
		n.mark = !any && n != root
		return any
	}
	visit(root)
}

// Member is the scalar at keys below n ("" when absent or not a scalar):
// the archived event's context.spanId, say, which no index field keeps.
func (n *Node) Member(keys ...string) string {
	for _, k := range keys {
		if n == nil {
			return ""
		}
		var next *Node
		for _, kid := range n.kids {
			if kid.key == k {
				next = kid
				break
			}
		}
		n = next
	}
	if n == nil || n.container() {
		return ""
	}
	return n.text
}
