// Package backend holds the errors every store returns. Each external system
// has one package below it holding its write side (what ingest declares),
// its read side (what query declares) and its schema; only package cli
// chooses and opens them (docs/architecture.md).
package backend
