// Package follow ingests what JSON-lines files grow by, like tail -f: each
// round reads the complete lines appended since the last one and runs them
// through a pipeline.
package follow
