package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
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
			x.Rank, x.K, ordinal(x.K), x.Kth.Score)
	}
	s := fmt.Sprintf("rank %d, outside the top %d: %.3f below the %s result (%.3f); %s kept it out (gap %.3f)",
		x.Rank, x.K, x.Gap, ordinal(x.K), x.Kth.Score, x.Decisive, x.Gaps[x.Decisive])
	if x.Alone {
		s += fmt.Sprintf("; at %s 1.0 it would be in", x.Decisive)
	} else {
		s += fmt.Sprintf("; even at %s 1.0 it would stay out", x.Decisive)
	}
	return s
}

func ordinal(n int) string {
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

// Embedder embeds the prompt (ingest.Embedder has this method).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// Engine runs a recall: it embeds the prompt, asks the Searcher for the
// candidates and ranks them. Embedder may be nil (no similarity).
type Engine struct {
	Searcher Searcher
	Embedder Embedder
	Window   int // Request.Window; 0: DefaultWindow
	K        int // the top K shown, for Request.Nearest; 0: 10
	// Settings are the configured ones (recall.*): what a view starts
	// from; Run takes its own.
	Settings Settings
	Now      func() time.Time
}

// Run is the ranked candidates of text filtered by expr (every candidate,
// best first: the caller shows the top K), with the answer's note.
func (e *Engine) Run(ctx context.Context, text, expr string, ids []string, s Settings) ([]Candidate, []Result, string, error) {
	if e == nil || e.Searcher == nil {
		return nil, nil, "", errors.New("recall: no index to recall from")
	}
	req := Request{Text: text, Expr: expr, Window: e.Window, IDs: ids, Nearest: NearestFor(max(e.K, 10))}
	if req.Window <= 0 {
		req.Window = DefaultWindow
	}
	if e.Embedder != nil && strings.TrimSpace(text) != "" {
		vs, err := e.Embedder.Embed(ctx, []string{text})
		if err != nil {
			return nil, nil, "", fmt.Errorf("recall: embedding the prompt: %w", err)
		}
		if len(vs) == 1 {
			req.Vector = vs[0]
		}
	}
	ans, err := e.Searcher.Recall(ctx, req)
	if err != nil {
		return nil, nil, "", err
	}
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	return ans.Candidates, Rank(ans.Candidates, s, now), ans.Note, nil
}
