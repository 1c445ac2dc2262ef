package ui

import "engram/ui/uikit"

// The services and options of the inspector, as cli/ui.go builds them.
type (
	// Deps is uikit.Deps.
	Deps = uikit.Deps
	// Options is uikit.Options.
	Options = uikit.Options
	// Reader is uikit.Reader.
	Reader = uikit.Reader
	// Recorder is uikit.Recorder.
	Recorder = uikit.Recorder
)
