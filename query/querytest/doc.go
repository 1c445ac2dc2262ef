// Package querytest is the contract test suite of query.Reader: one Run that
// every backend (the embedded SQLite index, OpenSearch) must pass, checking
// each call against a brute-force computation over generated data. The
// contract is in docs/architecture.md (The Reader contract).
package querytest
