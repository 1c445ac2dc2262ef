package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"engram/ingest"
	"engram/model"
)

// Topics publishes the two notifications as JSON lines appended to
// <dir>/experience.enriched.jsonl and <dir>/memory.indexed.jsonl, the
// embedded stand-in for the source system's Kafka topics.
type Topics struct {
	mu                sync.Mutex
	dir               string
	enriched, indexed *os.File
}

// Dir is the directory of the topic files.
func (t *Topics) Dir() string { return t.dir }

// OpenTopics opens (creating) the two topic files under dir.
func OpenTopics(dir string) (*Topics, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	// A crash may have cut a batch's write short: the cut line goes (its
	// notifications are still held in an outbox and announced again), so
	// the next append starts a line of its own.
	open := func(name string) (*os.File, error) {
		f, err := os.OpenFile(TopicPath(dir, name), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
		if err == nil {
			if _, err = ingest.CutTornLine(f); err != nil {
				_ = f.Close()
			}
		}
		return f, err
	}
	e, err := open(model.TopicEnriched)
	if err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	i, err := open(model.TopicIndexed)
	if err != nil {
		_ = e.Close()
		return nil, fmt.Errorf("topics: %w", err)
	}
	return &Topics{dir: dir, enriched: e, indexed: i}, nil
}

// Publish appends one line per payload and fsyncs: each file gets one write
// per batch, so concurrent readers never see half a line, and a write cut
// short (a full disk) is taken back, so the file never holds one. A retry
// after an error may announce the enriched notifications twice, as
// at-least-once allows.
func (t *Topics) Publish(_ context.Context, as []ingest.Announcement) error {
	eb, err := jsonLines(as, ingest.Announcement.EnrichedJSON)
	if err != nil {
		return err
	}
	ib, err := jsonLines(as, ingest.Announcement.IndexedJSON)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// The two files' fsyncs wait for the disk side by side. One append
	// failing leaves the batch unannounced as a whole: the next run
	// announces it again on both topics (at-least-once).
	indexed := make(chan error, 1)
	go func() { indexed <- ingest.AppendLines(t.indexed, ib, true) }()
	err = ingest.AppendLines(t.enriched, eb, true)
	ierr := <-indexed
	if err != nil {
		return fmt.Errorf("topic %s: %w", model.TopicEnriched, err)
	}
	if ierr != nil {
		return fmt.Errorf("topic %s: %w", model.TopicIndexed, ierr)
	}
	return nil
}

// jsonLines is one line per announcement: its payload as json.Marshal
// encodes it (what a json.Encoder writes, without its newline).
// The payloads are gathered first so that the lines are copied once, into
// a buffer of their size (growing one was a tenth of an ingest's garbage).
func jsonLines(as []ingest.Announcement, payload func(ingest.Announcement) ([]byte, error)) ([]byte, error) {
	vs := make([][]byte, len(as))
	n := 0
	for i, a := range as {
		v, err := payload(a)
		if err != nil {
			return nil, err
		}
		vs[i], n = v, n+len(v)+1
	}
	b := make([]byte, 0, n)
	for _, v := range vs {
		b = append(append(b, v...), '\n')
	}
	return b, nil
}

// Close closes both files.
func (t *Topics) Close() error {
	err := t.enriched.Close()
	if e := t.indexed.Close(); err == nil {
		err = e
	}
	return err
}

// Rejects writes rejected inputs, verbatim with their reasons, as JSON lines
// to one file created on the first reject.
type Rejects struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// NewRejects prepares a rejects file at path (not created until needed).
func NewRejects(path string) *Rejects { return &Rejects{path: path} }

// Path is where the rejects go.
func (r *Rejects) Path() string { return r.path }

// Written says whether anything was rejected.
func (r *Rejects) Written() bool { return r.f != nil }

type rejectLine struct {
	Source   string         `json:"source"`
	Problems model.Problems `json:"problems"`
	Input    string         `json:"input"`
}

// Add records one rejected trace.
func (r *Rejects) Add(t *ingest.Trace) error {
	line, err := json.Marshal(rejectLine{t.Src.String(), t.Problems, string(t.Input)})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
			return err
		}
		if r.f, err = os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
	}
	_, err = r.f.Write(append(line, '\n'))
	return err
}

// Close closes the file if one was written.
func (r *Rejects) Close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}
