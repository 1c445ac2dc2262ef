// Package expr is the filter language of engram's read path
// (docs/query-language.md), parsed once into a small AST that each backend
// (SQLite, OpenSearch) translates. Parse is pure: relative times stay
// durations, resolved against each query's "now" (Time.Resolve).
package expr
