// Package sqliteindex is engram's embedded index: one SQLite file (usually
// <data>/index.db, through the pure-Go modernc.org/sqlite) in WAL mode, so
// any number of processes read while one writes. The tables are defined in
// schema.go; how they are written and kept durable is in docs/storage.md.
package sqliteindex
