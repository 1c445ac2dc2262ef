package ui

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

// jnode is one value of a parsed JSON document, members kept in order.
type jnode struct {
	key    string // member name; "" for array elements and the root
	idx    int    // index in the parent array, else -1
	kind   jkind
	text   string // scalars: the decoded string or the literal; notes: the text
	kids   []*jnode
	path   string // "archive.input.embedding", "index.tags[0]"
	parent *jnode
	// mark: an archived member that the index does not hold.
	mark bool
	// errNote: a note saying what failed; spin: a note still loading.
	errNote, spin bool
}

func (n *jnode) container() bool { return n.kind == jObject || n.kind == jArray }

// parseJSON reads one JSON value into a tree rooted at path.
func parseJSON(b []byte, path string) (*jnode, error) {
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

func parseValue(dec *json.Decoder, path string, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &jnode{path: path, idx: -1}
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

func parseMembers(dec *json.Decoder, n *jnode, depth int) error {
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

func parseElements(dec *json.Decoder, n *jnode, depth int) error {
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

// objectOf builds an object node from members already parsed (the detail
// view's root: the index document and the archived event side by side).
func objectOf(path string, kids ...*jnode) *jnode {
	n := &jnode{kind: jObject, path: path, idx: -1}
	for _, k := range kids {
		k.parent = n
		n.kids = append(n.kids, k)
	}
	return n
}

// noteNode is a placeholder value: loading (spin) or an error.
func noteNode(key, path, text string, isErr, spin bool) *jnode {
	return &jnode{key: key, path: path, idx: -1, kind: jNote, text: text, errNote: isErr, spin: spin}
}

// rekey sets a node's member name and re-roots every path under path.
func rekey(n *jnode, key, path string) *jnode {
	n.key = key
	var walk func(n *jnode, p string)
	walk = func(n *jnode, p string) {
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
func walk(n *jnode, fn func(*jnode)) {
	fn(n)
	for _, k := range n.kids {
		walk(k, fn)
	}
}

// indexHeld lists the archived members the index document holds (schema.md
// section 4), relative to the event. Members under a listed one are held too.
var indexHeld = map[string]bool{
	"eventId": true, "timestamp": true, "type": true,
	"context.sessionId": true, "context.userId": true, "context.agentId": true,
	"context.turnId": true, "context.tenantId": true, "context.traceId": true,
	"input.text": true, "input.embedding": true, "input.structured": true,
	"importanceScore": true, "evaluation.rewardScore": true,
	"internalState.confidence": true, "objectStorageKey": true, "tags": true,
	"action.tool": true, "result.success": true, "result.latencyMs": true,
}

// markUnindexed sets mark on every member of an archived event (rooted at
// prefix) that the index holds nothing of.
func markUnindexed(root *jnode, prefix string) {
	var visit func(n *jnode) bool // reports whether n or a descendant is held
	visit = func(n *jnode) bool {
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

func held(rel string) bool {
	for p := rel; p != ""; {
		if indexHeld[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
	return false
}
