package compare

import (
	"encoding/json"
	"strings"
)

// NumberOf is a JSON number's value, nil for anything else.
func NumberOf(v json.RawMessage) *float64 { return number(v) }

// Numbers reports whether v is a JSON array of numbers only, and how many:
// an embedding, which people want counted rather than printed.
func Numbers(v json.RawMessage) (int, bool) {
	if len(v) == 0 || v[0] != '[' {
		return 0, false
	}
	var xs []float64
	if json.Unmarshal(v, &xs) != nil {
		return 0, false
	}
	return len(xs), true
}

// Elide shortens a run of kept words between changes to its context words
// on each side that borders a change (before: a change comes before it;
// after: one comes after it), the cut marked with "…".
func Elide(s string, context int, before, after bool) string {
	if !before && !after {
		return s
	}
	ts := tokens(s)
	keep := 0
	if before {
		keep += context
	}
	if after {
		keep += context
	}
	if len(ts) <= keep+1 {
		return s
	}
	var b strings.Builder
	if before {
		b.WriteString(strings.Join(ts[:context], ""))
	}
	b.WriteString("…")
	if after {
		b.WriteString(strings.Join(ts[len(ts)-context:], ""))
	}
	return b.String()
}
