// Package inprocess runs events through an ingest pipeline in this
// process, one pipeline per call, so that each call reports to its own
// observer (the inspector's record form and its followed files).
package inprocess
