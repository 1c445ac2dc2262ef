package sqliteindex

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// TestManyRowInsertFailsAlone: in a batch inserted insertRows documents
// per statement, a document SQLite refuses still fails alone, a duplicate
// (of a stored document, or of one earlier in its statement's rows) is
// still not created, and seq is still the order of the batch.
func TestManyRowInsertFailsAlone(t *testing.T) {
	db, _ := openTest(t)
	if _, err := db.w.Exec(`CREATE TEMP TRIGGER boom AFTER INSERT ON main.docs WHEN new.event_id = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, db, testDoc("stored"))
	// The first insertRows valid documents go in one statement; the next
	// statement fails (boom), and the rest of the batch goes one by one.
	docs := docsOf(t, 0, 3*insertRows+5, 4, nil)
	docs[5].Timestamp = "never"
	docs[insertRows+3].EventID = "boom"
	docs[2*insertRows+2].EventID = "stored"
	docs[2*insertRows+9].EventID = docs[2*insertRows+4].EventID
	res := db.Write(context.Background(), docs)
	var want []string
	for i, r := range res {
		id := docs[i].EventID
		switch i {
		case 5, insertRows + 3:
			if r.Err == nil || r.Created {
				t.Fatalf("doc %d (%s): %+v, want an error", i, id, r)
			}
			if !strings.Contains(r.Err.Error(), id) {
				t.Fatalf("doc %d: error %v does not name %s", i, r.Err, id)
			}
		case 2*insertRows + 2, 2*insertRows + 9:
			if r.Err != nil || r.Created {
				t.Fatalf("duplicate doc %d (%s): %+v", i, id, r)
			}
		default:
			if r.Err != nil || !r.Created {
				t.Fatalf("doc %d (%s): %+v", i, id, r)
			}
			want = append(want, id)
		}
	}
	// A batch with nothing to refuse: all of it in statements of insertRows.
	clean := docsOf(t, 100, 2*insertRows, 3, nil)
	mustWrite(t, db, clean...)
	for _, d := range clean {
		want = append(want, d.EventID)
	}
	if got := storedAfter(t, db, 1); !slices.Equal(got, want) {
		t.Fatalf("stored in seq order\n got %v\nwant %v", got, want)
	}
	if ids := ftsIDs(t, db, "memory"); len(ids) != len(want)+1 {
		t.Fatalf("fts has %d documents, want %d", len(ids), len(want)+1)
	}
	if d := turnsDiff(turnsTable(t, db.w), recomputedTurns(t, db.w)); d != "" {
		t.Fatal(d)
	}
}

// TestManyRowInsertStopsMidway: a statement of insertRows documents that
// stops in its middle (OR FAIL, or as here a trigger's RAISE(FAIL): the
// rows before the refused one stay) still reports those rows as created,
// with their seqs, in the turns, the full-text index and sqlite_sequence
// (which no later insert brings up here: the rest of the batch is refused
// too), and the refused documents fail alone. On a fresh index the first
// statement is the one that stops: sqlite_sequence has no row for docs yet.
func TestManyRowInsertStopsMidway(t *testing.T) {
	for _, c := range []struct {
		name          string
		stored, first int // documents there before; the first refused one
	}{
		{"second statement", 3, insertRows + 5},
		{"first statement of a fresh index", 0, 5},
	} {
		t.Run(c.name, func(t *testing.T) { testInsertStopsMidway(t, c.stored, c.first) })
	}
}

func testInsertStopsMidway(t *testing.T, nStored, first int) {
	db, _ := openTest(t)
	if _, err := db.w.Exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.docs WHEN new.event_id LIKE 'refused-%'
		BEGIN SELECT RAISE(FAIL, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	stored := docsOf(t, 1000, nStored, 1, nil)
	if len(stored) > 0 {
		mustWrite(t, db, stored...)
	}
	docs := docsOf(t, 0, 2*insertRows, 3, nil)
	for i := first; i < len(docs); i++ {
		docs[i].EventID = "refused-" + docs[i].EventID
	}
	res := db.Write(context.Background(), docs)
	var want []string
	for i, r := range res {
		if i >= first {
			if r.Err == nil || r.Created || !strings.Contains(r.Err.Error(), docs[i].EventID) {
				t.Fatalf("refused doc %d: %+v", i, r)
			}
			continue
		}
		if r.Err != nil || !r.Created {
			t.Fatalf("doc %d (%s): %+v", i, docs[i].EventID, r)
		}
		want = append(want, docs[i].EventID)
	}
	if got := storedAfter(t, db, int64(len(stored))); !slices.Equal(got, want) {
		t.Fatalf("stored in seq order\n got %v\nwant %v", got, want)
	}
	var maxSeq int64
	var sequence sql.NullInt64
	if err := db.w.QueryRow("SELECT max(seq), (SELECT seq FROM sqlite_sequence WHERE name = 'docs') FROM docs").Scan(&maxSeq, &sequence); err != nil {
		t.Fatal(err)
	}
	if !sequence.Valid || sequence.Int64 != maxSeq {
		t.Fatalf("sqlite_sequence %v, max(seq) %d", sequence, maxSeq)
	}
	if ids := ftsIDs(t, db, "memory"); len(ids) != len(want)+len(stored) {
		t.Fatalf("fts has %d documents, want %d", len(ids), len(want)+len(stored))
	}
	if d := turnsDiff(turnsTable(t, db.w), recomputedTurns(t, db.w)); d != "" {
		t.Fatal(d)
	}
}

// storedAfter is the event ids of the documents above seq, in seq order.
func storedAfter(t *testing.T, db *DB, seq int64) []string {
	t.Helper()
	rows, err := db.SQL().Query("SELECT event_id FROM docs WHERE seq > ? ORDER BY seq", seq)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
