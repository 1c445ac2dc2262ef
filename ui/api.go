package ui

import "engram/ui/uikit"

// The services and options of the inspector, as cmd_ui.go builds them.
type (
	Deps     = uikit.Deps
	Options  = uikit.Options
	Reader   = uikit.Reader
	Recorder = uikit.Recorder
)
