package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"engram/backend/osindex"
	"engram/backend/sqliteindex"
	"engram/internal/outage"
	"engram/model"
	"engram/query"
	"engram/query/expr"
)

// queryOpts are the flags of the read commands (turns, turn, search,
// similar, tail).
type queryOpts struct {
	common
	json  bool
	wide  bool // tables: summaries whole, not cut to the terminal's width
	limit int
	topic string // tail --topic: a Kafka topic instead of the index
	sort  string // search, turns, tail --sort: indexed or time
	// similar's filters: event types (comma-separated) and a time range.
	types, since, until string
}

// sortFlag binds --sort; usage says what it orders.
func (o *queryOpts) sortFlag(fs *flag.FlagSet, usage string) {
	fs.StringVar(&o.sort, "sort", "indexed", usage)
}

// sortOrder is the order --sort asks for; a bad value is a one-line usage
// error naming the flag and the choices.
func (o *queryOpts) sortOrder(e *env) (query.Sort, error) {
	s, err := query.ParseSort(o.sort)
	if err != nil {
		fmt.Fprintf(e.stderr, "engram: --sort %s: want one of %s\n", safeLine(strconv.Quote(o.sort)), strings.Join(query.Sorts, ", "))
		return 0, exitError{2}
	}
	return s, nil
}

// sortedReader is r's time-ordered listings, or an error naming the index
// that has none.
func sortedReader(r query.Reader) (query.SortedReader, error) {
	sr, ok := r.(query.SortedReader)
	if !ok {
		return nil, fmt.Errorf("--sort time: %s cannot list in event time order", r.Describe())
	}
	return sr, nil
}

func queryFlags(name string, e *env, jsonDefault bool, limit int, limitUsage string) (*flag.FlagSet, *queryOpts) {
	o := &queryOpts{}
	fs := newFlagSet(name, e)
	o.common.bind(fs)
	fs.BoolVar(&o.json, "json", jsonDefault, "machine output: one JSON object per line")
	fs.IntVar(&o.limit, "limit", limit, limitUsage)
	fs.BoolVar(&o.wide, "wide", false, "table output: print the last column (the summary) whole instead of cutting it to the terminal's width")
	return fs, o
}

// tableWidth is the width a table is cut to: the terminal's, or none
// (0) with --wide.
func (o *queryOpts) tableWidth(e *env) int {
	if o.wide {
		return 0
	}
	return termWidth(e)
}

func turnsFlags(e *env) (*flag.FlagSet, *queryOpts) {
	fs, o := queryFlags("turns", e, false, 50, "turns to list")
	o.sortFlag(fs, "order of the turns, newest first: indexed (by the turn's latest indexed match) or time (by its latest match's event time)")
	return fs, o
}

func turnFlags(e *env) (*flag.FlagSet, *queryOpts) {
	return queryFlags("turn", e, false, 0, "events to list (0: all)")
}

func searchFlags(e *env) (*flag.FlagSet, *queryOpts) {
	fs, o := queryFlags("search", e, false, 50, "events to list")
	o.sortFlag(fs, "order of a listing, newest first: indexed (when engram indexed it) or time (the event's timestamp); a search with free words is ranked by relevance either way")
	return fs, o
}

func similarFlags(e *env) (*flag.FlagSet, *queryOpts) {
	fs, o := queryFlags("similar", e, false, 10, "neighbours to list")
	fs.StringVar(&o.types, "type", "", "only neighbours of these event types (comma-separated); embedded index only")
	fs.StringVar(&o.since, "since", "", "only neighbours from this time on: a duration back from now (24h, 7d) or a time (2026-05-08, 2026-05-08T10:00:00Z); embedded index only")
	fs.StringVar(&o.until, "until", "", "only neighbours before this time, as --since; embedded index only")
	return fs, o
}

// similarFilter is similar's --type, --since and --until at now.
func (o *queryOpts) similarFilter(now time.Time) (sqliteindex.SimilarFilter, error) {
	var f sqliteindex.SimilarFilter
	for _, t := range strings.Split(o.types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			f.Types = append(f.Types, t)
		}
	}
	for _, b := range []struct {
		flag, v string
		to      *time.Time
	}{{"since", o.since, &f.From}, {"until", o.until, &f.To}} {
		if b.v == "" {
			continue
		}
		t, err := expr.ParseTime(b.v)
		if err != nil {
			return f, fmt.Errorf("similar: --%s %w", b.flag, err)
		}
		*b.to = t.Resolve(now)
	}
	return f, nil
}

func tailFlags(e *env) (*flag.FlagSet, *queryOpts) {
	fs, o := queryFlags("tail", e, true, 0, "stop after this many events (0: run until interrupted)")
	o.sortFlag(fs, "indexed only: a tail prints events as they are indexed; for event time order list them with search or turns --sort time")
	fs.StringVar(&o.topic, "topic", "", "print the messages of a Kafka topic as they come instead (raw, enriched, indexed, audit, rejected, or a topic name); never joins a group, never commits")
	return fs, o
}

// tailInterval is how often tail polls the index.
const tailInterval = 250 * time.Millisecond

// openReader opens the configured index for reading, scoped to the
// configured tenant. Only the embedded SQLite index has a reader so far.
func openReader(o *queryOpts, fs *flag.FlagSet, e *env) (query.Reader, error) {
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return nil, err
	}
	return openQueryReader(context.Background(), conf, e)
}

// exprArg is the expression of a command: its arguments joined by spaces.
func exprArg(args []string) string { return strings.Join(args, " ") }

// exprError shows a syntax error under the expression, with a caret at its
// column, and makes it a usage error; other errors pass.
func exprError(e *env, src string, err error) error {
	var se *expr.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	r := []rune(src)
	col := min(max(se.Col-1, 0), len(r))
	prefix := printable(string(r[:col]))
	fmt.Fprintf(e.stderr, "engram: invalid expression: %s\n  %s\n  %s^\n", safeLine(se.Error()), printable(src),
		strings.Repeat(" ", ansi.StringWidth(prefix)))
	return exitError{2}
}

func runTurns(ctx context.Context, e *env, args []string) error {
	fs, o := turnsFlags(e)
	r, err := openCommandReader(e, fs, o, args, func(int) bool { return true }, "", true)
	if err != nil {
		return err
	}
	defer r.Close()
	src := exprArg(fs.Args())
	warnCoverage(ctx, e, r, src)
	order, _ := o.sortOrder(e)
	list := r.Turns
	if order == query.SortTime {
		sr, err := sortedReader(r)
		if err != nil {
			return err
		}
		list = func(ctx context.Context, src string, after query.Cursor, n int) (query.TurnPage, error) {
			return sr.ListTurns(ctx, query.ListQuery{Expr: src, Sort: order, After: after, Limit: n})
		}
	}
	var turns []query.TurnSummary
	var after query.Cursor
	for o.limit <= 0 || len(turns) < o.limit {
		n := query.MaxPage
		if o.limit > 0 {
			n = min(n, o.limit-len(turns))
		}
		p, err := list(ctx, src, after, n)
		if err != nil {
			return exprError(e, src, err)
		}
		turns = append(turns, p.Turns...)
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if o.json {
		for _, t := range turns {
			if err := writeJSON(e.stdout, turnJSON(t)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(turns) == 0 {
		fmt.Fprintln(e.stderr, "no turns")
		return nil
	}
	// A filtered listing's rows are whole turns (the turns with a match):
	// their totals count every event, and the summary is what the turn
	// was about (its observation's), in the last column, which takes the
	// width that is left.
	rows := [][]string{{"LAST", "TURN", "SESSION", "AGENT", "EVENTS", "OUTCOME", "LATENCY", "MAX IMP", "FIRST", "SUMMARY"}}
	for _, t := range turns {
		rows = append(rows, []string{
			localTime(t.Last), t.Key, t.SessionID, t.AgentID, strconv.Itoa(t.Events), turnOutcome(t), turnLatency(t),
			strconv.FormatFloat(t.MaxImportance, 'f', 2, 64), localTime(t.First), t.Summary,
		})
	}
	return writeTable(e.stdout, rows, o.tableWidth(e), false)
}

// turnOutcome is a turn's OUTCOME cell: ok, FAILED, or - (no result).
func turnOutcome(t query.TurnSummary) string {
	switch t.Outcome() {
	case "ok":
		return "ok"
	case "failed":
		return "FAILED"
	}
	return "-"
}

// turnLatency is a turn's LATENCY cell: the sum of its events' latencies,
// or - when none has one.
func turnLatency(t query.TurnSummary) string {
	if t.LatencyMs <= 0 {
		return "-"
	}
	return (time.Duration(t.LatencyMs) * time.Millisecond).String()
}

type turnOut struct {
	TurnKey       string  `json:"turn_key"`
	SessionID     string  `json:"session_id,omitempty"`
	AgentID       string  `json:"agent_id,omitempty"`
	TenantID      string  `json:"tenant_id,omitempty"`
	Events        int     `json:"events"`
	First         string  `json:"first"`
	Last          string  `json:"last"`
	AnyFailed     bool    `json:"any_failed"`
	MaxImportance float64 `json:"max_importance"`
	Failures      int     `json:"failures"`
	Successes     int     `json:"successes"`
	Outcome       string  `json:"outcome,omitempty"`
	LatencyMs     int64   `json:"latency_ms"`
	Summary       string  `json:"summary"`
}

func turnJSON(t query.TurnSummary) turnOut {
	const layout = "2006-01-02T15:04:05.000Z07:00"
	return turnOut{t.Key, t.SessionID, t.AgentID, t.TenantID, t.Events,
		t.First.UTC().Format(layout), t.Last.UTC().Format(layout), t.AnyFailed, t.MaxImportance,
		t.Failures, t.Successes, t.Outcome(), t.LatencyMs, t.Summary}
}

func runTurn(ctx context.Context, e *env, args []string) error {
	fs, o := turnFlags(e)
	r, err := openCommandReader(e, fs, o, args, func(n int) bool { return n == 1 }, "usage: engram turn [--data DIR] [--json] [--limit N] TURN_KEY", false)
	if err != nil {
		return err
	}
	defer r.Close()
	docs, err := r.Turn(ctx, fs.Arg(0))
	docs, err = archiveTurn(ctx, e, fs, o, r, fs.Arg(0), docs, err)
	if err != nil {
		return err
	}
	if o.limit > 0 && len(docs) > o.limit {
		docs = docs[:o.limit]
	}
	return writeDocs(e, o, docs, nil)
}

func runSearch(ctx context.Context, e *env, args []string) error {
	fs, o := searchFlags(e)
	r, err := openCommandReader(e, fs, o, args, func(n int) bool { return n > 0 }, "usage: engram search [--data DIR] [--json] [--limit N] EXPR", true)
	if err != nil {
		return err
	}
	defer r.Close()
	src := exprArg(fs.Args())
	warnCoverage(ctx, e, r, src)
	fetch := func(after query.Cursor, n int) (query.Page, error) { return r.Search(ctx, src, after, n) }
	if order, _ := o.sortOrder(e); order == query.SortTime {
		if x, _ := expr.Parse(src); x.HasText() {
			fmt.Fprintln(e.stderr, "engram: --sort time: a search with free words is ranked by relevance")
		} else {
			sr, err := sortedReader(r)
			if err != nil {
				return err
			}
			fetch = func(after query.Cursor, n int) (query.Page, error) {
				return sr.List(ctx, query.ListQuery{Expr: src, Sort: order, After: after, Limit: n})
			}
		}
	}
	return searchAll(e, o, fetch, src)
}

// pager fetches one page of a listing.
type pager func(after query.Cursor, n int) (query.Page, error)

// searchAll prints the documents matching src. A table of at most --limit
// rows is printed at once (its columns fit the rows); JSON lines, and a
// table of every match (--limit 0), are printed a page at a time as the
// pages come, so memory does not grow with the number of matches.
func searchAll(e *env, o *queryOpts, fetch pager, src string) error {
	var (
		rk  *query.Ranking
		err error
	)
	if !o.json && o.limit > 0 {
		var docs []*model.IndexDoc
		rk, err = searchPages(fetch, o.limit, func(page []*model.IndexDoc) error {
			docs = append(docs, page...)
			return nil
		})
		if err != nil {
			return exprError(e, src, err)
		}
		if err := writeDocs(e, o, docs, nil); err != nil {
			return err
		}
		noteRanking(e, rk)
		return nil
	}
	width, seen := o.tableWidth(e), 0
	rk, err = searchPages(fetch, o.limit, func(page []*model.IndexDoc) error {
		seen += len(page)
		return writePage(e, o.json, page, width, seen == len(page))
	})
	if err != nil {
		return exprError(e, src, err)
	}
	if seen == 0 && !o.json {
		fmt.Fprintln(e.stderr, "no events")
	}
	noteRanking(e, rk)
	return nil
}

// noteRanking says on stderr what a ranked search ranked, when it matched
// anything.
func noteRanking(e *env, rk *query.Ranking) {
	if rk != nil && (rk.Window == 0 || rk.Ranked > 0) {
		fmt.Fprintln(e.stderr, "engram: "+rk.Note())
	}
}

// searchPages calls fn with each page that fetch gives, up to limit
// documents (every one when limit <= 0); a page is let go of once fn
// returns. It returns the first page's Ranking.
func searchPages(fetch pager, limit int, fn func([]*model.IndexDoc) error) (*query.Ranking, error) {
	var (
		after query.Cursor
		rk    *query.Ranking
	)
	for seen := 0; limit <= 0 || seen < limit; {
		n := query.MaxPage
		if limit > 0 {
			n = min(n, limit-seen)
		}
		p, err := fetch(after, n)
		if err != nil {
			return nil, err
		}
		if after == "" {
			rk = p.Ranking
		}
		if len(p.Docs) > 0 {
			if err := fn(p.Docs); err != nil {
				return nil, err
			}
		}
		seen += len(p.Docs)
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	return rk, nil
}

// writePage prints one page of a streamed listing: JSON lines, or table
// rows in the fixed widths of a stream (the header before the first).
func writePage(e *env, asJSON bool, page []*model.IndexDoc, width int, first bool) error {
	if asJSON {
		for _, d := range page {
			if err := writeJSON(e.stdout, d); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([][]string, 0, len(page)+1)
	if first {
		rows = append(rows, []string{"TIME", "TYPE", "AGENT", "TURN", "IMP", "OK", "SUMMARY"})
	}
	for _, d := range page {
		rows = append(rows, docRow(d))
	}
	return writeTable(e.stdout, rows, width, true)
}

func runSimilar(ctx context.Context, e *env, args []string) error {
	fs, o := similarFlags(e)
	r, err := openCommandReader(e, fs, o, args, func(n int) bool { return n == 1 }, "usage: engram similar [--data DIR] [--json] [--limit N] [--type T,...] [--since T] [--until T] EVENT_ID", false)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := o.similarFilter(time.Now())
	if err != nil {
		return err
	}
	var res []query.Scored
	if f.Types != nil || !f.From.IsZero() || !f.To.IsZero() {
		sr, ok := r.(*sqliteindex.Reader)
		if !ok {
			return errors.New("similar: --type, --since and --until work on the embedded index only")
		}
		res, err = sr.SimilarIn(ctx, fs.Arg(0), o.limit, f)
	} else {
		res, err = r.Similar(ctx, fs.Arg(0), o.limit)
	}
	if err != nil {
		return err
	}
	docs := make([]*model.IndexDoc, len(res))
	scores := make([]float64, len(res))
	for i, s := range res {
		docs[i], scores[i] = s.Doc, s.Score
	}
	if err := writeDocs(e, o, docs, scores); err != nil {
		return err
	}
	if note := scoresNote(ctx, r, res); note != "" {
		fmt.Fprintln(e.stderr, "engram: "+note)
	}
	return nil
}

// scoresNote is the one line the index has to say about what similarity
// scores mean ("stub embedder: scores are not semantic"), or "".
func scoresNote(ctx context.Context, r any, res []query.Scored) string {
	n, ok := r.(interface {
		ScoresNote(ctx context.Context, dim int) string
	})
	if !ok || len(res) == 0 || res[0].Doc == nil {
		return ""
	}
	return n.ScoresNote(ctx, len(res[0].Doc.Embedding))
}

// runTail prints every event indexed from now on (matching EXPR when one
// is given), polling every 250ms, until ctx is cancelled (or --limit
// events).
func runTail(ctx context.Context, e *env, args []string) error {
	fs, o := tailFlags(e)
	if topicFlagSet(fs, args) {
		return runTailTopic(ctx, e, fs, o, args)
	}
	r, err := openCommandReader(e, fs, o, args, func(int) bool { return true }, "usage: engram tail [--data DIR] [--json=false] [--limit N] [EXPR]", true)
	if err != nil {
		return err
	}
	if order, _ := o.sortOrder(e); order == query.SortTime {
		_ = r.Close()
		fmt.Fprintln(e.stderr, "engram: tail --sort time: a tail prints events as they are indexed, so only --sort indexed applies; list them by event time with search --sort time or turns --sort time")
		return exitError{2}
	}
	defer r.Close()
	src := exprArg(fs.Args())
	warnCoverage(ctx, e, r, src)
	cur, err := r.TailStart(ctx)
	if err != nil {
		return err
	}
	width := o.tableWidth(e)
	tick := time.NewTicker(tailInterval)
	defer tick.Stop()
	seen := 0
	out := tailOutage(e, func(s string) string { return s }, "the index")
	for {
		p, err := r.Tail(ctx, cur, 1000)
		var docs []*model.IndexDoc
		if err == nil {
			docs, err = query.Filter(ctx, r, src, p.Docs)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// The cursor moves only past what was printed: the retry
			// reads from where the failed poll would have.
			if !tailRetries(err) {
				return err
			}
			if !out.Failed(ctx, err) {
				return nil
			}
			continue
		}
		out.OK()
		cur = p.Next
		for _, d := range docs {
			if o.json {
				err = writeJSON(e.stdout, d)
			} else {
				err = writeTable(e.stdout, [][]string{docRow(d)}, width, true)
			}
			if err != nil {
				return err
			}
			if seen++; o.limit > 0 && seen >= o.limit {
				return nil
			}
		}
		if len(p.Docs) == 1000 {
			continue // more waiting
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// tailOutage reports tail's failed polls on stderr: once when they start,
// every minute while they last, once when it follows again.
func tailOutage(e *env, redact func(string) string, waiting string) *outage.Reporter {
	return &outage.Reporter{
		Logf: func(f string, a ...any) {
			fmt.Fprintf(e.stderr, "engram tail: %s\n", safeLine(redact(fmt.Sprintf(f, a...))))
		},
		Waiting: waiting, Resumed: "following again",
	}
}

// tailRetries says whether a failed poll of the index is worth retrying:
// all are but OpenSearch's refusals (bad credentials, no such index, a
// request it cannot take), which need a change of configuration. A
// refused or dropped connection, a timeout, a 429 or 5xx pass by
// themselves; so may an SQLite error (the file locked, or replaced).
func tailRetries(err error) bool {
	var se *osindex.StatusError
	if errors.As(err, &se) {
		return osindex.IsTransient(err)
	}
	return true
}

// writeDocs prints documents as JSON lines or as a table; scores, when
// given, are similarity scores.
func writeDocs(e *env, o *queryOpts, docs []*model.IndexDoc, scores []float64) error {
	if o.json {
		for i, d := range docs {
			var v any = d
			if scores != nil {
				v = struct {
					Score    float64         `json:"score"`
					Document *model.IndexDoc `json:"document"`
				}{scores[i], d}
			}
			if err := writeJSON(e.stdout, v); err != nil {
				return err
			}
		}
		return nil
	}
	if len(docs) == 0 {
		fmt.Fprintln(e.stderr, "no events")
		return nil
	}
	header := []string{"TIME", "TYPE", "AGENT", "TURN", "IMP", "OK", "SUMMARY"}
	if scores != nil {
		header = append([]string{"SCORE"}, header...)
	}
	rows := [][]string{header}
	for i, d := range docs {
		row := docRow(d)
		if scores != nil {
			row = append([]string{strconv.FormatFloat(scores[i], 'f', 3, 64)}, row...)
		}
		rows = append(rows, row)
	}
	return writeTable(e.stdout, rows, o.tableWidth(e), false)
}

// docRow is the table row of a document; the summary comes last.
func docRow(d *model.IndexDoc) []string {
	ts := d.Timestamp
	if t, err := model.ParseTimestamp(d.Timestamp); err == nil {
		ts = localTime(t)
	}
	ok := "-"
	if d.Success != nil {
		ok = "ok"
		if !*d.Success {
			ok = "FAIL"
		}
	}
	return []string{ts, d.EventType, d.AgentID, d.TurnKey(),
		strconv.FormatFloat(d.ImportanceScore, 'f', 2, 64), ok, d.Summary}
}

func localTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// writeJSON writes v as one line of terminal-safe JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(model.SafeJSON(b), '\n'))
	return err
}

// termWidth is the width of the terminal on stdout, else $COLUMNS, else 120.
func termWidth(e *env) int {
	if f, ok := e.stdout.(*os.File); ok && term.IsTerminal(f.Fd()) {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 120
}

// openCommandReader parses a read command's flags, checks how many
// arguments it got (printing usage otherwise), checks its expression if it
// takes one, and opens the reader.
func openCommandReader(e *env, fs *flag.FlagSet, o *queryOpts, args []string, nargsOK func(int) bool, usage string, takesExpr bool) (query.Reader, error) {
	p := parse
	if takesExpr {
		p = parseExpr
	}
	if err := p(fs, args); err != nil {
		return nil, err
	}
	if !nargsOK(fs.NArg()) {
		fmt.Fprintln(e.stderr, usage)
		return nil, errUsage
	}
	if src := exprArg(fs.Args()); takesExpr {
		if _, err := expr.Parse(src); err != nil {
			return nil, exprError(e, src, err)
		}
	}
	if _, err := o.sortOrder(e); err != nil {
		return nil, err
	}
	return openReader(o, fs, e)
}
