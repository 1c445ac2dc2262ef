package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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

// DeltaText is a measure's change for people: "+360 (+300%)", "0",
// "only left", "only right", or "" when neither side has it.
func DeltaText(l, r, d *float64) string {
	switch {
	case l == nil && r == nil:
		return ""
	case r == nil:
		return "only left"
	case l == nil:
		return "only right"
	case d == nil || *d == 0:
		return "0"
	}
	// Six significant digits (no 0.30000000000000004), never an exponent.
	sig, _ := strconv.ParseFloat(strconv.FormatFloat(*d, 'g', 6, 64), 64)
	s := strconv.FormatFloat(sig, 'f', -1, 64)
	if *d > 0 {
		s = "+" + s
	}
	if *l != 0 {
		s += " (" + percent(*d / *l * 100) + ")"
	}
	return s
}

// percent is a signed percentage with as many decimals as a small one
// needs.
func percent(p float64) string {
	switch a := math.Abs(p); {
	case a < 1:
		return fmt.Sprintf("%+.2f%%", p)
	case a < 10:
		return fmt.Sprintf("%+.1f%%", p)
	}
	return fmt.Sprintf("%+.0f%%", p)
}
