package ui

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

	// ctx ends when the program does; every command runs under it.
	ctx context.Context
	// spin is the one spinner; it ticks while anything is loading.
	spin spinner.Model
	// missing: events whose archived object is known to be missing.
	missing map[string]bool
	// manual (tests only): timers never fire and the pipeline listener is
	// not started; the test sends the ticks and drains the events itself.
	manual bool
}

// after is a timer: msg once d has passed.
func (c *Common) after(d time.Duration, msg tea.Msg) tea.Cmd {
	if c.manual {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}

// canWrite: recording and every other write are available.
func (c *Common) canWrite() bool { return !c.Opts.ReadOnly && c.Deps.Recorder != nil }
