// Package verify walks the archive (the truth) and the index (a view derived
// from it) and reports where they disagree. Both are read in archive-key
// order and merged, so memory stays constant however many events there are.
package verify
