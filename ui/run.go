package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"engram/ingest/inprocess"
	"engram/ui/uikit"
)

// Run shows the inspector on the terminal until the user quits or ctx ends.
func Run(ctx context.Context, deps uikit.Deps, opts uikit.Options) error {
	m := New(deps, opts)
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	if opts.In != nil {
		popts = append(popts, tea.WithInput(opts.In))
	}
	if opts.Out != nil {
		popts = append(popts, tea.WithOutput(opts.Out))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	m.cancel()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // interrupted: not a failure of the inspector
	}
	return err
}

// PipelineRecorder records through an ingest pipeline built from Config,
// one per call, so that each run reports to its own observer.
type PipelineRecorder = inprocess.Pipeline
