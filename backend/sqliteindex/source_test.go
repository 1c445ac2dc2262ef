package sqliteindex

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"engram/model"
	"engram/query"
)

// asVersion8 turns the index open as db into what schema 8 made of the
// same rows: no source column.
func asVersion8(t testing.TB, db *DB) {
	t.Helper()
	for _, s := range []string{"ALTER TABLE docs DROP COLUMN source", "PRAGMA user_version = 8"} {
		if _, err := db.w.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// An index of schema 8 (no source column) reads with the sources its
// session ids give while read-only, and a writer's open upgrades it in
// place to 9: the column is added and filled from system: sessions and
// from documents kept as JSON that say their source, and source: filters.
func TestSourceUpgradeFrom8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sys := testDoc("sys")
	sys.SessionID = "system:consolidation"
	plain := testDoc("plain")
	asJSON := testDoc("json") // tags absent: the row keeps its JSON, source in it
	asJSON.Tags, asJSON.Source, asJSON.SessionID = nil, model.SourceAmbient, "system:ambient:telemetry"
	upper := testDoc("upper") // not a system session: the prefix is matched exactly
	upper.SessionID = "SYSTEM:x"
	mustWrite(t, db, sys, plain, asJSON, upper)
	asVersion8(t, db)

	ro, err := OpenReadOnly(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"sys": "system", "plain": "", "json": "ambient", "upper": ""} {
		d, err := ro.Get(context.Background(), id)
		if err != nil || d.Source != want {
			t.Errorf("read-only at 8, %s: source %q (%v), want %q", id, d.Source, err, want)
		}
	}
	ro.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.SQL().QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != schemaVersion || schemaVersion < 9 {
		t.Fatalf("user_version %d", v)
	}
	rows, err := db.SQL().Query("SELECT event_id, source FROM docs ORDER BY event_id")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var id string
		var src sql.NullString
		if err := rows.Scan(&id, &src); err != nil {
			t.Fatal(err)
		}
		got[id] = src.String
	}
	rows.Close()
	want := map[string]string{"json": "ambient", "plain": "", "sys": "system", "upper": ""}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("upgraded %s: source %q, want %q", id, got[id], w)
		}
	}
	// The upgrade kept the full-text and the turns whole (docs_au was
	// dropped for it and is back).
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'docs_au'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Error("docs_au not recreated")
	}
	late := testDoc("late")
	late.Source = model.SourceSystem
	mustWrite(t, db, late)
	db.Close()

	r, err := OpenReader(path, queryOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for src, want := range map[string][]string{
		"source:system":        {"late", "sys"},
		"source:ambient":       {"json"},
		"-source:system":       {"json", "plain", "upper"},
		"source:system memory": {"late", "sys"},
		"source:system -session:" + `"system:consolidation"`: {"late"},
	} {
		p, err := r.Search(context.Background(), src, "", 10)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var ids []string
		for _, d := range p.Docs {
			ids = append(ids, d.EventID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, want) {
			t.Errorf("%s: %v, want %v", src, ids, want)
		}
	}
}

func queryOptions() query.Options { return query.Options{} }
