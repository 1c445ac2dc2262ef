// Package compare puts two experiences side by side: two events field by
// field, two turns step by step, and one session's turns on a time axis. It
// computes; the commands and the inspector fetch and draw (docs/compare.md).
package compare
