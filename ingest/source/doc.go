// Package source reads experience events from an input stream for the
// pipeline: JSON Lines, a JSON array, or objects compact or pretty-printed,
// the format decided per value rather than per file. Every value becomes an
// ingest.Item named by its file and first line; what cannot be read (a cut
// line, an unclosed array, a line over MaxLineBytes) is an item carrying its
// error, and the values after it are still read.
package source
