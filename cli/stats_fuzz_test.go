package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"engram/query"
	"engram/query/expr"
)

// FuzzStatsFlags drives stats' flag parsing (--since, --until, --every,
// --by, --top, --compare) with arbitrary values. A refusal is one line
// that says it is stats' and names the flag (or the range they make); an
// acceptance is a range that is not empty, cut into 1 to 2,000 buckets of
// the width --every asked for, and two comparable sides when --compare is
// given, each a range that is not empty.
func FuzzStatsFlags(f *testing.F) {
	for _, c := range []struct {
		since, until, every, by string
		top                     int
		compare                 string
	}{
		{"24h", "", "", "", 5, ""},
		{"2026-05-08T10:00:00Z", "2026-05-08T12:00:00Z", "1h", "agent", 5, ""},
		{"7d", "1d", "15m", "type", 3, "previous"},
		{"2026-05-08", "2026-05-09", "", "outcome", 5, "ok,failed"},
		{"48h", "", "1d", "agent", 1, "a,b"},
		{"24h", "", "", "", 5, "2026-05-01/2026-05-02"},
		{"24h", "", "0", "bogus", 0, "bogus"},
		{"bogus", "2026-13-45", "-1h", "", -1, "/"},
		{"100000d", "", "", "", 5, ","},
		{"30d", "", "1s", "type", 5, "foo,bar"},
		{"1e400h", "1w", "1ns", "tag", 5, "2026-05-09/2026-05-08"},
		{"0001-01-01", "2026-05-09", "", "", 5, "0001-01-01/2026-05-09"},
		{"0001-01-01T00:00:01Z", "0001-01-02", "1h", "", 5, ""},
	} {
		f.Add(c.since, c.until, c.every, c.by, c.top, c.compare)
	}
	now := time.Date(2026, 5, 8, 12, 34, 56, 789_000_000, time.UTC)
	f.Fuzz(func(t *testing.T, since, until, every, by string, top int, compare string) {
		o := &statsOpts{since: since, until: until, every: every, by: by, top: top, compare: compare}
		q, err := o.statsQuery("", now)
		if err != nil {
			oneLineNaming(t, o, err, "--since", "--until", "--every", "--by", "--top", "the range is empty", "the default bucket")
			return
		}
		checkResolved(t, o, q)
		// The range is the one the flags say: an absolute --since is the
		// start (to the bucket), an absolute --until the end.
		for _, c := range []struct {
			flag, v string
			got     time.Time
			trunc   bool
		}{{"--since", since, q.Since, true}, {"--until", until, q.Until, false}} {
			pt, err := expr.ParseTime(c.v)
			if err != nil || c.v == "" {
				continue
			}
			if at := pt.Resolve(now); at.Equal(pt.Resolve(now.Add(time.Hour))) {
				if c.trunc {
					at = at.Truncate(q.Every)
				}
				if !c.got.Equal(at) {
					t.Fatalf("%+v: %s %q is %s, the range has %s", o, c.flag, c.v, at, c.got)
				}
			}
		}
		if every != "" {
			if d, err := expr.ParseDuration(every); err != nil || d != q.Every {
				t.Fatalf("%+v: --every %q made buckets of %s", o, every, q.Every)
			}
		}
		if q.Top < 1 || by != "" && !slices.Contains(query.StatsFields, by) {
			t.Fatalf("%+v: accepted top %d by %q", o, q.Top, q.By)
		}
		if compare == "" {
			return
		}
		a, b, err := o.compareSides(q, now)
		if err != nil {
			oneLineNaming(t, o, err, "--compare", "the range is empty", "buckets, over")
			return
		}
		checkResolved(t, o, a.q)
		checkResolved(t, o, b.q)
		if (a.Group != "") != (b.Group != "") || a.Group != "" && strings.Contains(a.Group+b.Group, ",") {
			t.Fatalf("%+v: groups %q and %q", o, a.Group, b.Group)
		}
	})
}

// oneLineNaming fails unless err is one line, stats', naming one of names.
func oneLineNaming(t *testing.T, o *statsOpts, err error, names ...string) {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "stats: ") {
		t.Fatalf("%+v: error not one line of stats': %q", o, msg)
	}
	for _, n := range names {
		if strings.Contains(msg, n) {
			return
		}
	}
	t.Fatalf("%+v: error names none of %q: %q", o, names, msg)
}

// checkResolved fails unless q is a range that is not empty, cut into 1 to
// 2,000 buckets from a bucket boundary.
func checkResolved(t *testing.T, o *statsOpts, q query.StatsQuery) {
	t.Helper()
	if !q.Since.Before(q.Until) || q.Every <= 0 || !q.Since.Truncate(q.Every).Equal(q.Since) {
		t.Fatalf("%+v: accepted range %s to %s every %s", o, q.Since, q.Until, q.Every)
	}
	if n := q.NumBuckets(); n < 1 || n > 2000 {
		t.Fatalf("%+v: accepted %d buckets", o, n)
	}
}
