// Package worker is engram's ingestion worker: it consumes the raw topic in
// the deployment's consumer group and runs every message through the
// pipeline, at least once; the write-once archive makes a replayed message
// a duplicate, never a second document.
package worker
