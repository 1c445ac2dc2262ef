package sqliteindex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

func openTest(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func testDoc(id string) *model.IndexDoc {
	return &model.IndexDoc{
		EventID:          id,
		Timestamp:        "2026-05-08T22:31:25.5+02:00",
		EventType:        model.TypeUserInput,
		SessionID:        "s1",
		UserID:           "u1",
		AgentID:          "a1",
		Summary:          "Design a memory system <with> fast & associative retrieval",
		Embedding:        []float64{0.51, 0.68, 0.85, 0.02, 0.1234567890123, 0.36, 0.53, 0.7},
		Structured:       json.RawMessage(`{"k": [1, 2, {"x": "y"}]}`),
		ImportanceScore:  0.79,
		RewardScore:      0.5,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: "events/2026/05/08/" + id + ".json",
		Tags:             []string{"memory", "design"},
		TurnID:           "turn-1",
		TenantID:         "t1",
		TraceID:          "trace-1",
		Tool:             "search",
		Success:          ptr(true),
		LatencyMs:        ptr(int64(42)),
	}
}

func mustWrite(t testing.TB, db *DB, docs ...*model.IndexDoc) {
	t.Helper()
	for i, r := range db.Write(context.Background(), docs) {
		if r.Err != nil || !r.Created {
			t.Fatalf("doc %d: created=%v err=%v", i, r.Created, r.Err)
		}
	}
}

// jsonOf is v as JSON; a document's embedding at float32 precision, as the
// index keeps it (since schema version 8).
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	if d, ok := v.(*model.IndexDoc); ok && d != nil && d.Embedding != nil {
		c := *d
		c.Embedding = make([]float64, len(d.Embedding))
		for i, x := range d.Embedding {
			c.Embedding[i] = float64(float32(x))
		}
		v = &c
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFTS5CompiledIn(t *testing.T) {
	db, _ := openTest(t)
	var on int
	if err := db.SQL().QueryRow("SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&on); err != nil || on != 1 {
		t.Fatalf("ENABLE_FTS5 = %d, %v", on, err)
	}
}

func TestOpenTwiceIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, db, testDoc("e1"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A second handle while one is open, then again after closing.
	db1, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*DB{db1, db2} {
		var v int
		var mode string
		if err := d.SQL().QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
			t.Fatalf("user_version %d, %v", v, err)
		}
		if err := d.SQL().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Fatalf("journal_mode %q, %v", mode, err)
		}
		if n, err := d.Count(context.Background()); err != nil || n != 1 {
			t.Fatalf("count %d, %v", n, err)
		}
	}
	var sync, fk int
	if err := db1.w.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := db1.w.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if sync != 2 || fk != 0 {
		t.Fatalf("synchronous=%d foreign_keys=%d", sync, fk)
	}
	db1.Close()
	db2.Close()
	// A future schema is refused.
	db3, _ := Open(path, Options{})
	if _, err := db3.w.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db3.Close()
	if _, err := Open(path, Options{}); err == nil {
		t.Fatal("opened a newer schema")
	}
	if _, err := OpenReadOnly(path, Options{}); err == nil {
		t.Fatal("opened a newer schema read-only")
	}
}

func TestRoundTrip(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	in := testDoc("e1")
	bare := &model.IndexDoc{ // a source-system document: no extensions, no embedding
		EventID: "e2", Timestamp: "2026-05-08T22:31:25Z", EventType: model.TypeToolResult,
		SessionID: "s1", Summary: "x", Embedding: []float64{}, Structured: json.RawMessage(`{}`), Tags: []string{},
	}
	before := time.Now().UTC().Add(-time.Second)
	mustWrite(t, db, in, bare)
	for _, want := range []*model.IndexDoc{in, bare} {
		ia, err := time.Parse(time.RFC3339, want.IngestedAt)
		if err != nil || ia.Before(before) || len(want.IngestedAt) != len(ingestedAtLayout) {
			t.Fatalf("IngestedAt %q: %v", want.IngestedAt, err)
		}
		got, err := db.Get(ctx, want.EventID)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Fatalf("round trip\n got %s\nwant %s", g, w)
		}
	}
	if _, err := db.Get(ctx, "nope"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	// The columns.
	var tsMS, phase, dim int64
	var turnKey, tags, structured string
	var success, latency, tenant any
	var emb []byte
	err := db.SQL().QueryRow(`SELECT ts_unix_ms, phase, embedding_dim, turn_key, tags, structured, success, latency_ms, tenant_id, embedding
		FROM docs WHERE event_id = 'e1'`).Scan(&tsMS, &phase, &dim, &turnKey, &tags, &structured, &success, &latency, &tenant, &emb)
	if err != nil {
		t.Fatal(err)
	}
	if tsMS != time.Date(2026, 5, 8, 20, 31, 25, 5e8, time.UTC).UnixMilli() || phase != 0 || dim != 8 || turnKey != "turn-1" ||
		tags != `["memory","design"]` || structured != `{"k":[1,2,{"x":"y"}]}` || success != int64(1) || latency != int64(42) ||
		tenant != "t1" || len(emb) != 32 {
		t.Fatalf("columns: %v %v %v %v %v %v %v %v %v %d", tsMS, phase, dim, turnKey, tags, structured, success, latency, tenant, len(emb))
	}
	var trace any
	if err := db.SQL().QueryRow(`SELECT turn_key, phase, trace_id, embedding FROM docs WHERE event_id = 'e2'`).Scan(&turnKey, &phase, &trace, &emb); err != nil {
		t.Fatal(err)
	}
	if turnKey != "e2" || phase != 2 || trace != nil || emb != nil {
		t.Fatalf("bare columns: %v %v %v %v", turnKey, phase, trace, emb)
	}
}

func TestDuplicateUnchanged(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	first := testDoc("e1")
	mustWrite(t, db, first)
	stored := jsonOf(t, first)

	again := testDoc("e1")
	again.Summary = "something else"
	fresh := testDoc("e2")
	dupInBatch := testDoc("e2")
	res := db.Write(ctx, []*model.IndexDoc{again, fresh, dupInBatch})
	if res[0].Created || res[0].Err != nil || !res[1].Created || res[1].Err != nil || res[2].Created || res[2].Err != nil {
		t.Fatalf("results %+v", res)
	}
	if again.IngestedAt != "" || dupInBatch.IngestedAt != "" || fresh.IngestedAt == "" {
		t.Fatalf("IngestedAt: %q %q %q", again.IngestedAt, dupInBatch.IngestedAt, fresh.IngestedAt)
	}
	got, _ := db.Get(ctx, "e1")
	if jsonOf(t, got) != stored {
		t.Fatal("duplicate changed the stored document")
	}
	var n, nTurn int
	if err := db.SQL().QueryRow("SELECT count(*) FROM docs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT n_events FROM turns WHERE turn_key = 'turn-1'").Scan(&nTurn); err != nil {
		t.Fatal(err)
	}
	if n != 2 || nTurn != 2 {
		t.Fatalf("docs %d, turn events %d", n, nTurn)
	}
}

func TestBadDocumentFailsAlone(t *testing.T) {
	db, _ := openTest(t)
	badTS := testDoc("bad-ts")
	badTS.Timestamp = "yesterday"
	nan := testDoc("nan")
	nan.ImportanceScore = math.NaN()
	badJSON := testDoc("bad-json")
	badJSON.Structured = json.RawMessage(`{"a":`)
	noID := testDoc("")
	docs := []*model.IndexDoc{testDoc("ok1"), badTS, nan, badJSON, noID, nil, testDoc("ok2")}
	res := db.Write(context.Background(), docs)
	for i, r := range res {
		ok := i == 0 || i == len(docs)-1
		if ok != (r.Err == nil) || ok != r.Created {
			t.Fatalf("doc %d: %+v", i, r)
		}
	}
	t.Log(res[1].Err, "|", res[2].Err, "|", res[3].Err)
	if !strings.Contains(res[2].Err.Error(), "importance_score: NaN") {
		t.Errorf("NaN score: %v (want the field named)", res[2].Err)
	}
	if n, _ := db.Count(context.Background()); n != 2 {
		t.Fatalf("count %d", n)
	}
	if nan.IngestedAt != "" {
		t.Fatal("IngestedAt set on a failed document")
	}
}

// An error raised by SQLite for one statement undoes that document only
// (its triggers' writes included) and the batch goes on.
// A big batch is prepared on several goroutines; results keep their order.
func TestBigBatch(t *testing.T) {
	db, _ := openTest(t)
	docs := make([]*model.IndexDoc, 300)
	for i := range docs {
		docs[i] = testDoc(fmt.Sprintf("e%03d", i))
		if i%37 == 5 {
			docs[i].Timestamp = "bad"
		}
	}
	docs[299] = testDoc("e000") // duplicate of the first
	for i, r := range db.Write(context.Background(), docs) {
		bad := i%37 == 5
		if bad != (r.Err != nil) || r.Created != (!bad && i != 299) {
			t.Fatalf("doc %d: %+v", i, r)
		}
	}
	var maxSeq, n int64
	if err := db.SQL().QueryRow("SELECT max(seq), count(*) FROM docs").Scan(&maxSeq, &n); err != nil {
		t.Fatal(err)
	}
	var first, last string
	if err := db.SQL().QueryRow("SELECT event_id FROM docs ORDER BY seq LIMIT 1").Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT event_id FROM docs ORDER BY seq DESC LIMIT 1").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if n != 291 || maxSeq != 291 || first != "e000" || last != "e298" {
		t.Fatalf("n %d, max seq %d, first %s, last %s", n, maxSeq, first, last)
	}
}

func TestStatementErrorFailsAlone(t *testing.T) {
	db, _ := openTest(t)
	if _, err := db.w.Exec(`CREATE TEMP TRIGGER boom AFTER INSERT ON main.docs WHEN new.event_id = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	boom := testDoc("boom")
	boom.TurnID = "boom-turn"
	boom.Tags = []string{"boom-tag"}
	res := db.Write(context.Background(), []*model.IndexDoc{testDoc("e1"), boom, testDoc("e2")})
	if !res[0].Created || res[0].Err != nil || res[1].Created || res[1].Err == nil || !res[2].Created || res[2].Err != nil {
		t.Fatalf("results %+v", res)
	}
	var docs, turns, tags int
	if err := db.SQL().QueryRow("SELECT count(*) FROM docs").Scan(&docs); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT count(*) FROM turns WHERE turn_key = 'boom-turn'").Scan(&turns); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT count(*) FROM doc_tags WHERE tag = 'boom-tag'").Scan(&tags); err != nil {
		t.Fatal(err)
	}
	if docs != 2 || turns != 0 || tags != 0 || boom.IngestedAt != "" {
		t.Fatalf("docs %d, turns %d, tags %d, ingested_at %q", docs, turns, tags, boom.IngestedAt)
	}
	if got := ftsIDs(t, db, "memory"); fmt.Sprint(got) != "[e1 e2]" {
		t.Fatalf("fts %v", got)
	}
}

func TestBatchErrorFailsAll(t *testing.T) {
	db, _ := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := testDoc("e1")
	res := db.Write(ctx, []*model.IndexDoc{d, testDoc("e2")})
	for i, r := range res {
		if r.Err == nil || r.Created {
			t.Fatalf("doc %d: %+v", i, r)
		}
	}
	if d.IngestedAt != "" {
		t.Fatal("IngestedAt set")
	}
	if n, _ := db.Count(context.Background()); n != 0 {
		t.Fatalf("count %d", n)
	}
}

type turnRow struct {
	Session, Agent, Tenant          any
	N, First, Last, Failed          int64
	MaxImp                          float64
	FirstSeq, LastSeq, DocsMax, Min int64
}

func readTurn(t *testing.T, db *DB, key string) turnRow {
	t.Helper()
	var r turnRow
	err := db.SQL().QueryRow(`SELECT session_id, agent_id, tenant_id, n_events, first_ts_ms, last_ts_ms, any_failed,
		max_importance, first_seq, last_seq FROM turns WHERE turn_key = ?`, key).
		Scan(&r.Session, &r.Agent, &r.Tenant, &r.N, &r.First, &r.Last, &r.Failed, &r.MaxImp, &r.FirstSeq, &r.LastSeq)
	if err != nil {
		t.Fatalf("turn %s: %v", key, err)
	}
	return r
}

func TestTurnsAggregate(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	mk := func(id, turn, trace, ts string, typ string, imp float64, success *bool) *model.IndexDoc {
		d := testDoc(id)
		d.TurnID, d.TraceID, d.Timestamp, d.EventType, d.ImportanceScore, d.Success = turn, trace, ts, typ, imp, success
		d.AgentID = ""
		return d
	}
	ms := func(s string) int64 { tm, _ := time.Parse(time.RFC3339Nano, s); return tm.UnixMilli() }
	// Turn A over three batches, timestamps out of order; turn B keyed by trace id.
	mustWrite(t, db, mk("a1", "A", "", "2026-05-08T10:00:01Z", model.TypeUserInput, 0.3, nil),
		mk("b1", "", "B", "2026-05-08T11:00:00Z", model.TypeUserInput, 0.5, ptr(true)))
	mustWrite(t, db, mk("a2", "A", "", "2026-05-08T10:00:00.250Z", model.TypeAgentAction, 0.9, ptr(true)))
	a3 := mk("a3", "A", "trace-x", "2026-05-08T10:00:05Z", model.TypeToolResult, 0.6, ptr(false))
	a3.AgentID = "agent-late"
	mustWrite(t, db, a3)
	db.Write(ctx, []*model.IndexDoc{mk("a2", "A", "", "2026-05-09T00:00:00Z", model.TypeToolResult, 1, ptr(false))}) // duplicate: ignored

	a := readTurn(t, db, "A")
	want := turnRow{Session: "s1", Agent: "agent-late", Tenant: "t1", N: 3,
		First: ms("2026-05-08T10:00:00.250Z"), Last: ms("2026-05-08T10:00:05Z"), Failed: 1, MaxImp: 0.9, FirstSeq: 1, LastSeq: 4}
	if a != want {
		t.Fatalf("turn A\n got %+v\nwant %+v", a, want)
	}
	b := readTurn(t, db, "B")
	if b.N != 1 || b.Failed != 0 || b.MaxImp != 0.5 || b.LastSeq != 2 || b.Agent != nil {
		t.Fatalf("turn B %+v", b)
	}
	// Newest turn first.
	var keys []string
	rows, _ := db.SQL().Query("SELECT turn_key FROM turns ORDER BY last_seq DESC")
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if fmt.Sprint(keys) != "[A B]" {
		t.Fatalf("order %v", keys)
	}
	// The causal order within a turn, from the index.
	var ids []string
	rows, _ = db.SQL().Query("SELECT event_id FROM docs WHERE turn_key = 'A' ORDER BY phase, ts_unix_ms, event_id")
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, k)
	}
	if fmt.Sprint(ids) != "[a1 a2 a3]" {
		t.Fatalf("turn order %v", ids)
	}

	// Maintenance with plain SQL keeps turns consistent.
	if _, err := db.w.Exec("DELETE FROM docs WHERE event_id = 'a3'"); err != nil {
		t.Fatal(err)
	}
	a = readTurn(t, db, "A")
	if a.N != 2 || a.Failed != 0 || a.Last != ms("2026-05-08T10:00:01Z") || a.LastSeq != 3 || a.Agent != nil {
		t.Fatalf("turn A after delete %+v", a)
	}
	if _, err := db.w.Exec("UPDATE docs SET turn_key = 'A' WHERE event_id = 'b1'"); err != nil {
		t.Fatal(err)
	}
	var nB int
	if err := db.SQL().QueryRow("SELECT count(*) FROM turns WHERE turn_key = 'B'").Scan(&nB); err != nil {
		t.Fatal(err)
	}
	if a = readTurn(t, db, "A"); a.N != 3 || nB != 0 {
		t.Fatalf("after update: A %+v, B rows %d", a, nB)
	}
}

func ftsIDs(t *testing.T, db *DB, q string) []string {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT d.event_id FROM docs_fts JOIN docs d ON d.seq = docs_fts.rowid
		WHERE docs_fts MATCH ? ORDER BY d.event_id`, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestFTS(t *testing.T) {
	db, _ := openTest(t)
	d1, d2, d3 := testDoc("e1"), testDoc("e2"), testDoc("e3")
	d1.Summary = "The pipeline is indexing experience events into OpenSearch"
	d2.Summary = "Tool call failed: timeout while fetching the Café menu"
	d3.Summary = "Nothing relevant here"
	mustWrite(t, db, d1, d2, d3)
	for q, want := range map[string]string{
		"indexing":              "[e1]",
		"indexed":               "[e1]", // porter stemming
		"INDEX":                 "[e1]",
		"cafe":                  "[e2]", // unicode61 folds diacritics
		"timeout AND tool":      "[e2]",
		"experience OR nothing": "[e1 e3]",
		"missing":               "[]",
	} {
		if got := fmt.Sprint(ftsIDs(t, db, q)); got != want {
			t.Errorf("MATCH %q = %s, want %s", q, got, want)
		}
	}
	if _, err := db.w.Exec("DELETE FROM docs WHERE event_id = 'e1'"); err != nil {
		t.Fatal(err)
	}
	if got := ftsIDs(t, db, "indexed"); len(got) != 0 {
		t.Fatalf("deleted document still found: %v", got)
	}
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM doc_tags WHERE tag = 'memory'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("doc_tags memory = %d", n)
	}
	if _, err := db.w.Exec("INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')"); err != nil {
		t.Fatal("fts integrity:", err)
	}
}

func TestTags(t *testing.T) {
	db, _ := openTest(t)
	d1, d2 := testDoc("e1"), testDoc("e2")
	d1.Tags = []string{"x", "y", "x"}
	d2.Tags = nil
	mustWrite(t, db, d1, d2)
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM doc_tags").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("doc_tags rows %d", n)
	}
	got, _ := db.Get(context.Background(), "e2")
	if got.Tags != nil { // stored as given
		t.Fatalf("tags %v", got.Tags)
	}
}

// A reader in another *sql.DB (as another process would be) sees committed
// writes while a write transaction is open, without waiting for it.
func TestReaderDuringWrite(t *testing.T) {
	db, path := openTest(t)
	ctx := context.Background()
	mustWrite(t, db, testDoc("e1"))

	ro, err := OpenReadOnly(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if res := ro.Write(ctx, []*model.IndexDoc{testDoc("x")}); !errors.Is(res[0].Err, backend.ErrReadOnly) {
		t.Fatalf("read-only write: %+v", res[0])
	}
	if _, err := ro.SQL().Exec("DELETE FROM docs"); err == nil {
		t.Fatal("read pool accepted a write")
	}

	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := rowArgs(testDoc("e2"), "2026-01-01T00:00:00.000Z")
	if _, err := tx.Stmt(db.ins).Exec(args...); err != nil {
		t.Fatal(err)
	}
	// The transaction stays open until after the reads: a reader that
	// waited for it would hit this deadline.
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	n, err := ro.Count(qctx)
	if err != nil || n != 1 {
		t.Fatalf("count during write: %d, %v", n, err)
	}
	if _, err := ro.Get(qctx, "e2"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("uncommitted document visible: %v", err)
	}
	t.Logf("reads during the open write transaction took %v", time.Since(start))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n, err := ro.Count(ctx); err != nil || n != 2 {
		t.Fatalf("count after commit: %d, %v", n, err)
	}
}

// Two writers on one file (as two processes would be) take turns.
func TestTwoWriters(t *testing.T) {
	db1, path := openTest(t)
	db2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var wg sync.WaitGroup
	for w, db := range []*DB{db1, db2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range 10 {
				docs := make([]*model.IndexDoc, 20)
				for i := range docs {
					docs[i] = testDoc(fmt.Sprintf("w%d-%d-%d", w, b, i))
				}
				for _, r := range db.Write(context.Background(), docs) {
					if r.Err != nil || !r.Created {
						t.Errorf("%+v", r)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if n, _ := db1.Count(context.Background()); n != 400 {
		t.Fatalf("count %d", n)
	}
}

// Concurrent writes and reads on one DB (run with -race).
func TestConcurrentUse(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range 5 {
				docs := []*model.IndexDoc{testDoc(fmt.Sprintf("w%d-%d", w, b)), testDoc("shared")}
				for _, r := range db.Write(ctx, docs) {
					if r.Err != nil {
						t.Error(r.Err)
					}
				}
				if _, err := db.Get(ctx, "shared"); err != nil {
					t.Error(err)
				}
				if _, err := db.Count(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n, _ := db.Count(ctx); n != 21 {
		t.Fatalf("count %d", n)
	}
	db.Close()
	if res := db.Write(ctx, []*model.IndexDoc{testDoc("late")}); !errors.Is(res[0].Err, backend.ErrClosed) {
		t.Fatalf("write after close: %+v", res[0])
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDescribe(t *testing.T) {
	db, path := openTest(t)
	if db.Name() != "experience_events" || db.Describe() != "sqlite "+path {
		t.Fatal(db.Name(), db.Describe())
	}
}

// TestFTSAcrossBatches: the full-text rows of a batch are added in one
// statement after its inserts; documents already stored, or failing alone,
// must get none, and every created one must get exactly one.
func TestFTSAcrossBatches(t *testing.T) {
	db, _ := openTest(t)
	a, b := testDoc("a"), testDoc("b")
	a.Summary, b.Summary = "alpha first batch", "bravo first batch"
	mustWrite(t, db, a, b)
	again, bad, c := testDoc("a"), testDoc("bad"), testDoc("c")
	again.Summary = "alpha changed later" // a duplicate: left as it was
	bad.Timestamp = "yesterday"
	c.Summary = "charlie second batch"
	res := db.Write(context.Background(), []*model.IndexDoc{again, bad, c})
	if res[0].Created || res[0].Err != nil || res[1].Err == nil || !res[2].Created {
		t.Fatalf("results %+v", res)
	}
	for q, want := range map[string]string{
		"batch":   "[a b c]",
		"changed": "[]",
		"charlie": "[c]",
	} {
		if got := fmt.Sprint(ftsIDs(t, db, q)); got != want {
			t.Errorf("MATCH %q = %s, want %s", q, got, want)
		}
	}
	var n int
	if err := db.SQL().QueryRow("SELECT count(*) FROM docs_fts_docsize").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d full-text rows for 3 documents", n)
	}
	if _, err := db.w.Exec("INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')"); err != nil {
		t.Fatal("fts integrity:", err)
	}
}

// TestUpgradeFromVersion1: an index written by schema version 1 (whose
// insert trigger added the full-text row) is upgraded in place by Open, and
// its old and new documents are all found exactly once.
func TestUpgradeFromVersion1(t *testing.T) {
	db, path := openTest(t)
	for _, s := range []string{
		"DROP TRIGGER IF EXISTS docs_ai",
		`CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, summary) VALUES (new.seq, new.summary);
  INSERT OR IGNORE INTO doc_tags(tag, seq)
    SELECT value, new.seq FROM json_each(new.tags) WHERE type = 'text';
END`,
		"PRAGMA user_version = 1",
	} {
		if _, err := db.w.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	old := testDoc("old")
	old.Summary = "written by version one"
	args, err := rowArgs(old, "2026-05-08T22:31:25.000Z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(insertSQL, args...); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	var trigger string
	if err := db.SQL().QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	// No row once the trigger is gone: trigger stays "".
	_ = db.SQL().QueryRow("SELECT sql FROM sqlite_master WHERE name = 'docs_ai'").Scan(&trigger)
	if v != schemaVersion || trigger != "" {
		t.Fatalf("after upgrade: version %d, trigger %s", v, trigger)
	}
	fresh := testDoc("new")
	fresh.Summary = "written by version two"
	mustWrite(t, db, fresh)
	if got := fmt.Sprint(ftsIDs(t, db, "written")); got != "[new old]" {
		t.Fatalf("MATCH written = %s", got)
	}
	if _, err := db.w.Exec("INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')"); err != nil {
		t.Fatal("fts integrity:", err)
	}
}

// TestTurnsMatchRecompute writes documents of interleaved turns in batches
// of varied sizes (several documents of a turn in one batch, agents and
// tenants missing on some, duplicates re-sent) and checks every turns row
// against the turn recomputed from scratch from its documents.
func TestTurnsMatchRecompute(t *testing.T) {
	db, _ := openTest(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	var all []*model.IndexDoc
	for i := range 400 {
		d := testDoc(fmt.Sprintf("e%03d", i))
		d.TurnID = fmt.Sprintf("turn-%02d", rnd.IntN(40))
		d.AgentID, d.TenantID = "", ""
		if rnd.IntN(3) == 0 {
			d.AgentID = fmt.Sprintf("agent-%d", rnd.IntN(4))
		}
		if rnd.IntN(4) == 0 {
			d.TenantID = fmt.Sprintf("tenant-%d", rnd.IntN(2))
		}
		if rnd.IntN(5) > 0 {
			d.Success = ptr(rnd.IntN(4) > 0)
		}
		d.ImportanceScore = float64(rnd.IntN(100)) / 100
		d.Timestamp = time.Date(2026, 5, 8, 10, 0, rnd.IntN(3600), 0, time.UTC).Format(time.RFC3339)
		all = append(all, d)
	}
	for i := 0; i < len(all); {
		n := 1 + rnd.IntN(60)
		batch := all[i:min(i+n, len(all))]
		dup := i > 0 && rnd.IntN(3) == 0
		if dup {
			batch = append([]*model.IndexDoc{all[rnd.IntN(i)]}, batch...) // a duplicate first
		}
		for j, r := range db.Write(context.Background(), batch) {
			if r.Err != nil || r.Created == (dup && j == 0) {
				t.Fatalf("batch at %d, doc %d: %+v", i, j, r)
			}
		}
		i += n
	}
	rows, err := db.SQL().Query(`SELECT turn_key,
		(SELECT session_id FROM docs x WHERE x.turn_key = d.turn_key AND session_id IS NOT NULL ORDER BY seq LIMIT 1),
		(SELECT agent_id   FROM docs x WHERE x.turn_key = d.turn_key AND agent_id   IS NOT NULL ORDER BY seq LIMIT 1),
		(SELECT tenant_id  FROM docs x WHERE x.turn_key = d.turn_key AND tenant_id  IS NOT NULL ORDER BY seq LIMIT 1),
		count(*), min(ts_unix_ms), max(ts_unix_ms), max(success IS 0), max(importance_score), min(seq), max(seq)
		FROM docs d GROUP BY turn_key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var key string
		var want turnRow
		if err := rows.Scan(&key, &want.Session, &want.Agent, &want.Tenant, &want.N, &want.First, &want.Last,
			&want.Failed, &want.MaxImp, &want.FirstSeq, &want.LastSeq); err != nil {
			t.Fatal(err)
		}
		if got := readTurn(t, db, key); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("turn %s\n got %v\nwant %v", key, got, want)
		}
		n++
	}
	var stored int
	if err := db.SQL().QueryRow("SELECT count(*) FROM turns").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if n != 40 || stored != n {
		t.Fatalf("%d turns recomputed, %d stored", n, stored)
	}
	var tags, docs int
	if err := db.SQL().QueryRow("SELECT count(*) FROM doc_tags").Scan(&tags); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL().QueryRow("SELECT count(*) FROM docs").Scan(&docs); err != nil {
		t.Fatal(err)
	}
	if docs != 400 || tags != 2*docs { // testDoc has two tags
		t.Fatalf("%d docs, %d tag rows", docs, tags)
	}
}

// TestEmbeddingApart: since schema version 4 a non-empty embedding is
// stored beside the document JSON (where it is null), since version 8 as
// float32s only (embedding64 is NULL), and documents come back with their
// embedding at float32 precision, those written by version 3 (embedding
// in the JSON) included, after Open upgraded the file.
func TestEmbeddingApart(t *testing.T) {
	db, path := openTest(t)
	now := "2026-05-08T22:31:25.000Z"
	old := testDoc("old")
	old.Embedding = []float64{0.1, 1.0 / 3, -2.5e-30, 7}
	// A version-3 index: no embedding64 column, the vector in the JSON.
	if _, err := db.w.Exec("ALTER TABLE docs DROP COLUMN embedding64"); err != nil {
		t.Fatal(err)
	}
	args, err := rowArgs(old, now)
	if err != nil {
		t.Fatal(err)
	}
	c := *old
	c.IngestedAt = now
	full, _ := marshalString(&c)
	args[len(args)-2], args = full, args[:len(args)-1]
	cols := insertColumns[:len(insertColumns)-1]
	q := "INSERT INTO docs(" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	if _, err := db.w.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec("PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fresh, empty := testDoc("new"), testDoc("empty")
	fresh.Embedding = make([]float64, 1536)
	for i := range fresh.Embedding {
		fresh.Embedding[i] = math.Sin(float64(i)) / 3
	}
	empty.Embedding = []float64{}
	mustWrite(t, db, fresh, empty)
	for _, want := range []*model.IndexDoc{old, fresh, empty} {
		got, err := db.Get(context.Background(), want.EventID)
		if err != nil {
			t.Fatal(err)
		}
		got.IngestedAt, want.IngestedAt = "", ""
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Errorf("%s:\n got %s\nwant %s", want.EventID, g, w)
		}
	}
	var docJSON string
	var n int
	var e64 sql.NullInt64
	if err := db.SQL().QueryRow("SELECT doc, length(embedding), length(embedding64) FROM docs WHERE event_id = 'new'").Scan(&docJSON, &n, &e64); err != nil {
		t.Fatal(err)
	}
	if docJSON != "" || n != 4*1536 || e64.Valid {
		t.Fatalf("stored: %d bytes of embedding, embedding64 %v, doc %.200s (want it in its columns, float32s only)", n, e64, docJSON)
	}
	var emb sql.NullInt64
	if err := db.SQL().QueryRow("SELECT doc, length(embedding64) FROM docs WHERE event_id = 'empty'").Scan(&docJSON, &emb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(docJSON, `"embedding":[]`) || emb.Valid {
		t.Fatalf("stored: embedding64 %v, doc %.200s (want an empty embedding in the JSON)", emb, docJSON)
	}
}

// holdWriteLock takes the index's write lock from another connection, as
// another process would, until the returned function is called.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin() // BEGIN IMMEDIATE: the write lock, at once
	if err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback(); other.Close() }
}

// A write lock held by another process is transient: the pipeline retries
// it like an unreachable server, and an open waiting on it is retried too.
func TestBusyIsTransient(t *testing.T) {
	_, path := openTest(t)
	db, err := Open(path, Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	release := holdWriteLock(t, path)
	defer release()
	res := db.Write(context.Background(), []*model.IndexDoc{testDoc("busy-1")})
	_, openErr := Open(path, Options{BusyTimeout: 50 * time.Millisecond})
	for what, err := range map[string]error{"write": res[0].Err, "open": openErr} {
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			t.Errorf("%s: want SQLITE_BUSY with the lock held, got %v", what, err)
		} else if !ingest.IsTransient(err) {
			t.Errorf("%s: busy is not transient: %v", what, err)
		}
	}
}

// TestRetiredIndexDropped: an index made when the schema had
// docs_importance loses it when a writer opens it, keeps its documents,
// and a new index never has it.
func TestRetiredIndexDropped(t *testing.T) {
	db, path := openTest(t)
	mustWrite(t, db, testDoc("retired-1"), testDoc("retired-2"))
	if _, err := db.w.Exec(`CREATE INDEX docs_importance ON docs(importance_score)`); err != nil {
		t.Fatal(err)
	}
	hasIndex := func(db *DB) bool {
		var n int
		if err := db.SQL().QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'docs_importance'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if !hasIndex(db) {
		t.Fatal("the old index was not made")
	}
	db.Close()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if hasIndex(db) {
		t.Error("docs_importance is still there after a writer opened the index")
	}
	if n, err := db.Count(context.Background()); err != nil || n != 2 {
		t.Errorf("%d documents (%v), want 2", n, err)
	}
	fresh, _ := openTest(t)
	if hasIndex(fresh) {
		t.Error("a new index has docs_importance")
	}
}
