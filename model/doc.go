// Package model is engram's domain: the experience event, its validation,
// the keys and scores the pipeline derives from it, and the documents built
// from it. It does no I/O.
package model
