// Package backend holds what every external system engram speaks to shares:
// the errors its stores return. Each system has one package of its own below
// it, holding both its write side (what ingest declares) and its read side
// (what query declares), and its schema:
//
//	backend/dirarchive   the archive as a directory tree (embedded default)
//	backend/s3archive    the archive in an S3-compatible bucket
//	backend/sqliteindex  the index in an embedded SQLite file (WAL, FTS5)
//	backend/osindex      the index in OpenSearch
//	backend/telemetry    the pipeline's traces as OpenTelemetry spans (OTLP)
//
// The commands (package cli) are the one place that chooses and opens them
// from configuration.
package backend
