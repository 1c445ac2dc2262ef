// Package sqlindex is engram's embedded default index: the associative layer
// (schema.md section 4, index "experience_events") kept in one SQLite file,
// usually <data>/index.db, through the pure-Go driver modernc.org/sqlite.
//
// # Concurrency
//
// The database runs in WAL mode with synchronous=FULL (a committed batch is
// durable), busy_timeout 5 s and foreign keys off. Any number of processes
// may read while one writes: a UI keeps working while `engram ingest` writes
// from another terminal. Inside a process, a *DB opened with [Open] has one
// writer connection (writes are serialised by a mutex, transactions start
// with BEGIN IMMEDIATE) and a separate pool of read connections, returned by
// [DB.SQL], that are query_only. [OpenReadOnly] opens only the read pool.
// Readers see each write batch atomically, once it is committed.
//
// # Schema (PRAGMA user_version = SchemaVersion = 7)
//
// docs: one row per index document, append-only for this package's writer.
//
//	seq                INTEGER PRIMARY KEY AUTOINCREMENT  ingestion order, never reused; what a tail follows
//	event_id           TEXT NOT NULL UNIQUE               the document id
//	timestamp          TEXT NOT NULL                      as in the document
//	ts_unix_ms         INTEGER NOT NULL                   timestamp parsed, ms since the epoch (UTC); for ranges and sorting
//	ingested_at        TEXT NOT NULL                      when this index stored it, RFC 3339 UTC with ms ("2026-05-08T22:31:25.123Z")
//	event_type         TEXT NOT NULL
//	phase              INTEGER NOT NULL                   model.PhaseOf(event_type): 0 observation, 1 action, 2 outcome
//	session_id         TEXT NOT NULL
//	user_id, agent_id, tenant_id, trace_id, turn_id, tool
//	                   TEXT NULL                          NULL when absent (empty in the document)
//	turn_key           TEXT NOT NULL                      model.TurnKey: turn_id, else trace_id, else event_id
//	success            INTEGER NULL                       1 true, 0 false, NULL unknown
//	latency_ms         INTEGER NULL
//	importance_score, reward_score, confidence, decay_factor
//	                   REAL NOT NULL
//	retrieval_count    INTEGER NOT NULL
//	object_storage_key TEXT NOT NULL                      "" when the document has none
//	summary            TEXT NOT NULL                      full-text indexed (docs_fts)
//	structured         TEXT NOT NULL                      compact JSON object ("{}" when absent)
//	embedding          BLOB NULL                          little-endian float32, embedding_dim*4 bytes; NULL when empty
//	embedding_dim      INTEGER NOT NULL                   0 when empty
//	tags               TEXT NOT NULL                      JSON array of strings ("[]" when none)
//	doc                TEXT NOT NULL                      empty when the columns hold the document exactly (since
//	                                                      version 6: every document model.NewIndexDoc makes);
//	                                                      else the whole model.IndexDoc as JSON, ingested_at
//	                                                      included, but a non-empty embedding is null here (since
//	                                                      version 4). Every row of version 5 and older has it.
//	embedding64        BLOB NULL                          that embedding, little-endian float64 (full precision);
//	                                                      NULL when empty or when the JSON holds it (version <= 3).
//	                                                      A docRow (the columns docColumns names) returns the
//	                                                      document exactly, from its JSON or from its columns
//	key_odd            INTEGER NULL                       0 when object_storage_key is model.ArchiveKey of the
//	                                                      document's event_id and timestamp, 1 otherwise; NULL
//	                                                      on rows stored before version 7
//
// Indexes on docs: UNIQUE(event_id); (turn_key, phase, ts_unix_ms, event_id),
// the causal order within a turn; (session_id, seq); (ts_unix_ms);
// (event_type, seq); (tenant_id, seq); (trace_id); (agent_id, seq);
// (object_storage_key, event_id) WHERE key_odd IS NOT 0, the documents whose
// key a walk by day would not find (ScanByKey; before version 7 every
// document was indexed by key). An index on importance_score, which no
// query used and which took its keys in random order (a page of it written
// per document), is dropped when a writer opens an index that has it.
//
// doc_tags(tag TEXT, seq INTEGER, PRIMARY KEY(tag, seq)) WITHOUT ROWID: one
// row per distinct tag of a document. Newest documents with a tag:
// `SELECT <docColumns> FROM doc_tags t JOIN docs d ON d.seq = t.seq WHERE t.tag = ?
// ORDER BY t.seq DESC LIMIT ?` (or `seq IN (SELECT seq FROM doc_tags WHERE
// tag = ?)` combined with other filters).
//
// docs_fts: FTS5 over docs.summary, external content (content='docs',
// content_rowid='seq'), tokenizer 'porter unicode61' (lower-casing, diacritics
// folded, English stemming: "indexed" matches "indexing"; unlike OpenSearch's
// english analyzer there are no stop words). Search with
//
//	SELECT <docColumns> FROM docs_fts JOIN docs d ON d.seq = docs_fts.rowid
//	WHERE docs_fts MATCH ? ORDER BY docs_fts.rank LIMIT ?
//
// turns: one row per turn key, maintained with every docs row.
//
//	turn_key        TEXT PRIMARY KEY
//	session_id, agent_id, tenant_id
//	                TEXT NULL   from the turn's first document that has one
//	n_events        INTEGER     documents in the turn
//	first_ts_ms     INTEGER     min(ts_unix_ms)
//	last_ts_ms      INTEGER     max(ts_unix_ms)
//	any_failed      INTEGER     1 when some document has success = 0
//	max_importance  REAL        max(importance_score)
//	first_seq       INTEGER     min(seq)
//	last_seq        INTEGER     max(seq): the turn's latest ingestion
//
// Indexes on turns: (last_seq), (last_ts_ms); "turns newest first, paged" is
// `SELECT ... FROM turns WHERE last_seq < ? ORDER BY last_seq DESC LIMIT ?`.
//
// vec_blocks(dim, tenant, block, seqs, vecs), PRIMARY KEY(dim, tenant,
// block): the non-zero embeddings again, compact, for Similar (see
// vectors.go): per dimension and tenant ("" for none), the documents
// whose seq >> blockShift(dim) is block (a span of 4096 seqs at 8
// dimensions, 32 at 1536), each as a uint16 seq offset, a float32 1/|q| and
// the int8 vector q. Written by Write in the documents' transaction (the
// last block of each dimension and tenant read, appended to and written
// back) and built from docs by the upgrade to version 5. Similar scans it,
// then reranks the best candidates exactly from docs.embedding.
// vec_dirty(seq INTEGER PRIMARY KEY): the documents whose embedding or
// tenant a plain-SQL update changed (trigger docs_vec_au), which Similar
// always reranks too.
//
// What a batch of new documents adds to docs_fts, doc_tags and turns is
// derived by Write with one statement each, after the batch's inserts and
// in the same transaction (a per-row trigger cost most of a write: a
// statement journal per insert, a full-text segment per row, a turns upsert
// per row). Delete and update triggers on docs keep the three consistent
// when maintenance is done with plain SQL; rows inserted with plain SQL get
// none of them. Versions 1 and 2 of the schema had an insert trigger; Open
// upgrades them.
//
// Readers should not keep a read transaction (an unclosed *sql.Rows) open
// for long: it holds back WAL checkpoints and the -wal file grows.
package sqliteindex
