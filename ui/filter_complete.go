package ui

import (
	"sort"
	"strings"

	"engram/model"
	"engram/query/expr"
)

// shownRows are the stream's rows held, whose values the filter bar
// completes.
func (m *Model) shownRows() []*model.IndexDoc {
	var out []*model.IndexDoc
	for _, d := range m.stream.Rows().All() {
		out = append(out, d)
	}
	return out
}

// filterFields are the field names tab completes, keyword fields with
// their colon.
func filterFields() []string {
	var out []string
	for _, f := range expr.KeywordFields {
		out = append(out, f+":")
	}
	out = append(out, expr.NumericFields...)
	return append(out, expr.FieldSuccess+":", expr.FieldSince+":", expr.FieldUntil+":")
}

// docValues are the values of a field in a document, for completion.
var docValues = map[string]func(*model.IndexDoc) []string{
	expr.FieldAgent:   func(d *model.IndexDoc) []string { return []string{d.AgentID} },
	expr.FieldTool:    func(d *model.IndexDoc) []string { return []string{d.Tool} },
	expr.FieldType:    func(d *model.IndexDoc) []string { return []string{d.EventType} },
	expr.FieldSession: func(d *model.IndexDoc) []string { return []string{d.SessionID} },
	expr.FieldTenant:  func(d *model.IndexDoc) []string { return []string{d.TenantID} },
	expr.FieldTag:     func(d *model.IndexDoc) []string { return d.Tags },
}

// completeWord completes the last word of typed: a field name, or the
// value of a field among those of rows. It returns the text completed (as
// far as the candidates agree) and the candidates when several remain.
func completeWord(typed string, rows []*model.IndexDoc) (string, []string) {
	i := strings.LastIndexByte(typed, ' ') + 1
	head, word := typed[:i], typed[i:]
	field, prefix, isValue := strings.Cut(word, ":")
	var cands []string
	if !isValue {
		cands, prefix = filterFields(), word
	} else if get := docValues[field]; get != nil {
		cands = valuesOf(rows, get)
		head += field + ":"
	}
	var hits []string
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && c != "" && !strings.ContainsAny(c, " \"") {
			hits = append(hits, c)
		}
	}
	switch len(hits) {
	case 0:
		return typed, nil
	case 1:
		if isValue { // a whole value: the next term follows
			return head + hits[0] + " ", nil
		}
		return head + hits[0], nil // a field: its value or comparison follows
	}
	return head + commonPrefix(hits), hits
}

func valuesOf(rows []*model.IndexDoc, get func(*model.IndexDoc) []string) []string {
	seen := map[string]bool{}
	for _, d := range rows {
		for _, v := range get(d) {
			seen[v] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
