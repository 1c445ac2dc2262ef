package ui

import "engram/ui/uikit"

// The services and options of the inspector, as cli/ui.go builds them.
type (
	Deps     = uikit.Deps
	Options  = uikit.Options
	Reader   = uikit.Reader
	Recorder = uikit.Recorder
)
