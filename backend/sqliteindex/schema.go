package sqliteindex

import "fmt"

// schemaVersion is the schema this package creates, kept in PRAGMA
// user_version; what each version changed is in docs/storage.md (Schema
// versions).
const schemaVersion = 10

// upgrades turn an index of the version given into the one before
// schemaVersion's statements run (they are idempotent and create what is
// missing).
var upgrades = map[int][]string{
	1: {`DROP TRIGGER IF EXISTS docs_ai`},
	2: {`DROP TRIGGER IF EXISTS docs_ai`},
	3: {`ALTER TABLE docs ADD COLUMN embedding64 BLOB`},
	// 4: vec_blocks is created by schema and filled by setUp (appendVectors).
	// 5: nothing to change; rows stored before keep their JSON.
	// 6: rows stored before have no key_odd (NULL): docs_key_odd holds them
	// all, as docs_key did.
	6: {`ALTER TABLE docs ADD COLUMN key_odd INTEGER`, `DROP INDEX IF EXISTS docs_key`},
	// 7: the float64 copies go (the float32 embedding column holds every
	// one). docs_au would redo each row's full-text, tags and turn for an
	// update of a column none of them read: it is dropped for the update
	// and created again by schema.
	// docs_vec_au is made again to watch the type and the time too (the
	// sign-bit files' filters).
	7: {`DROP TRIGGER IF EXISTS docs_au`, `DROP TRIGGER IF EXISTS docs_vec_au`,
		`UPDATE docs SET embedding64 = NULL WHERE embedding64 IS NOT NULL`},
	8: sourceUpgrade,
}

// sourceUpgrade adds docs.source to an index of version 8. Documents
// stored before know no context.source, except one kept as JSON by an
// engram that wrote source there; a system: session is the system's own.
// docs_au, which would redo each row's full-text, tags and turn for a
// column none of them reads, is dropped for the update and created again
// by schema.
var sourceUpgrade = []string{
	`ALTER TABLE docs ADD COLUMN source TEXT`,
	`DROP TRIGGER IF EXISTS docs_au`,
	`UPDATE docs SET source = CASE
     WHEN doc != '' AND json_valid(doc) AND json_extract(doc, '$.source') != '' THEN json_extract(doc, '$.source')
     WHEN substr(session_id, 1, 7) = 'system:' THEN 'system' END
   WHERE source IS NULL AND (substr(session_id, 1, 7) = 'system:' OR (doc != '' AND instr(doc, '"source"') > 0))`,
}

// batchSQL derives, in one statement each, what a batch of new documents
// (every docs row from seq ?1 on: the writer holds the write lock) adds to
// docs_fts and doc_tags; done per row by a trigger, that was most of a
// write's cost. The turns are summed up in Go instead (turnBatch,
// turnUpsertSQL), a fraction of what a window-function SELECT cost.
var batchSQL = []string{
	`INSERT INTO docs_fts(rowid, summary) SELECT seq, summary FROM docs WHERE seq >= ?1`,
	`INSERT OR IGNORE INTO doc_tags(tag, seq)
  SELECT j.value, d.seq FROM docs d, json_each(d.tags) j WHERE d.seq >= ?1 AND j.type = 'text'`,
}

// turnRecompute rebuilds the turns row of one turn key (bound as ?1 or used
// with OLD/NEW in triggers, hence the %s).
const turnRecompute = `
  DELETE FROM turns WHERE turn_key = %[1]s;
  INSERT INTO turns(turn_key, session_id, agent_id, tenant_id, n_events,
                    first_ts_ms, last_ts_ms, any_failed, max_importance, first_seq, last_seq)
  SELECT turn_key,
         (SELECT session_id FROM docs WHERE turn_key = %[1]s AND session_id IS NOT NULL ORDER BY seq LIMIT 1),
         (SELECT agent_id   FROM docs WHERE turn_key = %[1]s AND agent_id   IS NOT NULL ORDER BY seq LIMIT 1),
         (SELECT tenant_id  FROM docs WHERE turn_key = %[1]s AND tenant_id  IS NOT NULL ORDER BY seq LIMIT 1),
         count(*), min(ts_unix_ms), max(ts_unix_ms), max(success IS 0), max(importance_score), min(seq), max(seq)
  FROM docs WHERE turn_key = %[1]s GROUP BY turn_key;`

// metaSQL: facts about the index as a whole, one row each. "embedder
// DIM" names the embedder that last wrote vectors of DIM components
// (stub, hashed, http MODEL; see DB.SetEmbedder), so that a reader can
// say what a similarity score means.
const metaSQL = `CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
)`

// retired drops what earlier versions of this schema created and this one
// does not; a writer runs it at every open, whatever the version, since an
// index without these is also an index of the version it says. Dropping
// them changes nothing older engrams read or write.
var retired = []string{
	// No query used it: importance is a condition on rows found by other
	// means. Its keys come in random order, so an insert dirtied a page of
	// it per document: 4% of an ingest's WAL frames.
	`DROP INDEX IF EXISTS docs_importance`,
}

// schema creates schema version schemaVersion; every statement is idempotent.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS docs (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id           TEXT    NOT NULL UNIQUE,
  timestamp          TEXT    NOT NULL,
  ts_unix_ms         INTEGER NOT NULL,
  ingested_at        TEXT    NOT NULL,
  event_type         TEXT    NOT NULL,
  phase              INTEGER NOT NULL,
  session_id         TEXT    NOT NULL,
  user_id            TEXT,
  agent_id           TEXT,
  tenant_id          TEXT,
  trace_id           TEXT,
  turn_id            TEXT,
  turn_key           TEXT    NOT NULL,
  tool               TEXT,
  success            INTEGER,
  latency_ms         INTEGER,
  importance_score   REAL    NOT NULL,
  reward_score       REAL    NOT NULL,
  confidence         REAL    NOT NULL,
  retrieval_count    INTEGER NOT NULL,
  decay_factor       REAL    NOT NULL,
  object_storage_key TEXT    NOT NULL,
  summary            TEXT    NOT NULL,
  structured         TEXT    NOT NULL,
  embedding          BLOB,
  embedding_dim      INTEGER NOT NULL,
  tags               TEXT    NOT NULL,
  doc                TEXT    NOT NULL,
  embedding64        BLOB,
  key_odd            INTEGER,
  source             TEXT
)`,
	`CREATE INDEX IF NOT EXISTS docs_turn       ON docs(turn_key, phase, ts_unix_ms, event_id)`,
	`CREATE INDEX IF NOT EXISTS docs_session    ON docs(session_id, seq)`,
	`CREATE INDEX IF NOT EXISTS docs_ts         ON docs(ts_unix_ms)`,
	`CREATE INDEX IF NOT EXISTS docs_type       ON docs(event_type, seq)`,
	`CREATE INDEX IF NOT EXISTS docs_tenant     ON docs(tenant_id, seq)`,
	`CREATE INDEX IF NOT EXISTS docs_trace      ON docs(trace_id)`,
	`CREATE INDEX IF NOT EXISTS docs_agent      ON docs(agent_id, seq)`,
	// verify walks the index in archive-key order: a day's documents by
	// docs_ts, sorted; those whose key is elsewhere (key_odd 1, or NULL:
	// stored before version 7) by this index, merged in (see ScanByKey).
	// The pipeline's documents are never odd, so it stays empty for them.
	`CREATE INDEX IF NOT EXISTS docs_key_odd    ON docs(object_storage_key, event_id) WHERE key_odd IS NOT 0`,

	`CREATE TABLE IF NOT EXISTS doc_tags (
  tag TEXT    NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (tag, seq)
) WITHOUT ROWID`,

	`CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
  summary, content='docs', content_rowid='seq', tokenize='porter unicode61')`,

	`CREATE TABLE IF NOT EXISTS turns (
  turn_key       TEXT PRIMARY KEY,
  session_id     TEXT,
  agent_id       TEXT,
  tenant_id      TEXT,
  n_events       INTEGER NOT NULL,
  first_ts_ms    INTEGER,
  last_ts_ms     INTEGER,
  any_failed     INTEGER NOT NULL,
  max_importance REAL,
  first_seq      INTEGER NOT NULL,
  last_seq       INTEGER NOT NULL
)`,
	`CREATE INDEX IF NOT EXISTS turns_last_seq ON turns(last_seq)`,
	`CREATE INDEX IF NOT EXISTS turns_last_ts  ON turns(last_ts_ms)`,

	// Delete and update are not used by the writer; they keep maintenance
	// done with plain SQL consistent.
	`CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, summary) VALUES ('delete', old.seq, old.summary);
  DELETE FROM doc_tags WHERE seq = old.seq AND tag IN (SELECT value FROM json_each(old.tags) WHERE type = 'text');` +
		fmt.Sprintf(turnRecompute, "old.turn_key") + `
END`,
	`CREATE TRIGGER IF NOT EXISTS docs_au AFTER UPDATE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, summary) VALUES ('delete', old.seq, old.summary);
  INSERT INTO docs_fts(rowid, summary) VALUES (new.seq, new.summary);
  DELETE FROM doc_tags WHERE seq = old.seq AND tag IN (SELECT value FROM json_each(old.tags) WHERE type = 'text');
  INSERT OR IGNORE INTO doc_tags(tag, seq)
    SELECT value, new.seq FROM json_each(new.tags) WHERE type = 'text';` +
		fmt.Sprintf(turnRecompute, "old.turn_key") +
		fmt.Sprintf(turnRecompute, "new.turn_key") + `
END`,
	// A row whose key, id or time plain SQL changes may no longer have the
	// key the archive would give it: it counts as odd from then on, so
	// that ScanByKey still finds it.
	`CREATE TRIGGER IF NOT EXISTS docs_au_key AFTER UPDATE OF object_storage_key, event_id, timestamp, ts_unix_ms ON docs
  WHEN new.key_odd IS 0 BEGIN
  UPDATE docs SET key_odd = NULL WHERE seq = new.seq;
END`,
	metaSQL,
	vecBlocksSQL,
	vecDirtySQL[0],
	vecDirtySQL[1],
}
