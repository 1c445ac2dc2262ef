package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
)

// Where an event compared was read from.
const (
	SourceArchive = "archive"
	sourceIndex   = "index"
)

// Event is one side of a comparison: an event as read.
type Event struct {
	ID string
	// Source is SourceArchive (the truth layer), or sourceIndex when the
	// archive object could not be read; Note then says why and what the
	// index document lacks.
	Source string
	Note   string
	Doc    *model.IndexDoc
	// Body is the JSON compared: the archived event, or the index
	// document put in the event's shape (indexAsEvent).
	Body []byte
}

// Documents is what Fetch needs of an index.
type Documents interface {
	Document(ctx context.Context, eventID string) (*model.IndexDoc, error)
}

// NotFoundError is an event id the index does not hold.
type NotFoundError struct {
	ID, Where string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no event %s in %s", model.Quote(e.ID), e.Where)
}

func (e *NotFoundError) Unwrap() error { return backend.ErrNotFound }

// Fetch reads event id: its index document, then its archived event. When
// the archive object is missing, is not the event, or cannot be read, the
// index document stands in for it and Note says so. where names the index
// in a not-found error.
func Fetch(ctx context.Context, r Documents, ar ingest.ArchiveReader, id, where string) (*Event, error) {
	doc, err := r.Document(ctx, id)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, &NotFoundError{id, where}
	}
	if err != nil {
		return nil, err
	}
	return FromDoc(ctx, ar, doc), nil
}

// FromDoc is Fetch for a document already read.
func FromDoc(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc) *Event {
	ev := &Event{ID: doc.EventID, Doc: doc}
	var a *query.Archived
	err := errors.New("no archive to read")
	if ar != nil {
		a, err = query.FetchArchive(ctx, ar, doc, 0)
	}
	if err == nil && a.Truncated {
		err = errors.New("the archive object was cut short")
	}
	if err == nil {
		ev.Source, ev.Body = SourceArchive, a.Body
		return ev
	}
	reason := err.Error()
	var d *query.LayersDisagreeError
	if errors.As(err, &d) {
		reason = d.Reason
	}
	ev.Source, ev.Body = sourceIndex, indexAsEvent(doc)
	ev.Note = reason + "; compared from the index document, which holds no reasoning, output or parameters, " +
		"input.text only as its summary, and reward and confidence as 0.5 when the event gave none"
	return ev
}

// indexAsEvent puts an index document in the archived event's shape
// (camelCase paths), so that it lines up with an archived event.
func indexAsEvent(d *model.IndexDoc) []byte {
	type ctxt struct {
		SessionID string `json:"sessionId"`
		UserID    string `json:"userId,omitempty"`
		AgentID   string `json:"agentId,omitempty"`
		TurnID    string `json:"turnId,omitempty"`
		TraceID   string `json:"traceId,omitempty"`
		TenantID  string `json:"tenantId,omitempty"`
	}
	type input struct {
		Text       string          `json:"text"`
		Embedding  []float64       `json:"embedding,omitempty"`
		Structured json.RawMessage `json:"structured,omitempty"`
	}
	type action struct {
		Tool string `json:"tool"`
	}
	type result struct {
		Success   *bool  `json:"success,omitempty"`
		LatencyMs *int64 `json:"latencyMs,omitempty"`
	}
	v := struct {
		EventID          string         `json:"eventId"`
		Timestamp        string         `json:"timestamp"`
		Type             string         `json:"type"`
		Context          ctxt           `json:"context"`
		Input            input          `json:"input"`
		InternalState    map[string]any `json:"internalState"`
		Action           *action        `json:"action,omitempty"`
		Result           *result        `json:"result,omitempty"`
		Evaluation       map[string]any `json:"evaluation"`
		ImportanceScore  float64        `json:"importanceScore"`
		Tags             []string       `json:"tags"`
		ObjectStorageKey string         `json:"objectStorageKey,omitempty"`
	}{
		EventID: d.EventID, Timestamp: d.Timestamp, Type: d.EventType,
		Context:         ctxt{d.SessionID, d.UserID, d.AgentID, d.TurnID, d.TraceID, d.TenantID},
		Input:           input{d.Summary, d.Embedding, d.Structured},
		InternalState:   map[string]any{"confidence": d.Confidence},
		Evaluation:      map[string]any{"rewardScore": d.RewardScore},
		ImportanceScore: d.ImportanceScore, Tags: d.Tags, ObjectStorageKey: d.ObjectStorageKey,
	}
	if d.Tool != "" {
		v.Action = &action{d.Tool}
	}
	if d.Success != nil || d.LatencyMs != nil {
		v.Result = &result{d.Success, d.LatencyMs}
	}
	if string(v.Input.Structured) == "{}" || string(v.Input.Structured) == "null" {
		v.Input.Structured = nil
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	b, _ := json.Marshal(v)
	return b
}

// Side is what a comparison says of one of its events.
type Side struct {
	ID     string `json:"event_id"`
	Type   string `json:"type,omitempty"`
	Time   string `json:"timestamp,omitempty"`
	Source string `json:"source"`
	Key    string `json:"object_storage_key,omitempty"`
	Note   string `json:"note,omitempty"`
}

func sideOf(e *Event) Side {
	s := Side{ID: e.ID, Source: e.Source, Note: e.Note}
	if e.Doc != nil {
		s.Type, s.Time, s.Key = e.Doc.EventType, e.Doc.Timestamp, e.Doc.ObjectStorageKey
	}
	return s
}

// EventDiff is two events compared (docs/compare.md).
type EventDiff struct {
	Left     Side    `json:"left"`
	Right    Side    `json:"right"`
	Counts   Counts  `json:"counts"`
	Measures []Delta `json:"measures"`
	Fields   []Field `json:"fields"`
}

// Events compares two events read by Fetch.
func Events(l, r *Event) *EventDiff {
	fields, c := diffFields(l.Body, r.Body)
	return &EventDiff{Left: sideOf(l), Right: sideOf(r), Counts: c, Measures: measuresOf(fields), Fields: fields}
}
