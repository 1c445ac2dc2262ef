package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"engram/model"
)

// asVersion5 gives every row held in its columns (doc empty) its JSON, as
// schema version 5 and older stored every row (a non-empty embedding in
// embedding64, null in the JSON): tests of older layouts start from there.
func asVersion5(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("SELECT " + docColumns + " FROM docs d WHERE d.doc = ''")
	if err != nil {
		t.Fatal(err)
	}
	var docs []*model.IndexDoc
	for rows.Next() {
		var row docRow
		if err := rows.Scan(row.dest()...); err != nil {
			t.Fatal(err)
		}
		d, err := row.document()
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	rows.Close()
	for _, d := range docs {
		c := *d
		if len(c.Embedding) > 0 {
			c.Embedding = nil
		}
		doc, err := marshalString(&c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("UPDATE docs SET doc = ? WHERE event_id = ?", doc, d.EventID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocumentFromColumns: a document of any shape reads back exactly as it
// was written, whether its row holds it in its columns or as JSON, and the
// JSON is stored only for what the columns cannot tell apart.
func TestDocumentFromColumns(t *testing.T) {
	db, _ := openTest(t)
	mk := func(id string, edit func(*model.IndexDoc)) *model.IndexDoc {
		d := testDoc(id)
		edit(d)
		return d
	}
	cases := []struct {
		doc  *model.IndexDoc
		json bool // stored as JSON too
	}{
		{mk("full", func(*model.IndexDoc) {}), false},
		{mk("bare", func(d *model.IndexDoc) {
			d.UserID, d.AgentID, d.TurnID, d.TenantID, d.TraceID, d.Tool = "", "", "", "", "", ""
			d.Success, d.LatencyMs, d.Embedding, d.Tags = nil, nil, nil, []string{}
			d.Structured = json.RawMessage(`{}`)
		}), false},
		{mk("failed", func(d *model.IndexDoc) {
			d.Success, d.LatencyMs = ptr(false), ptr(int64(0))
			d.Tags = []string{"", "a \"quoted\" tag", "ünï"}
			d.Structured = json.RawMessage(" [1, \"<x>\" ,{\"y\":null}] ")
			d.ImportanceScore, d.RetrievalCount, d.DecayFactor = 1.0/3, 7, 0.1+0.2
		}), false},
		{mk("no-tags", func(d *model.IndexDoc) { d.Tags = nil }), true},
		{mk("null-structured", func(d *model.IndexDoc) { d.Structured = json.RawMessage("null") }), true},
		{mk("no-structured", func(d *model.IndexDoc) { d.Structured = nil }), true},
		{mk("empty-embedding", func(d *model.IndexDoc) { d.Embedding = []float64{} }), true},
		{mk("not-utf8", func(d *model.IndexDoc) { d.Summary = "bad \xff byte" }), true},
	}
	var docs []*model.IndexDoc
	for _, c := range cases {
		docs = append(docs, c.doc)
	}
	// What the same documents read back as when every one was stored as
	// JSON (version 5; its embedding64 is exact, as Go's JSON floats are):
	// the columns must give exactly that.
	want := map[string]string{}
	for _, d := range docs {
		c := *d
		c.IngestedAt = "x"
		raw, err := marshalString(&c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeStoredDoc([]byte(raw), nil)
		if err != nil {
			t.Fatal(err)
		}
		want[d.EventID] = jsonOf(t, back)
	}
	for _, r := range db.Write(context.Background(), docs) {
		if r.Err != nil || !r.Created {
			t.Fatalf("%+v", r)
		}
	}
	for _, c := range cases {
		id := c.doc.EventID
		var stored string
		if err := db.SQL().QueryRow("SELECT doc FROM docs WHERE event_id = ?", id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if (stored != "") != c.json {
			t.Errorf("%s: JSON stored %q, want JSON: %v", id, stored, c.json)
		}
		got, err := db.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.IngestedAt == "" {
			t.Errorf("%s: no ingested_at", id)
		}
		got.IngestedAt = "x"
		if g := jsonOf(t, got); g != want[id] {
			t.Errorf("%s:\n got %s\nwant %s", id, g, want[id])
		}
		if id == "bare" && (got.Embedding != nil || got.Success != nil || got.Tags == nil) {
			t.Errorf("bare: nil and empty not kept apart: %#v", got)
		}
	}
}

// TestDocumentShapesAgree: the reader's scans and the writer's Get decode a
// column row the same, and a version-5 row (JSON) the same as its columns.
func TestDocumentShapesAgree(t *testing.T) {
	db, _ := openTest(t)
	d := testDoc("one")
	mustWrite(t, db, d)
	fromColumns, err := db.Get(context.Background(), "one")
	if err != nil {
		t.Fatal(err)
	}
	asVersion5(t, db.w)
	var stored string
	if err := db.SQL().QueryRow("SELECT doc FROM docs WHERE event_id = 'one'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, `"event_id":"one"`) {
		t.Fatalf("not rewritten as JSON: %q", stored)
	}
	fromJSON, err := db.Get(context.Background(), "one")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromColumns, fromJSON) {
		t.Errorf("columns %#v\n   JSON %#v", fromColumns, fromJSON)
	}
}
