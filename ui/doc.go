// Package ui is engram's terminal inspector: a Bubble Tea program over the
// query and ingest packages. All I/O happens inside tea.Cmd functions that
// return typed messages; Update and View only move state and draw it.
//
// This package is the root: it routes messages (global keys, then the
// open overlay, then the focused view), owns the frame (header, status
// line, footer of keys), the filter bar and the followed files, and hands
// the answers of commands to the views. The views are packages of their
// own (stream, turns, detail, record, pipeline, similar, topics); what they share with the
// root is in uikit, and the widgets they draw with are under widget.
package ui
