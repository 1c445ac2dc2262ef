// Package source reads experience events for the pipeline from JSON Lines, a
// JSON array or objects one after another, deciding the format per value.
// What cannot be read becomes an item carrying its error, and the values
// after it are still read.
package source
