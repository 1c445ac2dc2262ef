package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"engram/query"
	"engram/query/expr"
)

// side is one side of a comparison: what it covers and its answer.
type side struct {
	Label string `json:"label"`
	Since string `json:"since"`
	Until string `json:"until"`
	Group string `json:"group,omitempty"`
	q     query.StatsQuery
	stats *query.Stats
}

// compared is a group's comparison (the whole is the group "all").
type compared struct {
	Group    string         `json:"group"`
	TooSmall string         `json:"too_small,omitempty"`
	Changes  []query.Change `json:"-"`
	Out      []changeOut    `json:"changes"`
}

type changeOut struct {
	Measure   string   `json:"measure"`
	A         *float64 `json:"a"`
	B         *float64 `json:"b"`
	Delta     *float64 `json:"delta"`
	Relative  *float64 `json:"relative"`
	Direction string   `json:"direction"` // up, down, same, unknown
	Verdict   string   `json:"verdict"`   // worse, better, neutral
}

// compareSides makes the two sides of --compare from the resolved q (the
// B side unless two values of a field are compared).
func (o *statsOpts) compareSides(q query.StatsQuery, now time.Time) (a, b side, err error) {
	a, b = side{q: q}, side{q: q}
	switch spec := o.compare; {
	case spec == "previous":
		span := q.Until.Sub(q.Since)
		a.q.Since, a.q.Until = q.Since.Add(-span), q.Since
		a.Label, b.Label = "previous", "range"
	case strings.Contains(spec, "/"):
		from, to, _ := strings.Cut(spec, "/")
		f, err1 := expr.ParseTime(from)
		t, err2 := expr.ParseTime(to)
		if err1 != nil || err2 != nil {
			return a, b, fmt.Errorf("stats: --compare %q: want FROM/TO, each a time (2026-05-08T10:00:00Z) or a duration back from now (48h)", spec)
		}
		a.q.Since, a.q.Until, a.q.Every = f.Resolve(now), t.Resolve(now), 0
		if a.q.Since.IsZero() || a.q.Until.IsZero() { // the query's "not given"
			return a, b, fmt.Errorf("stats: --compare %q: want times after 0001-01-01T00:00:00Z", spec)
		}
		if !a.q.Since.Before(a.q.Until) {
			return a, b, fmt.Errorf("stats: --compare %q: the range is empty (%s is not before %s)", spec, a.q.Since.UTC().Format(time.RFC3339), a.q.Until.UTC().Format(time.RFC3339))
		}
		a.Label, b.Label = "from/to", "range"
	case strings.Contains(spec, ","):
		field := statsFieldTerm[q.By]
		if field == nil {
			return a, b, fmt.Errorf("stats: --compare %q: two values compare groups of --by agent, type, tool, tag, session, tenant or outcome", spec)
		}
		vs := strings.Split(spec, ",")
		if len(vs) != 2 || vs[0] == "" || vs[1] == "" {
			return a, b, fmt.Errorf("stats: --compare %q: want two values A,B of --by %s", spec, q.By)
		}
		va, vb := vs[0], vs[1]
		ta, tb := field(va), field(vb)
		for _, v := range vs {
			if q.By == query.ByOutcome && v != query.OutcomeOK && v != query.OutcomeFailed {
				return a, b, fmt.Errorf("stats: --compare %q: outcome %q: want %s or %s", spec, v, query.OutcomeOK, query.OutcomeFailed)
			}
			var se *expr.SyntaxError
			if _, err := expr.Parse(field(v)); errors.As(err, &se) {
				return a, b, fmt.Errorf("stats: --compare %q: %s", spec, se.Msg)
			}
		}
		a.q.Expr, b.q.Expr = strings.TrimSpace(q.Expr+" "+ta), strings.TrimSpace(q.Expr+" "+tb)
		a.Group, b.Group, a.Label, b.Label = va, vb, va, vb
	default:
		return a, b, fmt.Errorf("stats: --compare %q: want previous, FROM/TO or (with --by) A,B", spec)
	}
	for _, s := range []*side{&a, &b} {
		if s.Group != "" { // the filter term is the group
			s.q.By, s.q.Top = "", 0
		}
		if s.q, err = s.q.Resolve(now); err != nil {
			return a, b, err
		}
		s.Since, s.Until = s.q.Since.UTC().Format(time.RFC3339), s.q.Until.UTC().Format(time.RFC3339)
	}
	return a, b, nil
}

// statsFieldTerm is the filter term of a value of a --by field.
var statsFieldTerm = map[string]func(string) string{
	query.ByAgent: fieldTerm("agent"), query.ByType: fieldTerm("type"), query.ByTool: fieldTerm("tool"),
	query.ByTag: fieldTerm("tag"), query.BySession: fieldTerm("session"), query.ByTenant: fieldTerm("tenant"),
	query.ByOutcome: func(v string) string {
		if v == query.OutcomeFailed {
			return "success:false"
		}
		return "success:true"
	},
}

func fieldTerm(field string) func(string) string {
	return func(v string) string { return field + ":" + strconv.Quote(v) }
}

func runStatsCompare(ctx context.Context, e *env, sr query.StatsReader, q query.StatsQuery, o *statsOpts) error {
	a, b, err := o.compareSides(q, time.Now())
	if err != nil {
		return err
	}
	for _, s := range []*side{&a, &b} {
		if s.stats, err = sr.Stats(ctx, s.q); err != nil {
			return exprError(e, s.q.Expr, err)
		}
	}
	rows := compareGroups(a.stats, b.stats)
	if o.json {
		return writeJSON(e.stdout, struct {
			A      side       `json:"a"`
			B      side       `json:"b"`
			Groups []compared `json:"groups"`
		}{a, b, rows})
	}
	fmt.Fprintf(e.stdout, "A (%s): %s to %s%s\nB (%s): %s to %s%s\n", a.Label, localTime(a.q.Since), localTime(a.q.Until), groupNote(a),
		b.Label, localTime(b.q.Since), localTime(b.q.Until), groupNote(b))
	return writeCompareTable(e.stdout, rows, termWidth(e))
}

func groupNote(s side) string {
	if s.Group == "" {
		return ""
	}
	return ", " + s.q.Expr
}

// compareGroups compares the wholes, then each group either side split
// into, in B's order then A's.
func compareGroups(a, b *query.Stats) []compared {
	out := []compared{compareOne("all", a.All, b.All)}
	seen := map[string]bool{}
	for _, s := range []*query.Stats{b, a} {
		for _, g := range s.Groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			out = append(out, compareOne(g, groupAgg(a, g), groupAgg(b, g)))
		}
	}
	return out
}

func groupAgg(s *query.Stats, g string) query.Agg {
	for i, name := range s.Groups {
		if name == g {
			return s.Total[i]
		}
	}
	return query.Agg{}
}

func compareOne(group string, a, b query.Agg) compared {
	changes, small := query.CompareAggs(a, b)
	c := compared{Group: group, TooSmall: small, Changes: changes}
	for _, ch := range changes {
		c.Out = append(c.Out, changeJSON(ch))
	}
	return c
}

func changeJSON(c query.Change) changeOut {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	out := changeOut{Measure: c.Measure, Direction: "unknown", Verdict: "neutral"}
	if !c.Known {
		return out
	}
	out.A, out.B, out.Delta, out.Relative = num(c.A), num(c.B), num(c.Delta), num(c.Rel)
	switch {
	case c.Delta > 0:
		out.Direction = "up"
	case c.Delta < 0:
		out.Direction = "down"
	default:
		out.Direction = "same"
	}
	switch {
	case c.Worse:
		out.Verdict = "worse"
	case c.Better:
		out.Verdict = "better"
	}
	return out
}

// writeCompareTable is a row a group and measure: A, B and the change
// with its direction, worse or better said in words.
func writeCompareTable(w io.Writer, groups []compared, width int) error {
	rows := [][]string{{"GROUP", "MEASURE", "A", "B", "CHANGE"}}
	for _, g := range groups {
		if g.TooSmall != "" {
			rows = append(rows, []string{g.Group, "-", "-", "-", g.TooSmall})
		}
		for _, c := range g.Changes {
			rows = append(rows, []string{g.Group, c.Measure, measureText(c.Measure, c.A, c.Known), measureText(c.Measure, c.B, c.Known), changeText(c)})
		}
	}
	return writeTable(w, rows, width, false)
}

func measureText(m string, v float64, known bool) string {
	switch {
	case !known:
		return "-"
	case m == query.MeasureEvents:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case m == query.MeasureFailureRate:
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	case strings.HasPrefix(m, "latency"):
		return strconv.FormatFloat(v, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func changeText(c query.Change) string {
	if !c.Known {
		return "-"
	}
	if c.Delta == 0 {
		return "="
	}
	arrow := "▲"
	if c.Delta < 0 {
		arrow = "▼"
	}
	var d string
	switch {
	case c.Measure == query.MeasureFailureRate:
		d = fmt.Sprintf("%+.1f pts", 100*c.Delta)
	case strings.HasPrefix(c.Measure, "latency"):
		d = fmt.Sprintf("%+.0fms", c.Delta)
	case c.Measure == query.MeasureEvents:
		d = fmt.Sprintf("%+.0f", c.Delta)
	default:
		d = fmt.Sprintf("%+.3f", c.Delta)
	}
	if !math.IsNaN(c.Rel) {
		d += fmt.Sprintf(" (%+.1f%%)", 100*c.Rel)
	}
	d = arrow + " " + d
	switch {
	case c.Worse:
		d += " worse"
	case c.Better:
		d += " better"
	}
	return d
}
