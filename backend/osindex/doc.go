// Package osindex is engram's OpenSearch index: the associative layer
// (docs/data-contract.md, The index document; index "experience_events")
// kept in an OpenSearch cluster through opensearch-go v4. [Index] creates
// the index when it is missing and writes with the _bulk API; [Reader]
// answers query.Reader over the same client. How the index is created,
// written, ordered, tailed and paged is in docs/opensearch.md.
package osindex
