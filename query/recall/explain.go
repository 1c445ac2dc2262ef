package recall

import (
	"fmt"
	"math"
	"strings"
)

// Explanation says why an event is not (or is) in the top K.
type Explanation struct {
	Result         // the event's rank, factors and contributions
	K       int    // the top K asked for
	Kth     Result // the K-th result, the one it had to beat
	In      bool   // it is in the top K
	Missing bool   // not among the candidates at all (Result is zero)
	// Gap is the score it lacks to pass the K-th (0 when In).
	Gap float64
	// Gaps are, per factor, how much more the K-th result's factor
	// contributes than the event's (in the salience formula, the log of
	// the ratio of their values).
	Gaps [NumFactors]float64
	// Decisive is the factor whose gap is largest: what kept it out.
	Decisive Factor
	// Alone: raising the decisive factor to 1, every other factor as it
	// is, would bring the event into the top K.
	Alone bool
}

// Explain is why the event id ranks where it does among ranked (the
// output of Rank) for a top k, under s.
func Explain(ranked []Result, k int, id string, s Settings) Explanation {
	x := Explanation{K: k}
	if len(ranked) == 0 || k <= 0 {
		x.Missing = true
		return x
	}
	i := -1
	for j, r := range ranked {
		if r.Doc != nil && r.Doc.EventID == id {
			i = j
			break
		}
	}
	if i < 0 {
		x.Missing = true
		return x
	}
	x.Result = ranked[i]
	x.Kth = ranked[min(k, len(ranked))-1]
	x.In = i < k
	if x.In {
		return x
	}
	x.Gap = x.Kth.Score - x.Score
	best := math.Inf(-1)
	for f := range NumFactors {
		if !s.Formula.uses(f) {
			continue
		}
		if s.Formula == Salience {
			x.Gaps[f] = math.Log(math.Max(x.Kth.Values[f], 1e-9)) - math.Log(math.Max(x.Values[f], 1e-9))
		} else {
			x.Gaps[f] = x.Kth.Parts[f] - x.Parts[f]
		}
		if x.Gaps[f] > best {
			best, x.Decisive = x.Gaps[f], f
		}
	}
	x.Alone = x.scoreWith(x.Decisive, 1, s) > x.Kth.Score
	return x
}

// scoreWith is the event's score with factor f at v.
func (x Explanation) scoreWith(f Factor, v float64, s Settings) float64 {
	vals := x.Values
	vals[f] = v
	if s.Formula == Salience {
		return vals[Recency] * vals[Importance]
	}
	sum := s.Weights.sum()
	var score float64
	for g := range NumFactors {
		score += s.Weights[g] * vals[g] / sum
	}
	return score
}

// Why is the explanation in a sentence.
func (x Explanation) Why() string {
	switch {
	case x.Missing:
		return "not among the candidates: neither its text nor its embedding brought it in (or the filter excludes it)"
	case x.In:
		return fmt.Sprintf("in the top %d, at rank %d", x.K, x.Rank)
	}
	if x.Gap <= 1e-12 {
		return fmt.Sprintf("rank %d, outside the top %d: its score ties with the %s result's (%.3f), and a tie goes to the newer event, then the smaller id",
			x.Rank, x.K, Ordinal(x.K), x.Kth.Score)
	}
	s := fmt.Sprintf("rank %d, outside the top %d: %.3f below the %s result (%.3f); %s kept it out (gap %.3f)",
		x.Rank, x.K, x.Gap, Ordinal(x.K), x.Kth.Score, x.Decisive, x.Gaps[x.Decisive])
	if x.Alone {
		s += fmt.Sprintf("; at %s 1.0 it would be in", x.Decisive)
	} else {
		s += fmt.Sprintf("; even at %s 1.0 it would stay out", x.Decisive)
	}
	return s
}

// Ordinal is n as the explanation says it: 1st, 2nd, 10th, 11th.
func Ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return fmt.Sprintf("%d%s", n, suf)
}

// Bar is v (in [0, 1]) as a bar of width cells, eighths of a cell
// drawn with the block elements.
func Bar(v float64, width int) string {
	if width <= 0 {
		return ""
	}
	eighths := int(math.Round(clamp01(v) * float64(width*8)))
	var b strings.Builder
	full := eighths / 8
	b.WriteString(strings.Repeat("█", full))
	if rest := eighths % 8; rest > 0 && full < width {
		b.WriteRune([]rune(" ▏▎▍▌▋▊▉")[rest])
		full++
	}
	b.WriteString(strings.Repeat(" ", width-full))
	return b.String()
}
