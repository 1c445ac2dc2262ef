package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"engram/ingest"
	"engram/model"
)

// Run shows the inspector on the terminal until the user quits or ctx ends.
func Run(ctx context.Context, deps Deps, opts Options) error {
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
type PipelineRecorder struct {
	Config ingest.Config
}

// Record ingests one event built in code.
func (r PipelineRecorder) Record(ctx context.Context, ev *model.Event, obs ingest.Observer) (*ingest.Trace, error) {
	cfg := r.Config
	// One event: no batch to wait for at the index.
	cfg.Observer, cfg.Workers, cfg.BatchSize = obs, 1, 1
	p, err := ingest.New(cfg)
	if err != nil {
		return nil, err
	}
	items := make(chan ingest.Item, 1)
	items <- ingest.Item{Src: ingest.Source{File: "record form"}, Event: ev}
	close(items)
	var t *ingest.Trace
	p.Run(ctx, items, func(tr *ingest.Trace) { t = tr })
	if t == nil {
		return nil, errors.New("the pipeline finished without a trace")
	}
	return t, nil
}

// Ingest runs the lines of a followed file.
func (r PipelineRecorder) Ingest(ctx context.Context, items <-chan ingest.Item, obs ingest.Observer) ingest.Summary {
	cfg := r.Config
	cfg.Observer = obs
	p, err := ingest.New(cfg)
	if err != nil {
		n := 0
		for range items {
			n++
		}
		return ingest.Summary{Failed: n}
	}
	return p.Run(ctx, items, nil)
}
