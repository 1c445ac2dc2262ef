package ui

import (
	"slices"
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

// filterCands are the completions of the last word of typed: field
// names, or the values of a field (those of rows, and for type: and
// success: every value the language takes). head is the text before the
// candidates; a value completed whole is followed by a space.
func filterCands(typed string, rows []*model.IndexDoc) (head string, cands []string, spaced bool) {
	i := strings.LastIndexByte(typed, ' ') + 1
	head, word := typed[:i], typed[i:]
	field, prefix, isValue := strings.Cut(word, ":")
	var all []string
	switch {
	case !isValue:
		all, prefix = filterFields(), word
	case field == expr.FieldType:
		all = mergeSorted(valuesOf(rows, docValues[field]), model.EventTypes)
	case field == expr.FieldSuccess:
		all = []string{"true", "false"}
	case field == expr.FieldSource:
		all = model.Sources
	case docValues[field] != nil:
		all = valuesOf(rows, docValues[field])
	}
	if isValue {
		head += field + ":"
	}
	for _, c := range all {
		if strings.HasPrefix(c, prefix) && c != "" && !strings.ContainsAny(c, " \"") {
			cands = append(cands, c)
		}
	}
	return head, cands, isValue
}

// mergeSorted is the values of a and b, once each, sorted.
func mergeSorted(a, b []string) []string {
	out := append(append([]string{}, a...), b...)
	sort.Strings(out)
	return slices.Compact(out)
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
