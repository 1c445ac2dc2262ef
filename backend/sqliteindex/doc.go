// Package sqliteindex is engram's embedded default index: the associative
// layer (docs/data-contract.md, The index document) kept in one SQLite file,
// usually <data>/index.db, through the pure-Go driver modernc.org/sqlite.
//
// The database runs in WAL mode, so any number of processes may read while
// one writes. A [DB] opened with [Open] has one writer connection and a
// separate pool of query-only read connections ([DB.SQL]); [OpenReadOnly]
// opens only the read pool. The tables and indexes are defined in
// schema.go, and how they are written and kept durable is in
// docs/storage.md.
package sqliteindex
