package sqliteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// ingestedAtLayout is the format of ingested_at: RFC 3339, UTC, milliseconds.
const ingestedAtLayout = "2006-01-02T15:04:05.000Z"

// Options tune Open and OpenReadOnly; the zero value is good.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by
	// another connection or process (default 5s).
	BusyTimeout time.Duration
	// ReadConns caps the read pool (default 4).
	ReadConns int
	// CacheKiB is the page cache of the writer connection (default 16384,
	// i.e. 16 MiB); read connections keep SQLite's default.
	CacheKiB int
	// DeferSync leaves making commits durable to Sync (see there), for a
	// writer that calls Sync before it reports what it wrote. Without it
	// every commit is durable when Write returns.
	DeferSync bool
}

func (o Options) withDefaults() Options {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = 4
	}
	if o.CacheKiB <= 0 {
		o.CacheKiB = 16384
	}
	return o
}

// DB is the SQLite index. It implements ingest.Index. Its methods are safe
// for concurrent use.
type DB struct {
	path string
	w    *sql.DB     // single writer connection; nil when read-only
	ins  *sql.Stmt   // the insert, prepared on w
	bat  []*sql.Stmt // batchSQL, prepared on w once rather than parsed per batch
	r    *sql.DB     // read pool

	// insMany is insertManySQL(insertRows); turnsMany and turnsOne are
	// turnUpsertSQL of turnUpsertRows and of one tuple; all prepared on w.
	insMany, turnsMany, turnsOne *sql.Stmt

	mu     sync.Mutex // serialises writes and Close
	closed bool

	abs       string     // path, absolute: Sync opens abs + "-wal"
	deferSync bool       // Options.DeferSync
	syncMu    sync.Mutex // serialises Sync
	walIno    uint64     // the WAL inode whose directory entry Sync has synced

	legacy atomic.Bool // read-only on schema version <= 8: see DocColumns

	embedder string       // SetEmbedder's name; guarded by mu
	recorded map[int]bool // dimensions whose embedder meta holds; guarded by mu
}

// SetEmbedder names the embedder of the vectors this DB writes from now
// on ("stub", "hashed", "http MODEL"): the first batch with vectors of a
// dimension records it in meta ("embedder DIM"), in its transaction, so
// that readers can tell what a similarity score means (see
// Reader.Embedder).
func (db *DB) SetEmbedder(name string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if name != db.embedder {
		db.embedder, db.recorded = name, nil
	}
}

var (
	_ ingest.Index   = (*DB)(nil)
	_ ingest.Encoder = (*DB)(nil)
)

// Open opens the index at path for reading and writing, creating the file,
// its directory and the schema when missing.
func Open(path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("sqliteindex: %w", err)
	}
	w, err := sql.Open("sqlite", dsn(abs, "rwc", opts,
		fmt.Sprintf("cache_size(-%d)", opts.CacheKiB),
		"foreign_keys(0)",
		"journal_mode(WAL)",
		synchronous(opts),
		"temp_store(MEMORY)",
		// A checkpoint copies every page the WAL holds into the database
		// and fsyncs it; at SQLite's default of 1000 pages it ran every
		// few batches and rewrote the same index pages each time. 16000
		// pages (64 MiB of WAL at most before a checkpoint) copies each
		// about once per 40 batches instead (a batch over many days
		// dirties a thousand pages; 8000 spent more time in checkpoints).
		"wal_autocheckpoint(16000)",
	))
	if err != nil {
		return nil, fmt.Errorf("sqliteindex: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, w: w, abs: abs, deferSync: opts.DeferSync}
	if err := db.setUp(); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqliteindex: open %s: %w", path, markBusy(err))
	}
	if db.r, err = openReader(abs, opts); err != nil {
		_ = db.closeStmts()
		_ = w.Close()
		return nil, fmt.Errorf("sqliteindex: open %s: %w", path, err)
	}
	return db, nil
}

// synchronous is the writer's pragma: NORMAL when Sync makes commits
// durable, else FULL.
func synchronous(opts Options) string {
	if opts.DeferSync {
		return "synchronous(NORMAL)"
	}
	return "synchronous(FULL)"
}

// OpenReadOnly opens an existing index for reading only (Write reports
// backend.ErrReadOnly). It does not create the file or the schema, and fails when
// the file holds no engram schema or a newer one.
func OpenReadOnly(path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("sqliteindex: %w", err)
	}
	r, v, err := openReadOnly(abs, opts)
	if err != nil {
		return nil, fmt.Errorf("sqliteindex: open %s: %w", path, err)
	}
	if err := checkVersion(v); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("sqliteindex: open %s: %w", path, err)
	}
	if v == 0 {
		_ = r.Close()
		return nil, fmt.Errorf("sqliteindex: open %s: no index schema yet (open it for writing first)", path)
	}
	db := &DB{path: path, r: r}
	db.legacy.Store(v < 9)
	return db, nil
}

func checkVersion(v int) error {
	if v > schemaVersion {
		return fmt.Errorf("index schema version %d is newer than this engram supports (%d)", v, schemaVersion)
	}
	return nil
}

// openReader opens the read pool: query_only connections that never create
// the file (mode=rw lets them create the WAL index files if needed).
func openReader(abs string, opts Options) (*sql.DB, error) {
	r, err := sql.Open("sqlite", dsn(abs, "rw", opts, "query_only(1)", "temp_store(MEMORY)"))
	if err != nil {
		return nil, err
	}
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	if err := r.Ping(); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// openReadOnly opens abs for reading only (mode=ro) and reads its schema
// version. Where the -shm file a WAL database needs can be neither found
// nor created (read-only media), no writer can exist either, and the file
// is opened immutable instead, unless its -wal holds writes not yet
// checkpointed, which immutable would silently leave out.
func openReadOnly(abs string, opts Options) (*sql.DB, int, error) {
	r, v, err := probeReader(abs, opts, false)
	if err == nil || !cannotOpen(err) {
		return r, v, err
	}
	if st, serr := os.Stat(abs + "-wal"); serr == nil && st.Size() > 0 {
		return nil, 0, fmt.Errorf("%w: the directory is not writable and %s-wal holds writes not yet checkpointed, "+
			"which cannot be read there; copy the data directory to writable storage", err, filepath.Base(abs))
	}
	return probeReader(abs, opts, true)
}

// probeReader opens a read-only pool on abs and reads the schema version,
// which is when SQLite first touches the file.
func probeReader(abs string, opts Options, immutable bool) (*sql.DB, int, error) {
	uri := dsn(abs, "ro", opts, "query_only(1)", "temp_store(MEMORY)")
	if immutable {
		uri += "&immutable=1"
	}
	r, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, 0, err
	}
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	var v int
	if err := r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		_ = r.Close()
		return nil, 0, err
	}
	return r, v, nil
}

// cannotOpen reports SQLITE_CANTOPEN and SQLITE_READONLY: what a WAL
// database on read-only media answers a reader that is not immutable.
func cannotOpen(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_CANTOPEN || c == sqlite3.SQLITE_READONLY
}

// dsn builds a file: URI for modernc.org/sqlite. mode is SQLite's URI mode
// (rwc creates, rw does not); transactions begin IMMEDIATE so a writer waits
// for the lock (busy_timeout) at BEGIN instead of failing on upgrade.
func dsn(abs, mode string, opts Options, pragmas ...string) string {
	q := url.Values{}
	q.Set("mode", mode)
	q.Set("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(abs))
	if !strings.HasPrefix(esc, "/") {
		esc = "/" + esc // Windows drive letters
	}
	return "file:" + esc + "?" + q.Encode()
}

// setUp checks WAL, creates or checks the schema and prepares the insert.
func (db *DB) setUp() error {
	ctx := context.Background()
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, not wal (is the file system local?)", mode)
	}
	tx, err := db.w.BeginTx(ctx, nil) // IMMEDIATE: one process creates the schema
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	if v < schemaVersion {
		for from := v; from > 0 && from < schemaVersion; from++ {
			if err := upgrade(ctx, tx, from); err != nil {
				return fmt.Errorf("upgrade schema from version %d: %w", from, err)
			}
		}
		for _, s := range schema {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		if err := ensureTally(ctx, tx); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		if v > 0 && v < vecsVersion {
			if err := appendVectors(ctx, tx, 0); err != nil {
				return fmt.Errorf("upgrade schema: build vec_blocks: %w", err)
			}
		}
		if v > 0 && v < 8 {
			// The dimensions whose sign-bit files the open builds below.
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value)
  SELECT 'vec dim ' || embedding_dim, '' FROM docs WHERE embedding_dim >= ? GROUP BY embedding_dim`, bitsMinDim); err != nil {
				return fmt.Errorf("upgrade schema: list the vector dimensions: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
			return err
		}
	}
	if err := ensureVecID(ctx, tx); err != nil {
		return err
	}
	for _, s := range retired {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("drop what the schema no longer has: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := db.syncAllBits(ctx); err != nil {
		return fmt.Errorf("sign-bit files: %w", err)
	}
	if db.ins, err = db.w.PrepareContext(ctx, insertSQL); err != nil {
		return err
	}
	if db.insMany, err = db.w.PrepareContext(ctx, insertManySQL(insertRows)); err != nil {
		return err
	}
	for _, q := range batchSQL {
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		db.bat = append(db.bat, st)
	}
	if db.turnsMany, err = db.w.PrepareContext(ctx, turnUpsertSQL(turnUpsertRows)); err != nil {
		return err
	}
	db.turnsOne, err = db.w.PrepareContext(ctx, turnUpsertSQL(1))
	return err
}

// closeStmts closes the prepared statements.
func (db *DB) closeStmts() error {
	var errs []error
	for _, st := range append([]*sql.Stmt{db.ins, db.insMany, db.turnsMany, db.turnsOne}, db.bat...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

var insertColumns = []string{
	"event_id", "timestamp", "ts_unix_ms", "ingested_at", "event_type", "phase",
	"session_id", "user_id", "agent_id", "tenant_id", "trace_id", "turn_id", "turn_key",
	"tool", "source", "success", "latency_ms", "importance_score", "reward_score", "confidence",
	"retrieval_count", "decay_factor", "object_storage_key", "key_odd", "summary", "structured",
	"embedding", "embedding_dim", "tags", "doc", "embedding64",
}

var insertSQL = "INSERT INTO docs(" + strings.Join(insertColumns, ", ") + ") VALUES (" +
	strings.TrimSuffix(strings.Repeat("?, ", len(insertColumns)), ", ") +
	") ON CONFLICT(event_id) DO NOTHING"

// upgrade runs the statements of upgrades[from]; a column they add that is
// already there (an upgrade interrupted before user_version was set cannot
// happen in one transaction, but a hand-made table can) is left alone.
func upgrade(ctx context.Context, tx *sql.Tx, from int) error {
	for _, s := range upgrades[from] {
		if def, ok := strings.CutPrefix(s, "ALTER TABLE docs ADD COLUMN "); ok {
			var n int
			err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('docs') WHERE name = ?",
				strings.Fields(def)[0]).Scan(&n)
			if err != nil {
				return err
			}
			if n > 0 {
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// SQL is the read pool (query_only connections) for the query side.
func (db *DB) SQL() *sql.DB { return db.r }

// Path is the database file as given to Open.
func (db *DB) Path() string { return db.path }

// Name is the index name of memory.indexed notifications.
func (db *DB) Name() string { return model.IndexName }

// Describe names the index for people.
func (db *DB) Describe() string { return "sqlite " + db.path }

// Close closes both pools. The writer runs PRAGMA optimize first.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	var errs []error
	if db.w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		// Best effort: keeps the planner's statistics fresh (bounded work).
		if _, err := db.w.ExecContext(ctx, "PRAGMA analysis_limit = 400"); err == nil {
			_, _ = db.w.ExecContext(ctx, "PRAGMA optimize")
		}
		cancel()
		errs = append(errs, db.closeStmts(), db.w.Close())
	}
	errs = append(errs, db.r.Close())
	return errors.Join(errs...)
}

// Write stores docs in one transaction and returns one result per document,
// in order. An event id already stored (or earlier in the batch) is left as
// it was (Created=false) and a bad document fails alone; an error of the
// transaction fails every document not already failed, and nothing is
// stored. IngestedAt, set on the caller's documents too, is taken once per
// batch, so only seq is the exact ingestion order.
func (db *DB) Write(ctx context.Context, docs []*model.IndexDoc) []ingest.IndexResult {
	return db.WriteEncoded(ctx, db.Encode(docs))
}

// encoded is a batch as Encode checked and encoded it.
type encoded struct {
	docs []*model.IndexDoc
	now  string     // ingested_at of the documents created
	args [][]any    // the insert's, nil for a document refused
	vecs [][]byte   // each document's vector for vec_blocks (quantize), or nil
	bits [][]uint64 // each document's sign-bit record (bitsRecord, seq 0), or nil
	// bitRows: the sign-bit records of the documents created, seq set, by
	// dimension, once the batch is committed.
	bitRows map[int][][]uint64
	res     []ingest.IndexResult // the refused documents' errors
}

func (e *encoded) Docs() []*model.IndexDoc { return e.docs }

// Encode checks and encodes docs for WriteEncoded (see Write), without the
// write lock: the row arguments, the document JSON and the quantized
// vectors are made here, not in the writer's turn.
func (db *DB) Encode(docs []*model.IndexDoc) ingest.Encoded {
	e := &encoded{docs: docs, now: time.Now().UTC().Format(ingestedAtLayout), res: make([]ingest.IndexResult, len(docs))}
	e.args, e.vecs, e.bits = prepare(docs, e.now, e.res)
	return e
}

// WriteEncoded is Write of the documents of enc, which Encode made (once).
func (db *DB) WriteEncoded(ctx context.Context, enc ingest.Encoded) []ingest.IndexResult {
	e, ok := enc.(*encoded)
	if !ok {
		return db.Write(ctx, enc.Docs())
	}
	docs, now, res := e.docs, e.now, e.res
	if len(docs) == 0 {
		return res
	}
	if db.w == nil {
		failAll(res, fmt.Errorf("sqlite index: %w", backend.ErrReadOnly))
		return res
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		failAll(res, fmt.Errorf("sqlite index: %w", backend.ErrClosed))
		return res
	}
	if err := db.writeTx(ctx, e); err != nil {
		for i := range res {
			res[i].Created = false
		}
		failAll(res, fmt.Errorf("sqliteindex: batch not stored: %w", markBusy(err)))
		return res
	}
	// The sign-bit files follow the commit; one left behind (an error
	// here) is caught up by the next write or open, and readers rank what
	// it lacks exactly meanwhile.
	for dim, recs := range e.bitRows {
		_ = appendBits(ctx, db.w, db.abs, dim, recs)
	}
	for i, d := range docs {
		if res[i].Created {
			d.IngestedAt = now
		}
	}
	return res
}

// prepare validates and encodes docs (outside the write lock), leaving nil
// arguments and an error for each bad document, and makes the compact
// copies of their vectors: below bitsMinDim dimensions quantized for
// vec_blocks, from bitsMinDim on the sign-bit record (see vecbits.go). A
// big batch is encoded in two halves side by side.
func prepare(docs []*model.IndexDoc, now string, res []ingest.IndexResult) (args [][]any, vecs [][]byte, bits [][]uint64) {
	args, vecs, bits = make([][]any, len(docs)), make([][]byte, len(docs)), make([][]uint64, len(docs))
	encode := func(lo, hi int) {
		var scratch []float32
		for i := lo; i < hi; i++ {
			a, err := rowArgs(docs[i], now)
			if err != nil {
				res[i].Err = docError(docs[i], err)
				continue
			}
			args[i] = a
			if emb, ok := a[argEmbedding].([]byte); ok {
				if dim := len(docs[i].Embedding); dim >= bitsMinDim {
					bits[i] = bitsRecord(emb, a)
				} else {
					vecs[i], scratch = quantize(emb, dim, scratch)
				}
			}
		}
	}
	if len(docs) < 64 {
		encode(0, len(docs))
		return args, vecs, bits
	}
	half := len(docs) / 2
	done := make(chan struct{})
	go func() { defer close(done); encode(half, len(docs)) }()
	encode(0, half)
	<-done
	return args, vecs, bits
}

// writeTx runs the batch; a non-nil error means nothing was committed.
func (db *DB) writeTx(ctx context.Context, e *encoded) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	b := batchInsert{tx: tx, one: tx.StmtContext(ctx, db.ins), many: tx.StmtContext(ctx, db.insMany),
		docs: e.docs, args: e.args, vecs: e.vecs, bits: e.bits, res: e.res}
	if err := b.run(ctx); err != nil {
		return err
	}
	firstSeq, turns := b.firstSeq, &b.turns
	if firstSeq >= 0 {
		// The write lock is ours: every row from firstSeq on is this batch's.
		for _, st := range db.bat {
			if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, firstSeq); err != nil {
				return err
			}
		}
		many, one := tx.StmtContext(ctx, db.turnsMany), tx.StmtContext(ctx, db.turnsOne)
		if err := turns.upsert(ctx, many, turnUpsertRows, one); err != nil {
			return err
		}
		if err := appendRows(ctx, tx, b.vecRows); err != nil {
			return err
		}
		dims := slices.Sorted(maps.Keys(b.bitRows))
		for _, r := range b.vecRows {
			if !slices.Contains(dims, r.key.dim) {
				dims = append(dims, r.key.dim)
			}
		}
		fresh, err := db.recordDims(ctx, tx, dims)
		if err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		for _, d := range fresh {
			db.recorded[d] = true
		}
		e.bitRows = b.bitRows
		return nil
	}
	return tx.Commit()
}

// recordDims writes into meta, for each dimension of dims this DB has not
// recorded yet, the embedder's name ("embedder DIM") and, from bitsMinDim
// on, that a sign-bit file belongs to it ("vec dim DIM", which a writer's
// open catches up); in tx. The dimensions count as recorded once it
// commits (a write after a failed one records them again).
func (db *DB) recordDims(ctx context.Context, tx *sql.Tx, dims []int) (fresh []int, err error) {
	if db.recorded == nil {
		db.recorded = map[int]bool{}
	}
	for _, dim := range dims {
		if db.recorded[dim] {
			continue
		}
		fresh = append(fresh, dim)
		if db.embedder != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?)
  ON CONFLICT(key) DO UPDATE SET value = excluded.value`, fmt.Sprintf("embedder %d", dim), db.embedder); err != nil {
				return nil, err
			}
		}
		if dim >= bitsMinDim {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES (?, '')`,
				fmt.Sprintf("vec dim %d", dim)); err != nil {
				return nil, err
			}
		}
	}
	return fresh, nil
}

// statementOnly reports whether err undid only the failing statement, so the
// transaction can go on. SQLite may roll the whole transaction back on
// SQLITE_FULL, IOERR, BUSY or NOMEM; those and anything unknown (a cancelled
// context, a closed transaction) fail the batch.
func statementOnly(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG,
		sqlite3.SQLITE_RANGE, sqlite3.SQLITE_ERROR:
		return true
	}
	return false
}

// busyError is a lock another connection or process held for longer than
// the busy timeout. It goes away when that writer finishes: transient, so
// the pipeline retries it with its backoff and shows it as an outage.
type busyError struct{ error }

func (busyError) Transient() bool { return true }
func (e busyError) Unwrap() error { return e.error }

// markBusy marks SQLITE_BUSY and SQLITE_LOCKED errors as transient.
func markBusy(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return busyError{err}
		}
	}
	return err
}

func failAll(res []ingest.IndexResult, err error) {
	for i := range res {
		if res[i].Err == nil {
			res[i].Err = err
		}
	}
}

func docError(d *model.IndexDoc, err error) error {
	if d == nil || d.EventID == "" {
		return fmt.Errorf("sqliteindex: %w", err)
	}
	return fmt.Errorf("sqliteindex: document %s: %w", model.Quote(d.EventID), err)
}

// Get returns the stored document of eventID, or backend.ErrNotFound.
func (db *DB) Get(ctx context.Context, eventID string) (*model.IndexDoc, error) {
	var row docRow
	err := db.r.QueryRowContext(ctx, "SELECT "+db.DocColumns(ctx)+" FROM docs d WHERE event_id = ?", eventID).Scan(row.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite index: document %s: %w", model.Quote(eventID), backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqliteindex: get %s: %w", model.Quote(eventID), err)
	}
	d, err := row.document()
	if err != nil {
		return nil, fmt.Errorf("sqliteindex: get %s: stored document: %w", model.Quote(eventID), err)
	}
	return d, nil
}

// Count is the number of documents.
func (db *DB) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM docs").Scan(&n); err != nil {
		return 0, fmt.Errorf("sqliteindex: count: %w", err)
	}
	return n, nil
}
