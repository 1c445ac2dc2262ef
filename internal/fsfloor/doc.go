// Package fsfloor measures the floor the durable ingest benchmarks are
// compared with: files created, written, fsynced and closed with no pipeline
// around them, on the same machine in the same run. Only benchmarks use it.
package fsfloor
