package sqliteindex

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/query"
	"engram/query/querytest"
)

// TestStatsTallies: an index whose docs_stats lacks the tallies
// (user_version 9) is answered the same by a reader, which computes them
// from the index's columns; a writer opening it makes docs_stats hold
// them, and the statement summing a bucket reads the index alone.
func TestStatsTallies(t *testing.T) {
	now := time.Now()
	db, path := openIndex(t)
	docs := querytest.Generate(now, 400)
	write(t, db, docs)
	until := now.Truncate(time.Hour).Add(time.Hour)
	queries := []query.StatsQuery{
		{Since: until.Add(-72 * time.Hour), Until: until, Every: 3 * time.Hour},
		{Since: until.Add(-72 * time.Hour), Until: until, By: query.ByAgent},
		{Since: until.Add(-48 * time.Hour), Until: until, By: query.ByTag, Top: 2},
	}
	check := func(stage string, wantDef string) {
		t.Helper()
		r, err := OpenReader(path, query.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if !sumsCovered(t, r) {
			t.Fatalf("%s: the sums read more than docs_stats", stage)
		}
		var def string
		if err := r.q.QueryRow("SELECT sql FROM sqlite_master WHERE name = 'docs_stats'").Scan(&def); err != nil || def != wantDef {
			t.Fatalf("%s: docs_stats is %q (%v), want %q", stage, def, err, wantDef)
		}
		for _, q := range queries {
			got, err := r.Stats(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
			rq, err := q.Resolve(now)
			if err != nil {
				t.Fatal(err)
			}
			want := query.StatsOf(rq, docs)
			if msg := querytest.SameStats(got, want); msg != "" {
				t.Fatalf("%s, by %q: %s", stage, q.By, msg)
			}
		}
	}
	check("tallied", statsIndex)
	db.Close()

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	const v9 = `CREATE INDEX docs_stats ON docs(ts_unix_ms, event_type, agent_id, tool, tenant_id, success, latency_ms, reward_score, importance_score)`
	for _, s := range []string{`DROP INDEX docs_stats`, v9, `PRAGMA user_version = 9`} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	raw.Close()
	check("version 9", v9)

	db2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	check("upgraded", statsIndex)
}

// sumsCovered: the plan of a bucket's sums reads docs_stats as a covering
// index.
func sumsCovered(t *testing.T, r *Reader) bool {
	t.Helper()
	q, err := query.StatsQuery{Since: time.Now().Add(-time.Hour), Every: time.Hour}.Resolve(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e, err := parse("")
	if err != nil {
		t.Fatal(err)
	}
	p := newPlan(e, time.Now(), "", false)
	with, args := statsWith(p, q, q, nil, true)
	rows, err := r.q.Query("EXPLAIN QUERY PLAN "+sumSQL("", with, false), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return slices.ContainsFunc(plan, func(d string) bool { return strings.Contains(d, "USING COVERING INDEX docs_stats") })
}
