// Package ui is engram's terminal inspector: a Bubble Tea program over the
// query and ingest packages. All I/O happens inside tea.Cmd functions that
// return typed messages; Update and View only move state and draw it.
// The root routes messages and owns the frame; each view is a package of
// its own, registered in views.go (docs/architecture.md).
package ui
