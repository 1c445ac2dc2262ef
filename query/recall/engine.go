package recall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Embedder embeds the prompt (ingest.Embedder has this method).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
}

// Engine runs a recall: it embeds the prompt, asks the Searcher for the
// candidates and ranks them. Embedder may be nil (no similarity).
type Engine struct {
	Searcher Searcher
	Embedder Embedder
	Window   int // Request.Window; 0: DefaultWindow
	K        int // the top K shown, for Request.Nearest; 0: 10
	// Settings are the configured ones (recall.*): what a view starts
	// from; Run takes its own.
	Settings Settings
	Now      func() time.Time
}

// Run is the ranked candidates of text filtered by expr (every candidate,
// best first: the caller shows the top K), with the answer's note.
func (e *Engine) Run(ctx context.Context, text, expr string, ids []string, s Settings) ([]Candidate, []Result, string, error) {
	if e == nil || e.Searcher == nil {
		return nil, nil, "", errors.New("recall: no index to recall from")
	}
	req := Request{Text: text, Expr: expr, Window: e.Window, IDs: ids, Nearest: NearestFor(max(e.K, 10))}
	if req.Window <= 0 {
		req.Window = DefaultWindow
	}
	if e.Embedder != nil && strings.TrimSpace(text) != "" {
		vs, err := e.Embedder.Embed(ctx, []string{text})
		if err != nil {
			return nil, nil, "", fmt.Errorf("recall: embedding the prompt: %w", err)
		}
		if len(vs) == 1 {
			req.Vector = vs[0]
		}
	}
	ans, err := e.Searcher.Recall(ctx, req)
	if err != nil {
		return nil, nil, "", err
	}
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	return ans.Candidates, Rank(ans.Candidates, s, now), ans.Note, nil
}
