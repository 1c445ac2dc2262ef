package sqliteindex

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"engram/query"
	"engram/query/querytest"
)

// TestStatsTallies: an index written before the tally columns existed
// (docs_stats without them, user_version 9) is answered the same, from
// the columns' expressions, by a reader; a writer opening it adds them,
// and the answer is still the same.
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
	check := func(stage string, wantTallied bool) {
		t.Helper()
		r, err := OpenReader(path, query.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got := r.hasTally(context.Background()); got != wantTallied {
			t.Fatalf("%s: hasTally %v, want %v", stage, got, wantTallied)
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
	check("tallied", true)
	db.Close()

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`DROP INDEX docs_stats`}
	for _, n := range tallyNames() {
		stmts = append(stmts, "ALTER TABLE docs DROP COLUMN "+n)
	}
	stmts = append(stmts, `CREATE INDEX docs_stats ON docs(ts_unix_ms, event_type, agent_id, tool, tenant_id, success, latency_ms, reward_score, importance_score)`,
		`PRAGMA user_version = 9`)
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	raw.Close()
	check("version 9", false)

	db2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	check("upgraded", true)
}
