package ui

import (
	"context"
	"errors"
	"io/fs"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/ingest/follow"
	"engram/ui/uikit"
)

// follower is one followed file and whether a round on it is running.
type follower struct {
	follow.File
	busy    bool
	failing string // the status its last round failed with
}

// followError names the file once: a path error's own text repeats it.
func followError(name string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		err = pe.Err
	}
	return "following " + uikit.Clean(name) + ": " + uikit.ErrorText(err)
}

// followRound reads the new complete lines of f and runs them through the
// pipeline, reporting stages to ch.
func followRound(ctx context.Context, rec uikit.Recorder, f follow.File, ch chan<- tea.Msg, run uint64) tea.Cmd {
	return func() tea.Msg {
		next, sum, err := f.Next(ctx, func(ctx context.Context, items <-chan ingest.Item) ingest.Summary {
			return rec.Ingest(ctx, items, uikit.Observer{Ctx: ctx, Ch: ch, Run: run})
		})
		return followedMsg{file: f.Name, at: next, sum: sum, err: err}
	}
}
