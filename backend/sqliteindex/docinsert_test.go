package sqliteindex

import (
	"context"
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
		switch {
		case i == 5 || i == insertRows+3:
			if r.Err == nil || r.Created {
				t.Fatalf("doc %d (%s): %+v, want an error", i, id, r)
			}
			if !strings.Contains(r.Err.Error(), id) {
				t.Fatalf("doc %d: error %v does not name %s", i, r.Err, id)
			}
		case i == 2*insertRows+2 || i == 2*insertRows+9:
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
	rows, err := db.SQL().Query("SELECT event_id FROM docs WHERE seq > 1 ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		got = append(got, id)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("stored in seq order\n got %v\nwant %v", got, want)
	}
	if ids := ftsIDs(t, db, "memory"); len(ids) != len(want)+1 {
		t.Fatalf("fts has %d documents, want %d", len(ids), len(want)+1)
	}
	if d := turnsDiff(turnsTable(t, db.w), recomputedTurns(t, db.w)); d != "" {
		t.Fatal(d)
	}
}
