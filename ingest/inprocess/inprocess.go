package inprocess

import (
	"context"
	"errors"

	"engram/ingest"
	"engram/model"
)

// Pipeline builds a pipeline from Config for every call.
type Pipeline struct {
	Config ingest.Config
}

// Record ingests one event built in code.
func (p Pipeline) Record(ctx context.Context, ev *model.Event, obs ingest.Observer) (*ingest.Trace, error) {
	cfg := p.Config
	// One event: no batch to wait for at the index.
	cfg.Observer, cfg.Workers, cfg.BatchSize = obs, 1, 1
	pl, err := ingest.New(cfg)
	if err != nil {
		return nil, err
	}
	items := make(chan ingest.Item, 1)
	items <- ingest.Item{Src: ingest.Source{File: "record form"}, Event: ev}
	close(items)
	var t *ingest.Trace
	pl.Run(ctx, items, func(tr *ingest.Trace) { t = tr })
	if t == nil {
		return nil, errors.New("the pipeline finished without a trace")
	}
	return t, nil
}

// Ingest runs items (the lines of a followed file) until items is closed.
// When no pipeline can be built, every item counts as failed.
func (p Pipeline) Ingest(ctx context.Context, items <-chan ingest.Item, obs ingest.Observer) ingest.Summary {
	cfg := p.Config
	cfg.Observer = obs
	pl, err := ingest.New(cfg)
	if err != nil {
		n := 0
		for range items {
			n++
		}
		return ingest.Summary{Failed: n}
	}
	return pl.Run(ctx, items, nil)
}
