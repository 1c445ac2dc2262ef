// Package query is engram's read path: recent documents, tails, turns and
// their causal chains, search, similarity and the drill-down to the archived
// event. One Reader contract is implemented over the embedded SQLite index
// and over OpenSearch, so the UI and the CLI never know which they talk to.
package query
