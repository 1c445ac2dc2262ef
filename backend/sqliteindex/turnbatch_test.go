package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"engram/model"
)

// TestTurnsBatchMatchRecompute checks the turns rows Write sums up per batch
// against turnRecompute (the SQL the maintenance triggers use) over the
// same documents, after every batch: new turns, turns going on across
// batches, NULL agents and tenants (and empty sessions, which are not
// NULL) in a turn's first rows, documents a statement refuses or that are
// invalid, and duplicates, none of which may count.
func TestTurnsBatchMatchRecompute(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	if _, err := db.w.Exec(`CREATE TEMP TRIGGER boom AFTER INSERT ON main.docs WHEN new.event_id LIKE 'boom%'
		BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 2026))
	base := time.Date(2026, 5, 8, 0, 0, 0, 0, time.UTC)
	pick := func(p float64, s string) string {
		if rng.Float64() < p {
			return ""
		}
		return s
	}
	var written []string // event ids, for duplicates
	n := 0
	mk := func() *model.IndexDoc {
		n++
		d := testDoc(fmt.Sprintf("e%04d", n))
		d.TurnID = pick(0.2, fmt.Sprintf("T%02d", rng.IntN(40)))
		d.TraceID = pick(0.5, fmt.Sprintf("tr%02d", rng.IntN(10)))
		d.SessionID = pick(0.2, fmt.Sprintf("s%d", rng.IntN(5)))
		d.AgentID = pick(0.6, fmt.Sprintf("a%d", rng.IntN(5)))
		d.TenantID = pick(0.6, fmt.Sprintf("t%d", rng.IntN(5)))
		d.Timestamp = base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))).Format(time.RFC3339Nano)
		d.ImportanceScore = float64(rng.IntN(1000)) / 999
		d.Success = []*bool{nil, ptr(true), ptr(false)}[rng.IntN(3)]
		d.EventType = []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult}[rng.IntN(3)]
		return d
	}
	// Turn N: NULL agent and tenant first, set by later rows and batches;
	// a refused row and a duplicate that would set them earlier must not.
	special := [][]*model.IndexDoc{{
		turnDoc("boom-n0", "N", "a-refused", "t-refused", ptr(false), 0.99),
		turnDoc("n1", "N", "", "", ptr(true), 0.2),
		turnDoc("n2", "N", "a-second", "", nil, 0.4),
	}, {
		turnDoc("n1", "N", "a-dup", "t-dup", ptr(false), 1), // duplicate of an earlier batch
		turnDoc("n3", "N", "a-late", "t-late", ptr(true), 0.3),
		turnDoc("n3", "N", "a-dup", "t-dup", ptr(false), 1), // duplicate in its batch
	}}
	for batch := range 8 {
		var docs []*model.IndexDoc
		if batch < len(special) {
			docs = append(docs, special[batch]...)
		}
		for range 60 {
			d := mk()
			// Odd batches hold no duplicate and none SQLite refuses: they
			// are inserted insertRows per statement.
			switch r := rng.IntN(20); {
			case batch%2 == 1 && r != 1:
			case r == 0:
				d.EventID = "boom-" + d.EventID
			case r == 1:
				d.Timestamp = "yesterday" // invalid: fails before the insert
			case r <= 4 && len(written) > 0:
				d.EventID = written[rng.IntN(len(written))]
			}
			docs = append(docs, d)
		}
		for i, r := range db.Write(ctx, docs) {
			id := docs[i].EventID
			switch {
			case strings.HasPrefix(id, "boom") || docs[i].Timestamp == "yesterday":
				if r.Err == nil || r.Created {
					t.Fatalf("batch %d doc %s: %+v, want an error", batch, id, r)
				}
			case r.Err != nil:
				t.Fatalf("batch %d doc %s: %v", batch, id, r.Err)
			case r.Created:
				written = append(written, id)
			}
		}
		got, want := turnsTable(t, db.w), recomputedTurns(t, db.w)
		if d := turnsDiff(got, want); len(got) < 20 || d != "" {
			t.Fatalf("after batch %d: %d turns, %d recomputed%s", batch, len(got), len(want), d)
		}
	}
	nTurn := readTurn(t, db, "N")
	if nTurn.Agent != "a-second" || nTurn.Tenant != "t-late" || nTurn.N != 3 || nTurn.Failed != 0 || nTurn.MaxImp != 0.4 {
		t.Fatalf("turn N %+v", nTurn)
	}
}

// turnsDiff lists the turns got and want do not agree on.
func turnsDiff(got, want map[string][]any) string {
	var b strings.Builder
	for k, w := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "\nturn %s: got %v, want %v", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "\nturn %s: got %v, want none", k, g)
		}
	}
	return b.String()
}

func turnDoc(id, turn, agent, tenant string, success *bool, imp float64) *model.IndexDoc {
	d := testDoc(id)
	d.TurnID, d.AgentID, d.TenantID, d.Success, d.ImportanceScore = turn, agent, tenant, success, imp
	return d
}

// turnsTable is every turns row, by turn key.
func turnsTable(t *testing.T, q interface {
	Query(string, ...any) (*sql.Rows, error)
}) map[string][]any {
	t.Helper()
	rows, err := q.Query("SELECT " + strings.Join(turnCols, ", ") + " FROM turns")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string][]any{}
	for rows.Next() {
		v := make([]any, len(turnCols))
		p := make([]any, len(v))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		m[v[0].(string)] = v[1:]
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// recomputedTurns is the turns table as turnRecompute builds it from docs,
// in a transaction rolled back afterwards.
func recomputedTurns(t *testing.T, w *sql.DB) map[string][]any {
	t.Helper()
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var keys []string
	rows, err := tx.Query("SELECT DISTINCT turn_key FROM docs")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if _, err := tx.Exec("DELETE FROM turns"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for s := range strings.SplitSeq(fmt.Sprintf(turnRecompute, "?1"), ";") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			if _, err := tx.Exec(s, k); err != nil {
				t.Fatalf("recompute %s: %v", k, err)
			}
		}
	}
	return turnsTable(t, tx)
}

// docsOf is n documents from number from on, perTurn to a turn, with emb.
func docsOf(b testing.TB, from, n, perTurn int, emb []float64) []*model.IndexDoc {
	var docs []*model.IndexDoc
	for i := from; i < from+n; i++ {
		d := testDoc(fmt.Sprintf("bench-%06d", i))
		d.TurnID = fmt.Sprintf("turn-%05d", i/perTurn)
		d.Embedding = emb
		docs = append(docs, d)
	}
	return docs
}
