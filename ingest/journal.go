package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"engram/model"
)

// Journal durably records events that were archived but could not be
// indexed, so that the next run indexes them: such an event is never
// forgotten, and since indexing creates (never overwrites) it never becomes
// two documents.
type Journal struct {
	mu   sync.Mutex
	path string
}

// PendingEvent is one journal line.
type PendingEvent struct {
	EventID string `json:"eventId"`
	Key     string `json:"objectStorageKey"`
	Reason  string `json:"reason"`
}

// OpenJournal uses the journal file at path (created when first needed).
func OpenJournal(path string) *Journal { return &Journal{path: path} }

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Add appends and fsyncs one record.
func (j *Journal) Add(p PendingEvent) error {
	line, err := json.Marshal(p)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := os.OpenFile(j.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pending journal: %w", err)
	}
	// A line a crash cut short would swallow this one: end it first (Load
	// skips it; its event is still archived, and verify or reindex see it).
	if end, _ := f.Seek(0, io.SeekEnd); end > 0 {
		last := make([]byte, 1)
		if _, rerr := f.ReadAt(last, end-1); rerr == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Load returns every pending record, de-duplicated by event id.
func (j *Journal) Load() ([]PendingEvent, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := os.ReadFile(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []PendingEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p PendingEvent
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.Key == "" || seen[p.EventID] {
			continue // a torn last line from a crash: its event is still archived
		}
		seen[p.EventID] = true
		out = append(out, p)
	}
	return out, nil
}

// Replace atomically rewrites the journal to hold exactly ps.
func (j *Journal) Replace(ps []PendingEvent) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(ps) == 0 {
		err := os.Remove(j.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var b bytes.Buffer
	for _, p := range ps {
		line, _ := json.Marshal(p)
		b.Write(append(line, '\n'))
	}
	tmp := j.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	if f, err := os.Open(tmp); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
	return os.Rename(tmp, j.path)
}

// Recover indexes the journal's events from their archived objects through
// the pipeline (the archive write comes back as a duplicate; the index
// creates the document if it is missing) and keeps in the journal only those
// that failed again.
func (p *Pipeline) Recover(ctx context.Context, j *Journal, ar ArchiveReader) (Summary, error) {
	pending, err := j.Load()
	if err != nil || len(pending) == 0 {
		return Summary{}, err
	}
	items := make(chan Item, len(pending))
	for _, pe := range pending {
		it := Item{Src: Source{File: j.path}}
		obj, err := ar.Get(ctx, pe.Key, 0)
		if err == nil {
			it.Event, err = model.Decode(obj.Body, p.cfg.Decode)
		}
		it.Err = err
		if it.Event != nil {
			it.Event.KeepEmbedding = true
		}
		items <- it
	}
	close(items)
	var again []PendingEvent
	var mu sync.Mutex
	sum := p.Run(ctx, items, func(t *Trace) {
		if t.Outcome == OutcomeFailed {
			mu.Lock()
			again = append(again, PendingEvent{t.EventID, t.Key, fmt.Sprint(t.Err)})
			mu.Unlock()
		}
	})
	return sum, j.Replace(again)
}
