// Package cli holds engram's commands: one file per command, the settings
// table and its resolution (settings.go, flags.go), the one place that opens
// backends from configuration (backends.go) and the ingest reporter.
package cli
