package query

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"engram/query/expr"
)

// FieldCoverage is implemented by readers that can say which of engram's
// extension fields (data-contract.md section 4) the documents carry. An
// index the source system wrote has none of them, so a filter on one finds
// nothing there; the callers use Coverage to say so instead of answering
// "no events" without a word.
type FieldCoverage interface {
	Coverage(ctx context.Context) (Coverage, error)
}

// Coverage is what an index holds of the extension fields, within the
// reader's tenant scope, as of At.
type Coverage struct {
	// Total is the number of documents visible.
	Total int64
	// Plain is the number of them without ingested_at: written by the
	// source system (or anything else without engram's extensions).
	Plain int64
	// Lacking is, per index field of extensionFields, how many of the
	// documents lack it because they were written without the extensions:
	// Plain documents without the field. (An engram document without tool
	// is a user input, not a gap, so it is not counted.)
	Lacking map[string]int64
	// Unmapped are the extension fields the mapping does not declare at
	// all (no document can match a filter on them).
	Unmapped []string
	At       time.Time
}

// Partial reports whether some documents lack the extensions.
func (c Coverage) Partial() bool { return c.Plain > 0 }

// extensionFields maps the filter fields that test an extension field to
// that field of the index document.
var extensionFields = map[string]string{
	expr.FieldTool:    "tool",
	expr.FieldSuccess: "success",
	expr.FieldLatency: "latency_ms",
	expr.FieldTenant:  "tenant_id",
	expr.FieldTrace:   "trace_id",
	expr.FieldTurn:    "turn_id",
}

// reindexHint is what an operator can do about an index without the
// extensions.
const reindexHint = "see engram reindex --into"

// CoverageWarnings are the warnings for the filter src on r: one per
// extension field it tests that some documents lack, with the numbers.
// Nil when r cannot tell (no FieldCoverage), when src does not parse, or
// when every document carries the extensions. Only a failure to ask the
// index is an error.
func CoverageWarnings(ctx context.Context, r Reader, src string) ([]string, error) {
	fc, ok := r.(FieldCoverage)
	if !ok || src == "" {
		return nil, nil
	}
	fields := ExtensionTerms(src)
	if len(fields) == 0 {
		return nil, nil
	}
	c, err := fc.Coverage(ctx)
	if err != nil {
		return nil, err
	}
	return c.Warnings(fields), nil
}

// ExtensionTerms are the filter fields of extensionFields that src tests,
// once each, in their order; nil when src does not parse (its syntax
// error is reported where it is applied).
func ExtensionTerms(src string) []string {
	e, err := expr.Parse(src)
	if err != nil {
		return nil
	}
	var fields []string
	seen := map[string]bool{}
	for _, t := range e.Terms {
		f := ""
		switch t.Kind {
		case expr.KindField, expr.KindCompare:
			f = t.Field
		case expr.KindSuccess:
			f = expr.FieldSuccess
		}
		if extensionFields[f] != "" && !seen[f] {
			seen[f] = true
			fields = append(fields, f)
		}
	}
	return fields
}

// Warnings are the warnings for filters on the given filter fields.
func (c Coverage) Warnings(fields []string) []string {
	var out []string
	for _, f := range fields {
		ix := extensionFields[f]
		if ix == "" {
			continue
		}
		n := c.Lacking[ix]
		unmapped := false
		for _, u := range c.Unmapped {
			unmapped = unmapped || u == ix
		}
		if unmapped {
			n = c.Total
		}
		if n == 0 {
			continue
		}
		what := "written without engram's extensions"
		if f == expr.FieldTurn {
			what += ", so their turn is their trace or the event alone"
		}
		out = append(out, fmt.Sprintf("%s: %s of %s documents have no %s field — %s; %s",
			f, Thousands(n), Thousands(c.Total), ix, what, reindexHint))
	}
	return out
}

// Mark is a short note for a header when some documents lack the
// extensions ("" when none do): "3,320 of 3,320 documents without
// engram's extensions".
func (c Coverage) Mark() string {
	if !c.Partial() {
		return ""
	}
	return fmt.Sprintf("%s of %s documents without engram's extensions", Thousands(c.Plain), Thousands(c.Total))
}

// Thousands writes n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
