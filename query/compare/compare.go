package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Status is how a field compares.
type Status string

// The statuses of a Field.
const (
	Same      Status = "same"
	Changed   Status = "changed"
	OnlyLeft  Status = "only_left"
	OnlyRight Status = "only_right"
)

// Field is one flattened JSON path of the two events.
type Field struct {
	// Path is the member names joined by dots (context.sessionId); an
	// array is one value, not flattened.
	Path   string `json:"path"`
	Status Status `json:"status"`
	// Left and Right are the JSON values; absent on the side that lacks
	// the field, and left out when Words holds them.
	Left  json.RawMessage `json:"left,omitempty"`
	Right json.RawMessage `json:"right,omitempty"`
	// Delta is Right − Left when both are numbers.
	Delta *float64 `json:"delta,omitempty"`
	// Words, for a changed long text, is its word diff: the "=" and "-"
	// spans give the left text, the "=" and "+" spans the right.
	Words []Span `json:"words,omitempty"`
}

// Counts are how many fields have each status.
type Counts struct {
	Same      int `json:"same"`
	Changed   int `json:"changed"`
	OnlyLeft  int `json:"only_left"`
	OnlyRight int `json:"only_right"`
}

// Differ reports whether anything differs.
func (c Counts) Differ() bool { return c.Changed+c.OnlyLeft+c.OnlyRight > 0 }

// Delta is one of the measures compared by number (Measures).
type Delta struct {
	Name  string   `json:"name"`
	Path  string   `json:"path"`
	Left  *float64 `json:"left"`
	Right *float64 `json:"right"`
	Delta *float64 `json:"delta"`
}

// measures are the numbers every comparison of two events shows first,
// present or not: name and path in the archived event.
var measures = []struct{ Name, Path string }{
	{"latency_ms", "result.latencyMs"},
	{"reward", "evaluation.rewardScore"},
	{"importance", "importanceScore"},
	{"confidence", "internalState.confidence"},
}

// textPaths are the fields always diffed word by word when they differ;
// any other string is too once either side is longer than longText runes
// or holds a line break.
var textPaths = map[string]bool{
	"input.text": true, "action.reasoning": true, "result.output": true,
	"internalState.workingMemorySnapshot": true, "internalState.activePlan": true,
}

// longText is the length from which a string is diffed word by word.
const longText = 60

// diffFields compares two JSON objects member by member: both flattened to
// their paths, in the left's order with the right's own paths after the
// path that precedes them on the right. Either side may be nil (absent).
func diffFields(left, right []byte) ([]Field, Counts) {
	l, r := flatten(left), flatten(right)
	lv := make(map[string]json.RawMessage, len(l))
	for _, p := range l {
		lv[p.path] = p.value
	}
	rv := make(map[string]json.RawMessage, len(r))
	for _, p := range r {
		rv[p.path] = p.value
	}
	var out []Field
	var c Counts
	for _, path := range mergeOrder(l, r) {
		f := compareField(path, lv[path], rv[path])
		switch f.Status {
		case Same:
			c.Same++
		case Changed:
			c.Changed++
		case OnlyLeft:
			c.OnlyLeft++
		case OnlyRight:
			c.OnlyRight++
		}
		out = append(out, f)
	}
	return out, c
}

// measuresOf picks the Measures out of compared fields.
func measuresOf(fields []Field) []Delta {
	by := make(map[string]Field, len(fields))
	for _, f := range fields {
		by[f.Path] = f
	}
	out := make([]Delta, 0, len(measures))
	for _, m := range measures {
		f := by[m.Path]
		d := Delta{Name: m.Name, Path: m.Path, Left: number(f.Left), Right: number(f.Right)}
		if d.Left != nil && d.Right != nil {
			d.Delta = ptr(*d.Right - *d.Left)
		}
		out = append(out, d)
	}
	return out
}

func compareField(path string, l, r json.RawMessage) Field {
	f := Field{Path: path, Left: l, Right: r}
	switch {
	case l == nil:
		f.Status = OnlyRight
		return f
	case r == nil:
		f.Status = OnlyLeft
		return f
	}
	if sameJSON(l, r) {
		f.Status = Same
		return f
	}
	f.Status = Changed
	if a, b := number(l), number(r); a != nil && b != nil {
		f.Delta = ptr(*b - *a)
		return f
	}
	var a, b string
	if json.Unmarshal(l, &a) == nil && json.Unmarshal(r, &b) == nil && isText(path, a, b) {
		f.Words, f.Left, f.Right = diffWords(a, b), nil, nil
	}
	return f
}

func isText(path, a, b string) bool {
	return textPaths[path] || utf8.RuneCountInString(a) > longText || utf8.RuneCountInString(b) > longText ||
		bytes.ContainsAny([]byte(a+b), "\n")
}

// sameJSON: equal as JSON values (numbers by value, objects ignoring
// member order and white space).
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// number is a JSON number's value, nil for anything else.
func number(v json.RawMessage) *float64 {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func ptr[T any](v T) *T { return &v }

// leaf is one flattened path and its value.
type leaf struct {
	path  string
	value json.RawMessage
}

// flatten lists the leaves of a JSON value in member order: objects are
// walked (an empty one is a leaf), anything else — arrays included — is a
// leaf. A value that is not JSON is one leaf at path "" holding it as a
// string; nil is no leaves.
func flatten(raw []byte) []leaf {
	if raw == nil {
		return nil
	}
	var out []leaf
	if !json.Valid(raw) {
		s, _ := json.Marshal(string(raw))
		return []leaf{{"", s}}
	}
	walk("", bytes.TrimSpace(raw), &out)
	return out
}

func walk(path string, raw json.RawMessage, out *[]leaf) {
	ms, ok := members(raw)
	if !ok || len(ms) == 0 {
		*out = append(*out, leaf{path, raw})
		return
	}
	for _, m := range ms {
		p := m.name
		if path != "" {
			p = path + "." + m.name
		}
		walk(p, m.value, out)
	}
}

type member struct {
	name  string
	value json.RawMessage
}

// members are an object's members in order (a name given twice keeps its
// last value, in its first place); ok is false for anything but an object.
func members(raw json.RawMessage) ([]member, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var ms []member
	at := map[string]int{}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if i, seen := at[name]; seen {
			ms[i].value = v
			continue
		}
		at[name] = len(ms)
		ms = append(ms, member{name, v})
	}
	return ms, true
}

// mergeOrder is the paths of both sides: the left's in order, each path
// only on the right placed after the path before it on the right.
func mergeOrder(l, r []leaf) []string {
	out := make([]string, 0, len(l)+len(r))
	pos := make(map[string]bool, len(l))
	for _, p := range l {
		out = append(out, p.path)
		pos[p.path] = true
	}
	prev := -1
	for _, p := range r {
		if pos[p.path] {
			for i, q := range out { // fields are few; a scan is enough
				if q == p.path {
					prev = i
					break
				}
			}
			continue
		}
		out = append(out, "")
		copy(out[prev+2:], out[prev+1:])
		out[prev+1] = p.path
		pos[p.path] = true
		prev++
	}
	return out
}
