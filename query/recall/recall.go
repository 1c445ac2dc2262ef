package recall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"engram/model"
)

// Factor is one reason a candidate ranks where it does.
type Factor int

// The factors, in the order they are shown.
const (
	Text       Factor = iota // BM25 of the prompt's words, normalised within the candidates
	Similarity               // cosine of the prompt's embedding and the document's, below 0 counted 0
	Importance               // importance_score
	Recency                  // 0.5^(age / half-life)
	Reward                   // reward_score
	Decay                    // decay_factor (1: not decayed)
	NumFactors
)

var factorNames = [NumFactors]string{"text", "similarity", "importance", "recency", "reward", "decay"}

// String is the factor's name as settings and output spell it.
func (f Factor) String() string {
	if f < 0 || f >= NumFactors {
		return "factor(" + strconv.Itoa(int(f)) + ")"
	}
	return factorNames[f]
}

// Short is the factor's three-letter column title.
func (f Factor) Short() string {
	return [NumFactors]string{"txt", "sim", "imp", "rec", "rwd", "dcy"}[f]
}

// parseFactor is the factor named s.
func parseFactor(s string) (Factor, error) {
	for i, n := range factorNames {
		if strings.EqualFold(s, n) {
			return Factor(i), nil
		}
	}
	return 0, fmt.Errorf("unknown factor %q: want %s", s, strings.Join(factorNames[:], ", "))
}

// Weights weigh the factors in the hybrid formula. They are relative: the
// score divides them by their sum, so it stays in [0, 1].
type Weights [NumFactors]float64

// DefaultWeights puts relevance to the prompt first (text and similarity, as
// hybrid BM25 + k-NN retrieval), then the policy signals the index keeps
// for ranking (importance and recency, the source systems' salience),
// reward and decay a little.
func DefaultWeights() Weights { return Weights{0.30, 0.30, 0.15, 0.15, 0.05, 0.05} }

// ParseWeights reads "text=0.3,similarity=0.3,...": the factors it names,
// every other one weighing 0 ("text=1" ranks by text alone).
func ParseWeights(s string) (Weights, error) {
	var w Weights
	seen, given := false, 0
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return w, fmt.Errorf("weight %q: want factor=number", part)
		}
		f, err := parseFactor(strings.TrimSpace(name))
		if err != nil {
			return w, err
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return w, fmt.Errorf("weight %q: want a number of 0 or more", part)
		}
		if given&(1<<f) != 0 {
			return w, fmt.Errorf("weight %q: %s is given twice", part, f)
		}
		given |= 1 << f
		w[f], seen = x, true
	}
	if !seen || w.sum() == 0 {
		return w, errors.New("weights: give at least one factor a weight above 0")
	}
	if math.IsInf(w.sum(), 0) {
		return w, errors.New("weights: their sum overflows; they are relative, so smaller numbers weigh the same")
	}
	return w, nil
}

// String is w as ParseWeights reads it, every factor named.
func (w Weights) String() string {
	parts := make([]string, NumFactors)
	for f := range NumFactors {
		parts[f] = factorNames[f] + "=" + strconv.FormatFloat(w[f], 'g', 4, 64)
	}
	return strings.Join(parts, ",")
}

func (w Weights) sum() float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	return s
}

// Formula combines the factors into a score.
type Formula string

const (
	// Hybrid is the weighted sum of every factor, weights normalised to
	// sum 1: score = Σ wᵢ·fᵢ / Σ wᵢ.
	Hybrid Formula = "hybrid"
	// Salience is the source systems' ordering: recency × importance
	// (weights not used; text and similarity only decide which
	// candidates are considered).
	Salience Formula = "salience"
)

// formulas are the formulas by name.
var formulas = []Formula{Hybrid, Salience}

// ParseFormula is the formula named s.
func ParseFormula(s string) (Formula, error) {
	for _, f := range formulas {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown formula %q: want hybrid or salience", s)
}

// uses reports whether f counts factor x.
func (f Formula) uses(x Factor) bool {
	if f == Salience {
		return x == Recency || x == Importance
	}
	return true
}

// defaultHalfLife is the age at which recency is 0.5.
const defaultHalfLife = 24 * time.Hour

// Settings are what a ranking depends on besides the candidates.
type Settings struct {
	Formula  Formula
	Weights  Weights
	HalfLife time.Duration
}

// DefaultSettings are the documented defaults (docs/recall.md).
func DefaultSettings() Settings {
	return Settings{Formula: Hybrid, Weights: DefaultWeights(), HalfLife: defaultHalfLife}
}

// Candidate is a document a backend found for a prompt, with what only
// the backend knows: its raw text relevance and its cosine to the prompt.
type Candidate struct {
	Doc *model.IndexDoc
	// BM25 is the text relevance, higher is better, 0 when the prompt's
	// words are not in the document.
	BM25 float64
	// Cosine to the prompt's embedding; HasCosine false when the document
	// or the prompt has no embedding (of the same dimension).
	Cosine    float64
	HasCosine bool
}

// Result is a ranked candidate: each factor's value in [0, 1] and its
// contribution to the score.
type Result struct {
	Candidate
	Rank   int // from 1
	Score  float64
	Values [NumFactors]float64
	// Parts are the contributions: wᵢ·fᵢ/Σw in the hybrid formula (they
	// sum to Score); in the salience formula the value of each factor of
	// the product (and 0 for the others).
	Parts [NumFactors]float64
}

// Time is when the event happened (its timestamp), zero when unreadable.
func (r Result) Time() time.Time { return docTime(r.Doc) }

func docTime(d *model.IndexDoc) time.Time {
	if d == nil {
		return time.Time{}
	}
	t, err := model.ParseTimestamp(d.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Cosine is the cosine of a and b, false when their lengths differ or
// either is zero.
func Cosine(a, b []float64) (float64, bool) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, false
	}
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0, false
	}
	return math.Max(-1, math.Min(1, dot/math.Sqrt(na*nb))), true
}

func clamp01(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return math.Max(0, math.Min(1, x))
}

// Rank scores every candidate at now and orders them, best first: by
// score, then the newer event, then the event id. The text factor is the
// candidate's BM25 over the best BM25 among the candidates (the best text
// match scores 1, a candidate without the words 0), so it means the same
// on either backend whatever the scale of their BM25.
func Rank(cands []Candidate, s Settings, now time.Time) []Result {
	var best float64
	for _, c := range cands {
		best = math.Max(best, c.BM25)
	}
	sum := s.Weights.sum()
	half := s.HalfLife
	if half <= 0 {
		half = defaultHalfLife
	}
	out := make([]Result, len(cands))
	// Each candidate's time is parsed once: the comparisons of the sort
	// would otherwise parse or look it up a dozen times each.
	times := make([]time.Time, len(cands))
	for i, c := range cands {
		r := Result{Candidate: c}
		if best > 0 {
			r.Values[Text] = clamp01(c.BM25 / best)
		}
		if c.HasCosine {
			r.Values[Similarity] = clamp01(c.Cosine)
		}
		if c.Doc != nil {
			r.Values[Importance] = clamp01(c.Doc.ImportanceScore)
			r.Values[Reward] = clamp01(c.Doc.RewardScore)
			r.Values[Decay] = clamp01(c.Doc.DecayFactor)
		}
		times[i] = docTime(c.Doc)
		r.Values[Recency] = recency(times[i], now, half)
		switch s.Formula {
		case Salience:
			r.Parts[Recency], r.Parts[Importance] = r.Values[Recency], r.Values[Importance]
			r.Score = r.Values[Recency] * r.Values[Importance]
		default:
			for f := range NumFactors {
				if sum > 0 {
					r.Parts[f] = s.Weights[f] * r.Values[f] / sum
				}
				r.Score += r.Parts[f]
			}
		}
		out[i] = r
	}
	// The order is sorted by index, not moved Result by Result (each is
	// 160 bytes); the last key, the index, makes it the stable order.
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := &out[i], &out[j]
		switch ta, tb := times[i], times[j]; {
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		case !ta.Equal(tb):
			if ta.After(tb) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(eventID(a.Doc), eventID(b.Doc)); c != 0 {
			return c
		}
		return i - j
	})
	sorted := make([]Result, len(out))
	for n, i := range order {
		sorted[n] = out[i]
		sorted[n].Rank = n + 1
	}
	return sorted
}

func eventID(d *model.IndexDoc) string {
	if d == nil {
		return ""
	}
	return d.EventID
}

// recency is 0.5^(age/half): 1 now (and for a timestamp in the future),
// 0.5 one half-life ago; 0 when the time is unknown.
func recency(t, now time.Time, half time.Duration) float64 {
	if t.IsZero() {
		return 0
	}
	age := now.Sub(t)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(half))
}

// Searcher finds the candidates of a prompt in one index; it never
// writes (retrieval_count stays as it is).
type Searcher interface {
	Recall(ctx context.Context, q Request) (Answer, error)
}

// Request is what a Searcher is asked.
type Request struct {
	Text string // the prompt: its words are matched by BM25
	// Expr filters the candidates, in the language of query/expr.
	Expr string
	// Vector is the prompt's embedding; nil leaves similarity out.
	Vector []float64
	// Window bounds the text candidates: at most Window text matches
	// (the newest on the embedded index, the best by BM25 on OpenSearch).
	Window int
	// Nearest is how many candidates to take by embedding (0:
	// NearestFor(10)).
	Nearest int
	// IDs are events to include among the candidates whatever their
	// relevance (--explain), when they pass Expr.
	IDs []string
}

// MaxNearest bounds Request.Nearest.
const MaxNearest = 200

// NearestFor is the candidates by embedding a top k takes: 4·k, at least
// 40, at most MaxNearest. Each is a row read on the embedded index; 4·k
// leaves room for the view to weigh similarity alone and still show the
// nearest k.
func NearestFor(k int) int { return min(MaxNearest, max(40, 4*k)) }

// DefaultWindow is the candidates a Request takes by each route unless
// it says otherwise.
const DefaultWindow = 1000

// Answer is the candidates a Searcher found, and how.
type Answer struct {
	Candidates []Candidate
	// Note says in a line what was considered ("the newest 1,000 of
	// 52,113 text matches and the 1,000 nearest by embedding").
	Note string
}
