package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/model"
)

// scanDocs are documents whose keys lie where ScanByKey's two walks meet:
// keys the archive gives (key_odd 0) on several days, one before 1970 a
// fraction of a millisecond before midnight, the years 1 and 9999, an
// event whose offset puts it on the next UTC day, and ids one a prefix of
// the other ("abc-x.json" sorts before "abc.json"); and odd keys (key_odd
// 1): none, one outside events/, one dated a day the event is not on, one
// naming another id, one inside a day's keys, one equal to a dated
// document's, one after the last of a day's keys.
func scanDocs(t *testing.T) (dated, odd []*model.IndexDoc) {
	t.Helper()
	doc := func(id, ts, key string) *model.IndexDoc {
		d := testDoc(id)
		d.Timestamp, d.ObjectStorageKey = ts, key
		return d
	}
	for _, e := range [][2]string{
		{"abc", "2026-03-04T10:00:00Z"}, {"abc-x", "2026-03-04T09:00:00Z"}, {"abd", "2026-03-04T23:59:59.999Z"},
		{"zz", "2026-03-04T00:00:00Z"}, {"late", "2026-03-04T23:30:00-02:00"}, {"next", "2026-03-05T00:00:00Z"},
		{"old", "1969-12-31T23:59:59.9999Z"}, {"epoch", "1970-01-01T00:00:00Z"},
		{"first", "0001-01-01T00:00:00Z"}, {"last", "9999-12-31T23:59:59.999999999Z"}, {"june", "2026-06-30T12:00:00Z"},
	} {
		key, err := model.ArchiveKey(e[0], e[1])
		if err != nil {
			t.Fatal(err)
		}
		dated = append(dated, doc(e[0], e[1], key))
	}
	odd = []*model.IndexDoc{
		doc("nokey", "2026-03-04T11:00:00Z", ""),
		doc("custom", "2026-03-04T11:00:00Z", "custom/zzz.json"),
		doc("moved", "2026-03-04T11:00:00Z", "events/2026/03/05/moved.json"),
		doc("renamed", "2026-03-04T11:00:00Z", "events/2026/03/04/abc-w.json"),
		doc("between", "2026-03-10T11:00:00Z", "events/2026/03/04/abcd.json"),
		doc("upper", "2026-03-04T11:00:00Z", "events/zzzz"),
		doc("same", "2026-03-04T11:00:00Z", "events/2026/03/04/abc.json"), // a dated document's key
		doc("tilde", "2026-03-04T11:00:00Z", "events/2026/03/04/~.json"),  // after the day's keys
	}
	return dated, odd
}

// scanRanges are the from/to pairs every walk is checked over: whole days,
// parts of a day, prefixes that are not a day's, and none.
var scanRanges = [][2]string{
	{"", ""}, {"events/", ""}, {"events/2026/03/04/", "events/2026/03/05/"}, {"events/2026/03/04/", ""},
	{"events/2026/03/04/abc-", "events/2026/03/04/abc.json"}, {"events/2026/03", "events/2026/04"},
	{"events/1969/", "events/1970/01/02/"}, {"a", "f"}, {"events/9999/12/31/", ""}, {"events/2026/03/05/", "events/2026/03/05/"},
	{"events/2026/03/04/abd.json", "events/2026/03/05/next.json"}, {"events/0001/01/01/", "events/0001/01/02/"},
}

// wantScan is what ScanByKey must stream: the documents in [from, to), by
// key then id.
func wantScan(docs []*model.IndexDoc, from, to string) []string {
	var in []*model.IndexDoc
	for _, d := range docs {
		if d.ObjectStorageKey >= from && (to == "" || d.ObjectStorageKey < to) {
			in = append(in, d)
		}
	}
	slices.SortFunc(in, func(a, b *model.IndexDoc) int {
		return cmp.Or(strings.Compare(a.ObjectStorageKey, b.ObjectStorageKey), strings.Compare(a.EventID, b.EventID))
	})
	ids := []string{}
	for _, d := range in {
		ids = append(ids, d.EventID)
	}
	return ids
}

func checkScan(t *testing.T, db *DB, docs []*model.IndexDoc) {
	t.Helper()
	for _, r := range scanRanges {
		got := []string{}
		err := db.ScanByKey(context.Background(), r[0], r[1], func(d *model.IndexDoc) error {
			got = append(got, d.EventID)
			return nil
		})
		if err != nil {
			t.Fatalf("ScanByKey(%q, %q): %v", r[0], r[1], err)
		}
		if want := wantScan(docs, r[0], r[1]); !slices.Equal(got, want) {
			t.Errorf("ScanByKey(%q, %q)\n got %v\nwant %v", r[0], r[1], got, want)
		}
	}
}

func TestScanByKey(t *testing.T) {
	db, _ := openTest(t)
	dated, odd := scanDocs(t)
	mustWrite(t, db, append(slices.Clone(dated), odd...)...)
	for _, d := range append(slices.Clone(dated), odd...) {
		var flag int
		if err := db.r.QueryRow("SELECT key_odd FROM docs WHERE event_id = ?", d.EventID).Scan(&flag); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[slices.Contains(odd, d)]; flag != want {
			t.Errorf("%s (%q): key_odd %d, want %d", d.EventID, d.ObjectStorageKey, flag, want)
		}
	}
	checkScan(t, db, append(dated, odd...))
	var n int
	if err := db.r.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'docs_key'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("docs_key: %d, %v", n, err)
	}
}

// asVersion6 turns the index at path, open as db, into what schema 6 made
// of the same rows: no key_odd, an index of every document by key.
func asVersion6(t testing.TB, db *DB) {
	t.Helper()
	for _, s := range []string{
		"DROP INDEX docs_key_odd", "DROP TRIGGER docs_au_key", "ALTER TABLE docs DROP COLUMN key_odd",
		"CREATE INDEX docs_key ON docs(object_storage_key)", "PRAGMA user_version = 6",
	} {
		if _, err := db.w.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// An index of schema 6 is walked by its docs_key when opened read-only,
// and once a writer has upgraded it, its rows (key_odd NULL) by
// docs_key_odd beside the day walk of the rows written since.
func TestScanByKeyOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dated, odd := scanDocs(t)
	before := append(slices.Clone(dated[:6]), odd[:3]...)
	mustWrite(t, db, before...)
	asVersion6(t, db)

	ro, err := OpenReadOnly(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkScan(t, ro, before)
	ro.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var nulls int
	if err := db.r.QueryRow("SELECT count(*) FROM docs WHERE key_odd IS NULL").Scan(&nulls); err != nil || nulls != len(before) {
		t.Fatalf("rows of version 6 without key_odd: %d of %d, %v", nulls, len(before), err)
	}
	after := append(slices.Clone(dated[6:]), odd[3:]...)
	mustWrite(t, db, after...)
	checkScan(t, db, append(before, after...))
	var keyIndex int
	if err := db.r.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'docs_key'").Scan(&keyIndex); err != nil || keyIndex != 0 {
		t.Fatalf("docs_key after the upgrade: %d, %v", keyIndex, err)
	}
}

// keyOdd is 0 exactly for the key model.ArchiveKey gives, for any time a
// timestamp can hold, and that key's day holds the row's ts_unix_ms.
func TestKeyOddMatchesArchiveKey(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	for i := range 40000 {
		ts := time.Unix(lo+r.Int64N(hi-lo), r.Int64N(1e9))
		if i%2 == 1 { // within a millisecond of a UTC midnight, before 1970 or not
			y, m, d := ts.UTC().Date()
			ts = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(2e6) - 1e6))
			if ts.Year() < 1 || ts.Year() > 9999 {
				continue
			}
		}
		ts = ts.In(time.FixedZone("", (r.IntN(47)-23)*3600))
		stamp := ts.Format(time.RFC3339Nano)
		parsed, err := model.ParseTimestamp(stamp)
		if err != nil {
			t.Fatal(err)
		}
		key, err := model.ArchiveKey("ev-1", stamp)
		if err != nil {
			t.Fatal(err)
		}
		if keyOdd(key, "ev-1", parsed) != 0 {
			t.Fatalf("%s: the archive's key %q is odd", stamp, key)
		}
		// What the walk by day relies on: the row's ts_unix_ms lies in the
		// day its key names.
		day, ok := model.ArchiveKeyDay(key)
		if !ok || day.UnixMilli() != floorDay(parsed.UnixMilli()) {
			t.Fatalf("%s: key %q names day %v (%v), ts_unix_ms %d is in the day from %d", stamp, key, day, ok, parsed.UnixMilli(), floorDay(parsed.UnixMilli()))
		}
		for _, k := range []string{model.ArchivePrefix(ts.AddDate(0, 0, 1)) + "ev-1.json", strings.TrimSuffix(key, ".json"), key + "x", strings.Replace(key, "ev-1", "ev-2", 1)} {
			if keyOdd(k, "ev-1", parsed) != 1 {
				t.Fatalf("%s: %q is not odd", stamp, k)
			}
		}
	}
}

// A key changed with plain SQL (maintenance) makes the row odd, so the
// walk still streams it, in its new place.
func TestScanByKeyAfterKeyUpdate(t *testing.T) {
	db, _ := openTest(t)
	dated, odd := scanDocs(t)
	docs := append(slices.Clone(dated), odd...)
	mustWrite(t, db, docs...)
	moved := *dated[0]
	moved.ObjectStorageKey = "events/2026/03/07/abc.json"
	if _, err := db.w.Exec("UPDATE docs SET object_storage_key = ? WHERE event_id = ?", moved.ObjectStorageKey, moved.EventID); err != nil {
		t.Fatal(err)
	}
	var flag sql.NullInt64
	if err := db.r.QueryRow("SELECT key_odd FROM docs WHERE event_id = ?", moved.EventID).Scan(&flag); err != nil || flag.Valid {
		t.Fatalf("key_odd after the key changed: %v, %v", flag, err)
	}
	docs[0] = &moved
	checkScan(t, db, docs)

	// The time alone, a day on: the key stays, and must be found there.
	later := dated[1]
	if _, err := db.w.Exec("UPDATE docs SET ts_unix_ms = ts_unix_ms + ? WHERE event_id = ?", dayMs, later.EventID); err != nil {
		t.Fatal(err)
	}
	// The id alone: the key no longer names it.
	renamed := *dated[2]
	renamed.EventID = "abd-renamed"
	if _, err := db.w.Exec("UPDATE docs SET event_id = ? WHERE event_id = ?", renamed.EventID, dated[2].EventID); err != nil {
		t.Fatal(err)
	}
	docs[2] = &renamed
	checkScan(t, db, docs)
}
