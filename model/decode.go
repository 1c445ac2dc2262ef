package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// DecodeOptions supplies what decoding may need from outside: the CaseHub
// shape can lack an id and a timestamp, and model does no I/O of its own.
type DecodeOptions struct {
	Now   func() time.Time
	NewID func() string
}

func set(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }

// Decode parses one JSON object as an experience event, accepting the
// CaseHub shape too. It does not validate; call Validate on the result.
// data is copied, so the caller may reuse its buffer.
func Decode(data []byte, opt DecodeOptions) (*Event, error) {
	data, lead := trimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, Problems{{"", "expected a JSON object"}}
	}
	if e := decodeFast(data); e != nil {
		return e, nil
	}
	return decodeSlow(data, lead, opt)
}

// trimSpace takes the white space off data's ends and says how many bytes
// of it came first.
func trimSpace(data []byte) ([]byte, int64) {
	trimmed := bytes.TrimLeft(data, jsonSpace)
	return bytes.TrimRight(trimmed, jsonSpace), int64(len(data) - len(trimmed))
}

// decodeSlow is Decode for every event decodeFast leaves to it.
func decodeSlow(data []byte, lead int64, opt DecodeOptions) (*Event, error) {
	// One decode both checks the syntax (encoding/json scans the whole
	// value before it decodes any of it) and, in the common case where
	// every member name is matched exactly and given once, is the decode.
	e := &Event{}
	err := json.Unmarshal(data, e)
	if syn := (*json.SyntaxError)(nil); errors.As(err, &syn) {
		return nil, syntaxProblem(data, lead)
	}
	// What the decoder reads: members matched exactly (see exactMembers).
	// The raw event, kept for the archive, stays as it came. Which members
	// are given (and not null) is noted on the way, where "absent" and
	// "zero" differ.
	given := make(map[string]bool, 32)
	norm, ps := exactMembers(data, "", knownMembers, given)
	if len(ps) > 0 {
		return nil, ps
	}
	// The shape is told apart before anything is typed: a CaseHub outcome's
	// result is a string, a native event's an object. An object without
	// input that carries a member only CaseHub has is a CaseHub event, so
	// that one lacking its description is told so.
	if caseHubShape(given["input"], given["description"] || given["kind"] || given["caseId"]) {
		return decodeCaseHub(norm, opt)
	}
	if len(norm) != len(data) || &norm[0] != &data[0] {
		e = &Event{} // exactMembers left some members out: decode what it kept
		err = json.Unmarshal(norm, e)
	}
	e.present = presence{
		context:    given["context"],
		input:      given["input"],
		importance: given["importanceScore"],
		tags:       given["tags"],
		text:       given["input.text"],
		embedding:  given["input.embedding"],
		confidence: given["internalState.confidence"],
		output:     given["result.output"],
		reward:     given["evaluation.rewardScore"],
		quality:    given["evaluation.selfAssessedQuality"],
	}
	if err != nil {
		return nil, allProblems(norm, e, err)
	}
	e.raw = bytes.Clone(data)
	return e, nil
}

// caseHubShape is the rule that tells the shapes apart: an object without
// input that gives a member only CaseHub has (description, kind, caseId)
// is a CaseHub event.
func caseHubShape(input, caseHubMember bool) bool { return !input && caseHubMember }

// syntaxProblem says where data, which is not valid JSON, goes wrong;
// lead is how many bytes of white space came before it.
func syntaxProblem(data []byte, lead int64) error {
	err := json.Unmarshal(data, new(json.RawMessage))
	// Offsets count from the caller's first byte, not the trimmed one.
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		syn.Offset += lead
	}
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return jsonProblem(err)
}

// allProblems: encoding/json reports the first member of the wrong type
// and decodes the rest as best it can. An author wants every problem at
// once: each member is decoded alone to find its own, then the rest of the
// event (as decoded) is validated, leaving out what those members hold.
func allProblems(norm []byte, e *Event, err error) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return jsonProblem(err)
	}
	ps := memberProblems(norm, "")
	if len(ps) == 0 { // cannot happen: the whole failed, so a member does
		return jsonProblem(err)
	}
	for _, v := range e.Validate() {
		if !ps.cover(v.Path) {
			ps = append(ps, v)
		}
	}
	return ps
}

// memberProblems decodes each member of the object obj (at path) alone in
// an event, descending one level into objects, and collects their type
// problems.
func memberProblems(obj []byte, path string) Problems {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil {
		return nil
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	slices.Sort(names)
	var ps Problems
	for _, k := range names {
		doc := wrap(path, k, members[k])
		if json.Unmarshal(doc, new(Event)) == nil {
			continue
		}
		sub := Problems(nil)
		if path == "" && len(members[k]) > 0 && members[k][0] == '{' {
			sub = memberProblems(members[k], k)
		}
		if len(sub) == 0 {
			sub = jsonProblem(json.Unmarshal(doc, new(Event)))
		}
		ps = append(ps, sub...)
	}
	return ps
}

// wrap is {"path": {"k": v}} (or {"k": v} at the top).
func wrap(path, k string, v json.RawMessage) []byte {
	name, _ := json.Marshal(k)
	doc := append(append(append([]byte{'{'}, name...), ':'), v...)
	if path != "" {
		outer, _ := json.Marshal(path)
		doc = append(append(append([]byte{'{'}, outer...), ':'), append(doc, '}')...)
	}
	return append(doc, '}')
}

// cover reports whether a problem already names path or what holds it.
func (ps Problems) cover(path string) bool {
	for _, p := range ps {
		if p.Path == path || strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(path, p.Path+"[") {
			return true
		}
	}
	return false
}

// jsonProblem turns encoding/json's errors into a located Problem.
func jsonProblem(err error) Problems {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "exceeded max depth"):
		return Problems{{"", fmt.Sprintf("nested too deeply at byte %d (JSON deeper than 10000 levels is refused)", syn.Offset)}}
	case errors.As(err, &syn):
		return Problems{{"", fmt.Sprintf("invalid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))}}
	case errors.As(err, &typ):
		path := typ.Field
		if strings.HasPrefix(typ.Value, "number ") && (typ.Type.Kind() == reflect.Float64 || typ.Type.Kind() == reflect.Float32) {
			return Problems{{path, strings.TrimPrefix(typ.Value, "number ") + " is not a finite number"}}
		}
		return Problems{{path, fmt.Sprintf("expected %s, got %s", jsonKind(typ.Type), typ.Value)}}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.Contains(msg, "exceeded max depth") {
		msg = "nested too deeply"
	}
	return Problems{{"", msg}}
}

// jsonKind names a Go type the way a JSON author would. It goes by kind,
// not by name: the wire's blocks are anonymous structs.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t == reflect.TypeFor[json.RawMessage]() {
			return "a JSON value"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

// jsonSpace is what JSON counts as white space (bytes.TrimSpace would also
// take Unicode spaces such as U+00A0, which are not).
const jsonSpace = " \t\r\n"

// memberSet is the member names engram reads from one JSON object, each with
// the names of its own members where it is an object engram reads too.
type memberSet map[string]memberSet

// knownMembers is every member name Decode reads: the event's and the
// CaseHub shape's.
var knownMembers = membersOf(reflect.TypeFor[Event](), reflect.TypeFor[caseHubEvent]())

// knownNames and knownPaths hold, once, the strings exactMembers would
// otherwise make for every member of every event: each known name, and the
// path of each known member under its parent's path.
var knownNames, knownPaths = namesOf(knownMembers, "", map[string]string{}, map[string]map[string]string{})

func namesOf(set memberSet, path string, names map[string]string, paths map[string]map[string]string) (map[string]string, map[string]map[string]string) {
	if paths[path] == nil {
		paths[path] = map[string]string{}
	}
	for name, sub := range set {
		names[name] = name
		paths[path][name] = joinPath(path, name)
		if sub != nil {
			namesOf(sub, joinPath(path, name), names, paths)
		}
	}
	return names, paths
}

// memberPath is joinPath for a known member, without making the string.
func memberPath(path, name string) string {
	if p, ok := knownPaths[path][name]; ok {
		return p
	}
	return joinPath(path, name)
}

func membersOf(types ...reflect.Type) memberSet {
	m := memberSet{}
	for _, t := range types {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && m[name] == nil {
				m[name] = membersOf(ft)
			} else if _, ok := m[name]; !ok {
				m[name] = nil
			}
		}
	}
	return m
}

// exactMembers returns data as the decoder must read it to agree with the
// source system (JavaScript): a member matching a known name only ignoring
// case is dropped (kept in the raw event as unknown), and a known member
// given twice is a problem rather than merged. It records in given the path
// of every known member whose value is not null.
func exactMembers(data []byte, path string, known memberSet, given map[string]bool) ([]byte, Problems) {
	obj, err := splitValid(data)
	if err != nil {
		return data, nil // not an object: the decoder reports it
	}
	var ps Problems
	var seen nameSet
	changed := false
	kept := obj[:0] // filtered in place: it never gets ahead of the loop
	for _, m := range obj {
		sub, ok := known[m.name]
		if !ok {
			if foldsToKnown(known, m.name) {
				changed = true
				continue
			}
			kept = append(kept, m)
			continue
		}
		mp := memberPath(path, m.name)
		if seen.add(m.name) {
			ps.add(mp, "given more than once")
			continue
		}
		given[mp] = set(m.value)
		if sub != nil && len(m.value) > 0 && m.value[0] == '{' {
			v, sps := exactMembers(m.value, mp, sub, given)
			ps = append(ps, sps...)
			if !bytes.Equal(v, m.value) {
				m.value, changed = v, true
			}
		}
		kept = append(kept, m)
	}
	if !changed {
		return data, ps
	}
	return kept.encode(), ps
}

// nameSet remembers the known member names an object has given; most
// objects are small, and an array on the stack spares them a map.
type nameSet struct {
	few  [16]string
	n    int
	many map[string]bool
}

// add records name and reports whether it was there already.
func (s *nameSet) add(name string) bool {
	if s.many == nil && s.n < len(s.few) {
		if slices.Contains(s.few[:s.n], name) {
			return true
		}
		s.few[s.n] = name
		s.n++
		return false
	}
	if s.many == nil {
		s.many = make(map[string]bool, 2*len(s.few))
		for _, n := range s.few {
			s.many[n] = true
		}
	}
	had := s.many[name]
	s.many[name] = true
	return had
}

func foldsToKnown(known memberSet, name string) bool {
	for k := range known {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
