// Package uikit is what the inspector's root and its views share: the
// services (Deps, Options), styles, keys, the text helpers every view draws
// with, and the messages that cross between views and the root. It imports
// no view, so every view and the root can import it.
package uikit

import (
	"context"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
)

// Common is what every view shares: styles, keys, services and the few
// facts more than one view shows. It is built once by New and handed to
// each view's constructor.
type Common struct {
	Styles *Styles
	Keys   *KeyMap
	Deps   Deps
	Opts   Options

	// Ctx ends when the program does; every command runs under it.
	Ctx context.Context
	// Spin is the one spinner; the root ticks it while anything is loading.
	Spin spinner.Model
	// Missing: events whose archived object is known to be missing (the
	// detail finds out, the stream marks their rows).
	Missing map[string]bool
	// Manual (tests only): timers never fire and the pipeline listener is
	// not started; the test sends the ticks and drains the events itself.
	Manual bool
}

// After is a timer: msg once d has passed.
func (c *Common) After(d time.Duration, msg tea.Msg) tea.Cmd {
	if c.Manual {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}

// CanWrite reports whether recording and every other write are available.
func (c *Common) CanWrite() bool { return !c.Opts.ReadOnly && c.Deps.Recorder != nil }
