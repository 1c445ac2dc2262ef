package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/recall"
)

// recallWeights is recall.weights: factor=weight pairs (recall.ParseWeights).
type recallWeights recall.Weights

func (w *recallWeights) UnmarshalText(b []byte) error {
	v, err := recall.ParseWeights(string(b))
	if err != nil {
		return err
	}
	*w = recallWeights(v)
	return nil
}

// recallSettings is the recall settings (recall.*) conf gives.
func recallSettings(conf *resolved) (recall.Settings, error) {
	f, err := recall.ParseFormula(conf.Recall.Formula)
	if err != nil {
		return recall.Settings{}, err
	}
	return recall.Settings{Formula: f, Weights: recall.Weights(conf.Recall.Weights), HalfLife: conf.Recall.HalfLife}, nil
}

type recallOpts struct {
	*queryOpts
	explain string
}

func recallFlags(e *env) (*flag.FlagSet, *recallOpts) {
	fs, q := queryFlags("recall", e, false, 10, "results to list (the top K)")
	o := &recallOpts{queryOpts: q}
	fs.StringVar(&o.explain, "explain", "", "also say why event ID is not in the top K: its rank, its factors and the factor that kept it out")
	return fs, o
}

const recallUsage = "usage: engram recall [flags] TEXT [EXPR]: TEXT is the prompt, one argument (quote it); EXPR filters the events (engram help recall, docs/recall.md)"

// runRecall ranks what the memory would retrieve for a prompt.
func runRecall(ctx context.Context, e *env, args []string) error {
	fs, o := recallFlags(e)
	if err := parseExpr(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || strings.TrimSpace(fs.Arg(0)) == "" {
		fmt.Fprintln(e.stderr, recallUsage)
		return errUsage
	}
	text, src := fs.Arg(0), exprArg(fs.Args()[1:])
	if _, err := expr.Parse(src); err != nil {
		return exprError(e, src, err)
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	st, err := recallSettings(conf)
	if err != nil {
		return err
	}
	r, err := openQueryReader(ctx, conf, e)
	if err != nil {
		return err
	}
	defer r.Close()
	if o.explain != "" {
		// An id the index does not hold is a mistake, not a reason.
		if _, err := r.Document(ctx, o.explain); errors.Is(err, backend.ErrNotFound) {
			return fmt.Errorf("--explain: no event %s in %s", model.Quote(o.explain), r.Describe())
		} else if err != nil {
			return err
		}
	}
	eng, embNote, err := recallEngine(ctx, conf, r)
	if err != nil {
		return err
	}
	eng.K = o.limit
	if embNote != "" {
		fmt.Fprintln(e.stderr, "engram: "+embNote)
	}
	var ids []string
	if o.explain != "" {
		ids = []string{o.explain}
	}
	_, res, note, err := eng.Run(ctx, text, src, ids, st)
	if err != nil {
		return err
	}
	k := o.limit
	if k <= 0 {
		k = 10
	}
	top := res[:min(k, len(res))]
	if o.json {
		if err := writeRecallJSON(e, top, o.explain, res, k, st); err != nil {
			return err
		}
	} else {
		writeRecall(e, top, st)
		if o.explain != "" {
			writeExplain(e, o.explain, recall.Explain(res, k, o.explain, st), st)
		}
	}
	fmt.Fprintf(e.stderr, "engram: %s; ranked %d candidates by %s; recall only reads (retrieval_count is not changed)\n",
		safeLine(note), len(res), describeSettings(st))
	if o.explain != "" && o.json {
		fmt.Fprintln(e.stderr, "engram: "+safeLine(recall.Explain(res, k, o.explain, st).Why()))
	}
	return nil
}

// recallEngine is the recall engine over r: the configured embedder
// embeds the prompt; when none is configured (embedder.kind left at its
// default) and the index records that another offline embedder (stub or
// hashed) wrote its vectors, that one, said in the note.
func recallEngine(ctx context.Context, conf *resolved, r query.Reader) (*recall.Engine, string, error) {
	s, ok := r.(recall.Searcher)
	if !ok {
		return nil, "", fmt.Errorf("%s cannot recall", r.Describe())
	}
	c := *conf
	note := ""
	if rec, ok := r.(interface {
		Embedder(ctx context.Context, dim int) (string, error)
	}); ok && !conf.given(&conf.Embedder.Kind) {
		for _, kind := range []string{"stub", "hashed"} {
			c.Embedder.Kind = kind
			dim, err := embedderDimension(&c)
			if err != nil {
				return nil, "", err
			}
			if name, err := rec.Embedder(ctx, dim); err == nil && name == kind {
				if kind != conf.Embedder.Kind && conf.Embedder.Kind != "" {
					note = fmt.Sprintf("the prompt is embedded by the %s embedder, which wrote the index's vectors (--embedder chooses)", kind)
				}
				break
			}
			c.Embedder.Kind = conf.Embedder.Kind
		}
	}
	emb, err := newEmbedder(&c)
	if err != nil {
		return nil, "", err
	}
	st, err := recallSettings(conf)
	if err != nil {
		return nil, "", err
	}
	return &recall.Engine{Searcher: s, Embedder: emb, Window: c.Recall.Window, Settings: st}, note, nil
}

// describeSettings says the formula, the weights and the half-life.
func describeSettings(st recall.Settings) string {
	if st.Formula == recall.Salience {
		return fmt.Sprintf("formula salience (recency × importance), half-life %s", shortDuration(st.HalfLife))
	}
	return fmt.Sprintf("formula hybrid (%s), half-life %s", st.Weights, shortDuration(st.HalfLife))
}

// shortDuration is d without its zero minutes and seconds (24h, 1h30m).
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// recallJSON is one result of recall --json.
type recallJSON struct {
	Rank     int                   `json:"rank"`
	Score    float64               `json:"score"`
	Factors  map[string]factorJSON `json:"factors"`
	BM25     float64               `json:"bm25"`
	Cosine   *float64              `json:"cosine"`
	Document *model.IndexDoc       `json:"document"`
}

type factorJSON struct {
	Value        float64 `json:"value"`
	Contribution float64 `json:"contribution"`
}

func resultJSON(r recall.Result) recallJSON {
	j := recallJSON{Rank: r.Rank, Score: round(r.Score), Factors: map[string]factorJSON{}, BM25: round(r.BM25), Document: r.Doc}
	if r.HasCosine {
		c := round(r.Cosine)
		j.Cosine = &c
	}
	for f := range recall.NumFactors {
		j.Factors[f.String()] = factorJSON{round(r.Values[f]), round(r.Parts[f])}
	}
	return j
}

func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func writeRecallJSON(e *env, top []recall.Result, explain string, all []recall.Result, k int, st recall.Settings) error {
	for _, r := range top {
		if err := writeJSON(e.stdout, resultJSON(r)); err != nil {
			return err
		}
	}
	if explain == "" {
		return nil
	}
	x := recall.Explain(all, k, explain, st)
	v := map[string]any{"explain": explain, "in_top": x.In, "missing": x.Missing, "why": x.Why()}
	if !x.Missing {
		v["result"] = resultJSON(x.Result)
		v["kth"] = resultJSON(x.Kth)
		if !x.In {
			v["decisive"] = x.Decisive.String()
			v["gap"] = round(x.Gap)
			gaps := map[string]float64{}
			for f := range recall.NumFactors {
				gaps[f.String()] = round(x.Gaps[f])
			}
			v["gaps"] = gaps
		}
	}
	return writeJSON(e.stdout, v)
}

// barWidth is the cells of a contribution bar.
const barWidth = 10

// writeRecall prints each result as a head line and a line a factor: its
// value, its contribution to the score and the contribution as a bar
// (scaled to the largest contribution shown, so bars compare across
// results and factors).
func writeRecall(e *env, top []recall.Result, st recall.Settings) {
	if len(top) == 0 {
		fmt.Fprintln(e.stderr, "nothing to recall: no event holds a word of the prompt or an embedding near it")
		return
	}
	scale := maxPart(top)
	var b strings.Builder
	for _, r := range top {
		fmt.Fprintf(&b, "%2d  %.3f  %s  %s  %s\n", r.Rank, r.Score, safeLine(r.Doc.EventID), docRow(r.Doc)[0], safeLine(r.Doc.Summary))
		for f := range recall.NumFactors {
			b.WriteString(factorLine(r, f, scale, st))
		}
	}
	fmt.Fprint(e.stdout, b.String())
}

func maxPart(rs []recall.Result) float64 {
	var m float64
	for _, r := range rs {
		for _, p := range r.Parts {
			m = math.Max(m, p)
		}
	}
	if m == 0 {
		return 1
	}
	return m
}

// factorLine is one factor of a result: name, value, contribution, bar.
func factorLine(r recall.Result, f recall.Factor, scale float64, st recall.Settings) string {
	raw := ""
	switch f {
	case recall.Text:
		raw = "bm25 " + strconv.FormatFloat(r.BM25, 'f', 2, 64)
	case recall.Similarity:
		raw = "no embedding"
		if r.HasCosine {
			raw = "cosine " + strconv.FormatFloat(r.Cosine, 'f', 3, 64)
		}
	}
	contrib := fmt.Sprintf("+%.3f", r.Parts[f])
	if st.Formula == recall.Salience {
		contrib = "      "
		if r.Parts[f] > 0 || f == recall.Recency || f == recall.Importance {
			contrib = fmt.Sprintf("×%.3f", r.Parts[f])
		}
	}
	return fmt.Sprintf("      %-10s %.3f  %s %s %s\n", f, r.Values[f], contrib, recall.Bar(r.Parts[f]/scale, barWidth), raw)
}

// writeExplain says why an event is not in the top K.
func writeExplain(e *env, id string, x recall.Explanation, st recall.Settings) {
	fmt.Fprintf(e.stdout, "\nwhy not %s? %s\n", safeLine(id), safeLine(x.Why()))
	if x.Missing || x.In {
		return
	}
	scale := math.Max(maxPart([]recall.Result{x.Result, x.Kth}), 1e-9)
	fmt.Fprintf(e.stdout, "%2d  %.3f  %s  %s\n", x.Rank, x.Score, safeLine(x.Doc.EventID), safeLine(x.Doc.Summary))
	for f := range recall.NumFactors {
		line := strings.TrimRight(factorLine(x.Result, f, scale, st), "\n")
		gap := ""
		if x.Gaps[f] != 0 {
			gap = fmt.Sprintf("  gap to the %d%s %+.3f", x.K, suffix(x.K), x.Gaps[f])
		}
		if f == x.Decisive {
			gap += "  ← kept it out"
		}
		fmt.Fprintln(e.stdout, line+gap)
	}
	fmt.Fprintf(e.stdout, "the %d%s: %.3f  %s  %s\n", x.K, suffix(x.K), x.Kth.Score, safeLine(x.Kth.Doc.EventID), safeLine(x.Kth.Doc.Summary))
}

func suffix(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}
