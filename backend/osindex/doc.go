// Package osindex is engram's index in OpenSearch (index "experience_events",
// through opensearch-go): Index creates and writes it, Reader answers
// query.Reader. How it is created, written, ordered, tailed and paged is in
// docs/opensearch.md.
package osindex
