// Package embed holds the embedders the pipeline can use: the source
// system's deterministic stub and an OpenAI-compatible HTTP endpoint.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"engram/model"
)

// Stub is the source system's offline, deterministic embedder.
type Stub struct{ Dim int }

// Embed returns model.StubEmbedding of each text.
func (s Stub) Embed(_ context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = model.StubEmbedding(t, s.Dimension())
	}
	return out, nil
}

// Dimension is the vector length (model.StubDimension by default).
func (s Stub) Dimension() int {
	if s.Dim <= 0 {
		return model.StubDimension
	}
	return s.Dim
}

// Describe names the embedder.
func (s Stub) Describe() string { return fmt.Sprintf("stub (dimension %d)", s.Dimension()) }

// HTTPConfig configures an OpenAI-compatible embeddings endpoint.
type HTTPConfig struct {
	Endpoint  string // e.g. https://api.openai.com/v1/embeddings
	Model     string
	APIKey    string
	Dimension int
	Timeout   time.Duration // per request (default 30s)
	MaxBatch  int           // texts per request (default 64)
	Linger    time.Duration // how long a text waits for others to share its request (default 2ms)
	Client    *http.Client
}

// HTTP embeds through an OpenAI-compatible endpoint. Concurrent Embed calls
// are gathered into batched requests, so many pipeline workers embedding
// one text each cost far fewer round trips.
type HTTP struct {
	cfg  HTTPConfig
	reqs chan embedReq
	once sync.Once
}

type embedReq struct {
	ctx   context.Context
	text  string
	reply chan embedReply
}

type embedReply struct {
	vec []float64
	err error
}

// NewHTTP checks cfg and returns the embedder.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	switch {
	case cfg.Endpoint == "":
		return nil, fmt.Errorf("embedder http: no endpoint (embedder.endpoint, --embedder-endpoint)")
	case cfg.Model == "":
		return nil, fmt.Errorf("embedder http: no model (embedder.model, --embedder-model)")
	case cfg.Dimension <= 0:
		return nil, fmt.Errorf("embedder http: dimension %d: want 1 or more (embedder.dimension, --embed-dim)", cfg.Dimension)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 64
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 2 * time.Millisecond
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &HTTP{cfg: cfg, reqs: make(chan embedReq)}, nil
}

// Dimension is the configured vector length.
func (h *HTTP) Dimension() int { return h.cfg.Dimension }

// Describe names the embedder (never its key).
func (h *HTTP) Describe() string {
	return fmt.Sprintf("http %s model %s (dimension %d)", h.cfg.Endpoint, h.cfg.Model, h.cfg.Dimension)
}

// Embed returns one vector per text.
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	h.once.Do(func() { go h.batcher() })
	replies := make([]chan embedReply, len(texts))
	for i, t := range texts {
		replies[i] = make(chan embedReply, 1)
		select {
		case h.reqs <- embedReq{ctx, t, replies[i]}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([][]float64, len(texts))
	for i, r := range replies {
		rep := <-r
		if rep.err != nil {
			return nil, rep.err
		}
		out[i] = rep.vec
	}
	return out, nil
}

func (h *HTTP) batcher() {
	for first := range h.reqs {
		batch := []embedReq{first}
		timer := time.NewTimer(h.cfg.Linger)
	gather:
		for len(batch) < h.cfg.MaxBatch {
			select {
			case r := <-h.reqs:
				batch = append(batch, r)
			case <-timer.C:
				break gather
			}
		}
		timer.Stop()
		go h.send(batch)
	}
}

func (h *HTTP) send(batch []embedReq) {
	texts := make([]string, len(batch))
	for i, r := range batch {
		texts[i] = r.text
	}
	vecs, err := h.call(batch[0].ctx, texts)
	for i, r := range batch {
		if err != nil {
			r.reply <- embedReply{err: err}
		} else {
			r.reply <- embedReply{vec: vecs[i]}
		}
	}
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (h *HTTP) call(ctx context.Context, texts []string) ([][]float64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.Timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"model": h.cfg.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedder %s: %w", h.cfg.Endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embedder %s: %w", h.cfg.Endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("embedder %s: reading answer: %w", h.cfg.Endpoint, err)
	}
	var er embedResponse
	jerr := json.Unmarshal(raw, &er)
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		if jerr == nil && er.Error != nil {
			msg += ": " + model.Quote(er.Error.Message)
		}
		return nil, fmt.Errorf("embedder %s answered %s", h.cfg.Endpoint, msg)
	}
	if jerr != nil {
		return nil, fmt.Errorf("embedder %s: answer is not the OpenAI embeddings shape: %w", h.cfg.Endpoint, jerr)
	}
	return h.vectors(&er, len(texts))
}

func (h *HTTP) vectors(er *embedResponse, n int) ([][]float64, error) {
	if len(er.Data) != n {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", h.cfg.Endpoint, len(er.Data), n)
	}
	out := make([][]float64, n)
	for i, d := range er.Data {
		idx := d.Index
		if idx < 0 || idx >= n || out[idx] != nil {
			idx = i // endpoints that omit index answer in order
		}
		if len(d.Embedding) != h.cfg.Dimension {
			return nil, fmt.Errorf("embedder %s returned dimension %d, configured %d (set the embedder dimension to match the model)",
				h.cfg.Endpoint, len(d.Embedding), h.cfg.Dimension)
		}
		out[idx] = d.Embedding
	}
	return out, nil
}
