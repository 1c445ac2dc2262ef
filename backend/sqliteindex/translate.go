package sqliteindex

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"engram/query/expr"
)

// How an expression becomes SQL (all values are parameters): docs rows are
// wide, so a query first finds one page's seqs from indexes (newest first
// without sorting, driven by the full-text index, else the most selective
// equality term's index, else docs; every other term a probe on each seq),
// then joins to read that page only. A ranked search is driven by the
// full-text index, probes first, so bm25 is computed only for what passes.

// cond is a SQL condition and its arguments.
type cond struct {
	sql  string
	args []any
	// For the probe of an equality: the same as membership in the
	// listed set of seqs (in), and a query counting that set up to a cap
	// (count; arguments: args, then the cap). See Reader.tune.
	in, count string
}

// driver is the scan of the narrow step.
type driver struct {
	from   string // FROM clause
	where  string // its own condition
	args   []any
	seqCol string // the seq it yields
	docs   bool   // from is docs aliased d: row conditions need no join
	prio   int    // lower is more selective
}

// plan is a translated expression.
type plan struct {
	// none: nothing can match (a positive word without a token).
	none bool
	// match is the FTS5 query of the positive words and phrases, "" when
	// there are none; phrases are those words and phrases as written.
	match   string
	phrases []string
	drive   *driver
	// driveProbe is the driver's own condition as a probe (nil for the
	// full-text and full scans).
	driveProbe *cond
	probes     []cond // conditions on a seq, written with %[1]s for it
	eqs        int    // the first eqs probes are equalities, most selective first
	rows       []cond // conditions on the docs row d
	// hasTime: positive since:/until: terms bound the timestamp to
	// [tsLo, tsHi) (ms); see timeDriver.
	hasTime    bool
	tsLo, tsHi int64
	// seqLo, seqHi bound the seqs the driver walks (Reader.boundTime).
	seqLo, seqHi int64
}

// keyword fields: column, index keyed by (column, seq) or at least
// (column) + rowid, and selectivity rank as a driver.
var keywordField = map[string]struct {
	col, index string
	prio       int
}{
	expr.FieldID:      {"event_id", "", 1},
	expr.FieldTurn:    {"turn_key", "docs_turn", 2},
	expr.FieldTrace:   {"trace_id", "docs_trace", 3},
	expr.FieldSession: {"session_id", "docs_session", 4},
	expr.FieldAgent:   {"agent_id", "docs_agent", 6},
	expr.FieldTenant:  {"tenant_id", "docs_tenant", 7},
	expr.FieldType:    {"event_type", "docs_type", 8},
	expr.FieldTool:    {"tool", "", 0}, // no index: a row condition
}

const tagPrio = 5

var numericColumn = map[string]string{
	expr.FieldImportance: "d.importance_score",
	expr.FieldReward:     "d.reward_score",
	expr.FieldConfidence: "d.confidence",
	expr.FieldLatency:    "d.latency_ms",
}

// fullScan drives from docs itself, newest first.
var fullScan = &driver{from: "docs d", where: "1", seqCol: "d.seq", docs: true, prio: 100}

// newPlan translates e for a query run at now, scoped to tenant when set.
// With ranked, the positive words are left to the caller's bm25 scan (and
// no driver is chosen).
// planner gathers the conditions of an expression's terms: equalities that
// could drive the query (each with its probe form), and probes and row
// conditions that filter it.
type planner struct {
	p            *plan
	now          time.Time
	drivers      []*driver
	driverProbes []cond // the probe form of each driver, same order
	words        []string
}

func newPlan(e *expr.Expr, now time.Time, tenant string, ranked bool) *plan {
	pl := &planner{p: &plan{seqHi: math.MaxInt64}, now: now}
	if tenant != "" {
		pl.eq(expr.FieldTenant, tenant)
	}
	if e != nil {
		for _, t := range e.Terms {
			pl.term(t)
		}
	}
	pl.p.match = strings.Join(pl.words, " ")
	pl.chooseDriver(ranked)
	return pl.p
}

func (pl *planner) term(t expr.Term) {
	switch t.Kind {
	case expr.KindText:
		pl.text(t)
	case expr.KindField:
		pl.field(t)
	case expr.KindSuccess:
		v := 0
		if t.Bool {
			v = 1
		}
		if t.Neg {
			pl.p.rows = append(pl.p.rows, cond{sql: "d.success IS NOT ?", args: []any{v}})
		} else {
			pl.p.rows = append(pl.p.rows, cond{sql: "d.success = ?", args: []any{v}})
		}
	case expr.KindCompare:
		col := numericColumn[t.Field]
		if col == "" {
			pl.p.none = true
			return
		}
		c := col + " " + t.Op.String() + " ?"
		if t.Neg {
			c = "(" + c + ") IS NOT 1" // a missing value matches the negation
		}
		pl.p.rows = append(pl.p.rows, cond{sql: c, args: []any{t.Num}})
	case expr.KindSince, expr.KindUntil:
		pl.timeRange(t)
	default:
		pl.p.none = true
	}
}

// eq adds field = value: a driver candidate, or a row condition for fields
// without an index.
func (pl *planner) eq(field, value string) {
	kf := keywordField[field]
	probe := cond{sql: keywordProbe(kf.col, kf.index, kf.prio, false), args: []any{value},
		in:    "+%[1]s IN (SELECT seq FROM docs" + indexedBy(kf.index) + " WHERE " + kf.col + " = ?)",
		count: "SELECT count(*) FROM (SELECT 1 FROM docs" + indexedBy(kf.index) + " WHERE " + kf.col + " = ? LIMIT ?)"}
	if kf.prio == 0 {
		pl.p.rows = append(pl.p.rows, cond{sql: "d." + kf.col + " = ?", args: []any{value}})
		return
	}
	pl.drivers = append(pl.drivers, &driver{from: "docs d" + indexedBy(kf.index), where: "d." + kf.col + " = ?",
		args: []any{value}, seqCol: "d.seq", docs: true, prio: kf.prio})
	pl.driverProbes = append(pl.driverProbes, probe)
}

func (pl *planner) text(t expr.Term) {
	searchable := hasToken(t.Value)
	switch {
	case t.Neg && searchable:
		pl.p.probes = append(pl.p.probes, cond{sql: "+%[1]s NOT IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)", args: []any{ftsString(t.Value)}})
	case t.Neg: // excludes nothing
	case !searchable:
		pl.p.none = true
	default:
		pl.words = append(pl.words, ftsString(t.Value))
		pl.p.phrases = append(pl.p.phrases, t.Value)
	}
}

// sourceSQL is a document's source (model.SourceOf): the column, else
// system for a system: session (a document written without it).
const sourceSQL = "coalesce(d.source, CASE WHEN substr(d.session_id, 1, 7) = 'system:' THEN 'system' END)"

func (pl *planner) field(t expr.Term) {
	p := pl.p
	switch {
	case t.Field == expr.FieldSource && t.Neg:
		p.rows = append(p.rows, cond{sql: sourceSQL + " IS NOT ?", args: []any{t.Value}})
	case t.Field == expr.FieldSource:
		p.rows = append(p.rows, cond{sql: sourceSQL + " = ?", args: []any{t.Value}})
	case t.Field == expr.FieldTag && t.Neg:
		p.probes = append(p.probes, cond{sql: "NOT EXISTS (SELECT 1 FROM doc_tags WHERE tag = ? AND seq = %[1]s)", args: []any{t.Value}})
	case t.Field == expr.FieldTag:
		pl.drivers = append(pl.drivers, &driver{from: "doc_tags t", where: "t.tag = ?", args: []any{t.Value}, seqCol: "t.seq", prio: tagPrio})
		pl.driverProbes = append(pl.driverProbes, cond{sql: "EXISTS (SELECT 1 FROM doc_tags WHERE tag = ? AND seq = %[1]s)", args: []any{t.Value},
			in:    "+%[1]s IN (SELECT seq FROM doc_tags WHERE tag = ?)",
			count: "SELECT count(*) FROM (SELECT 1 FROM doc_tags WHERE tag = ? LIMIT ?)"})
	case t.Neg:
		kf, ok := keywordField[t.Field]
		if !ok {
			p.none = true // not from Parse
		} else if kf.prio == 0 {
			p.rows = append(p.rows, cond{sql: "d." + kf.col + " IS NOT ?", args: []any{t.Value}})
		} else {
			p.probes = append(p.probes, cond{sql: keywordProbe(kf.col, kf.index, kf.prio, true), args: []any{t.Value}})
		}
	default:
		if _, ok := keywordField[t.Field]; !ok {
			p.none = true
			return
		}
		pl.eq(t.Field, t.Value)
	}
}

func (pl *planner) timeRange(t expr.Term) {
	p := pl.p
	ms := ceilMillis(t.Time.Resolve(pl.now))
	c := "d.ts_unix_ms >= ?"
	if t.Kind == expr.KindUntil {
		c = "d.ts_unix_ms < ?"
	}
	if t.Neg {
		c = "NOT (" + c + ")"
	} else {
		if !p.hasTime {
			p.hasTime, p.tsLo, p.tsHi = true, math.MinInt64, math.MaxInt64
		}
		if t.Kind == expr.KindSince {
			p.tsLo = max(p.tsLo, ms)
		} else {
			p.tsHi = min(p.tsHi, ms)
		}
	}
	p.rows = append(p.rows, cond{sql: c, args: []any{ms}})
}

// chooseDriver picks what drives the query: the words, else the most
// selective equality; the other equalities become probes, most selective
// first.
func (pl *planner) chooseDriver(ranked bool) {
	p, drivers := pl.p, pl.drivers
	best := -1
	if p.match == "" && !ranked {
		for i, d := range drivers {
			if best < 0 || d.prio < drivers[best].prio {
				best = i
			}
		}
	}
	var eqProbes []cond
	order := make([]int, 0, len(drivers))
	for i := range drivers {
		if i != best {
			order = append(order, i)
		}
	}
	for n := 0; n < len(order); n++ { // few terms: a selection sort by prio
		for m := n + 1; m < len(order); m++ {
			if drivers[order[m]].prio < drivers[order[n]].prio {
				order[n], order[m] = order[m], order[n]
			}
		}
		eqProbes = append(eqProbes, pl.driverProbes[order[n]])
	}
	p.eqs = len(eqProbes)
	p.probes = append(eqProbes, p.probes...)
	switch {
	case p.match != "" && !ranked:
		p.drive = &driver{from: "docs_fts f", where: "docs_fts MATCH ?", args: []any{p.match}, seqCol: "f.rowid"}
	case best >= 0:
		p.drive = drivers[best]
		p.driveProbe = &pl.driverProbes[best]
	default:
		p.drive = fullScan
	}
}

// keywordProbe is the probe of col = ? (or, negated, col IS NOT ?) on a
// seq: a lookup of the seq in the (col, seq) index, or for the fields whose
// value selects few documents (id, turn, trace), membership in their seqs,
// listed once. (The unary + keeps SQLite from handing a membership on
// f.rowid to the full-text table, which would run its query once per seq.)
func keywordProbe(col, index string, prio int, neg bool) string {
	if prio <= keywordField[expr.FieldTrace].prio {
		if neg {
			return "+%[1]s NOT IN (SELECT seq FROM docs" + indexedBy(index) + " WHERE " + col + " = ?)"
		}
		return "+%[1]s IN (SELECT seq FROM docs" + indexedBy(index) + " WHERE " + col + " = ?)"
	}
	not := ""
	if neg {
		not = "NOT "
	}
	return not + "EXISTS (SELECT 1 FROM docs x" + indexedBy(index) + " WHERE x." + col + " = ? AND x.seq = %[1]s)"
}

func indexedBy(index string) string {
	if index == "" {
		return ""
	}
	return " INDEXED BY " + index
}

// filter is the probes and row conditions on seq expression s, joined with
// AND ("1" when none), and their arguments.
func (p *plan) filter(s string) (string, []any) {
	var parts []string
	var args []any
	for _, c := range p.probes {
		parts = append(parts, fmt.Sprintf(c.sql, s))
		args = append(args, c.args...)
	}
	for _, c := range p.rows {
		parts = append(parts, c.sql)
		args = append(args, c.args...)
	}
	if len(parts) == 0 {
		return "1", nil
	}
	return strings.Join(parts, " AND "), args
}

// filterAll is filter with the driver's own condition too (not the words).
func (p *plan) filterAll(s string) (string, []any) {
	f, args := p.filter(s)
	if p.driveProbe == nil {
		return f, args
	}
	return fmt.Sprintf(p.driveProbe.sql, s) + " AND " + f, append(append([]any{}, p.driveProbe.args...), args...)
}

// join is the join to docs d that row conditions need when the scan over
// from (yielding seqCol) is not docs itself.
func (p *plan) join(seqCol string, fromDocs bool) string {
	if fromDocs || len(p.rows) == 0 {
		return ""
	}
	return " CROSS JOIN docs d ON d.seq = " + seqCol
}

// timeDriver drives from the timestamp index, for a plan with a time range
// that would otherwise scan all of docs: the documents in the range are
// then listed and sorted, which is cheap when there are few (a quiet
// "since:15m" on a large index would otherwise read every row). The caller
// counts them first (at most maxTimeDriven; see Reader.boundTime).
func (p *plan) timeDriver() *driver {
	return &driver{from: "docs d INDEXED BY docs_ts", where: "d.ts_unix_ms >= ? AND d.ts_unix_ms < ?",
		args: []any{p.tsLo, p.tsHi}, seqCol: "d.seq", docs: true, prio: 50}
}

// maxTimeDriven is the most documents in a time range for timeDriver (a
// variable for tests).
var maxTimeDriven = 5000

// newest is the narrow step of a newest-first listing: the seqs (column
// seq) of the matching documents below before, at most limit.
func (p *plan) newest(before int64, limit int) (string, []any) {
	d := p.drive
	f, fargs := p.filter(d.seqCol)
	q := "SELECT " + d.seqCol + " AS seq FROM " + d.from + p.join(d.seqCol, d.docs) +
		" WHERE " + d.where + " AND " + d.seqCol + " BETWEEN ? AND ? AND " + f +
		" ORDER BY " + d.seqCol + " DESC LIMIT ?"
	args := append(append(append([]any{}, d.args...), p.seqLo, min(before-1, p.seqHi)), fargs...)
	return q, append(args, limit)
}

// ceilMillis is the first whole millisecond at or after t: document
// timestamps are indexed to the millisecond.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// ftsString is s as one FTS5 string: a phrase of its tokens, with no
// operator meaning. NUL ends an FTS5 query, so it becomes a space (it is
// never part of a token).
func ftsString(s string) string {
	s = strings.ReplaceAll(s, "\x00", " ")
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// hasToken reports whether the unicode61 tokenizer finds a token in s:
// letters, numbers and private-use characters make tokens.
func hasToken(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) {
			return true
		}
	}
	return false
}
