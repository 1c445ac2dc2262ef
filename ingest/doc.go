// Package ingest is engram's write path: the pipeline that takes raw
// experience events through validation, embedding, scoring, the write-once
// archive, the index and the notification topics, reporting each stage to
// observers as it runs.
package ingest
