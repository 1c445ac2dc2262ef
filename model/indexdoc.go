package model

import (
	"encoding/json"
	"math"
)

// IndexName is the source system's index.
const IndexName = "experience_events"

// IndexDoc is the compact document of the associative layer
// (docs/data-contract.md, The index document). Fields after Tags are engram's extensions; documents written by
// the source system lack them, so readers must treat them as optional.
type IndexDoc struct {
	EventID          string          `json:"event_id"`
	Timestamp        string          `json:"timestamp"`
	EventType        string          `json:"event_type"`
	SessionID        string          `json:"session_id"`
	UserID           string          `json:"user_id,omitempty"`
	AgentID          string          `json:"agent_id,omitempty"`
	Summary          string          `json:"summary"`
	Embedding        []float64       `json:"embedding"`
	Structured       json.RawMessage `json:"structured"`
	ImportanceScore  float64         `json:"importance_score"`
	RewardScore      float64         `json:"reward_score"`
	Confidence       float64         `json:"confidence"`
	RetrievalCount   int             `json:"retrieval_count"`
	DecayFactor      float64         `json:"decay_factor"`
	ObjectStorageKey string          `json:"object_storage_key"`
	Tags             []string        `json:"tags"`

	TurnID     string `json:"turn_id,omitempty"`
	TenantID   string `json:"tenant_id,omitempty"`
	TraceID    string `json:"trace_id,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Success    *bool  `json:"success,omitempty"`
	LatencyMs  *int64 `json:"latency_ms,omitempty"`
	IngestedAt string `json:"ingested_at,omitempty"`
	// Source is model.SourceOf the event: context.source, else system
	// for a system: session, else omitted.
	Source string `json:"source,omitempty"`
}

// TurnKey is the turn this document belongs to, with the fallbacks that
// documents of the source system need.
func (d *IndexDoc) TurnKey() string { return TurnKey(d.TurnID, d.TraceID, d.EventID) }

// Phase is the document's place in its turn's causal chain.
func (d *IndexDoc) Phase() Phase { return PhaseOf(d.EventType) }

// NewIndexDoc builds the index document of an enriched event. summaryLen
// is the cut of input.text (DefaultSummaryLen when <= 0).
func NewIndexDoc(e *Event, summaryLen int) *IndexDoc {
	if summaryLen <= 0 {
		summaryLen = DefaultSummaryLen
	}
	d := &IndexDoc{
		EventID:          e.EventID,
		Timestamp:        e.Timestamp,
		EventType:        e.Type,
		SessionID:        e.Context.SessionID,
		UserID:           e.Context.UserID,
		AgentID:          e.Context.AgentID,
		Summary:          Summary(e.Input.Text, summaryLen),
		Embedding:        nonNil(e.Input.Embedding),
		Structured:       e.Input.Structured,
		ImportanceScore:  e.ImportanceScore,
		RewardScore:      0.5,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: e.ObjectStorageKey,
		Tags:             e.Tags,
		TurnID:           e.Context.TurnID,
		TenantID:         e.Context.TenantID,
		TraceID:          e.Context.TraceID,
		Source:           SourceOf(e.Context.Source, e.Context.SessionID),
	}
	if len(d.Structured) == 0 || string(d.Structured) == "null" {
		d.Structured = json.RawMessage("{}")
	}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	if e.Evaluation != nil {
		d.RewardScore = e.Evaluation.RewardScore
	}
	if e.InternalState != nil {
		d.Confidence = e.InternalState.Confidence
	}
	if e.Action != nil {
		d.Tool = e.Action.Tool
	}
	if r := e.Result; r != nil {
		d.Success = r.Succeeded()
		if r.LatencyMs != nil {
			d.LatencyMs = ptr(latencyMillis(*r.LatencyMs))
		}
	}
	return d
}

// Enriched is the experience.enriched notification.
type Enriched struct {
	EventID            string   `json:"eventId"`
	Timestamp          string   `json:"timestamp"`
	ImportanceScore    float64  `json:"importanceScore"`
	EmbeddingDimension int      `json:"embeddingDimension"`
	ObjectStorageKey   string   `json:"objectStorageKey"`
	Tags               []string `json:"tags"`
}

// Indexed is the memory.indexed notification.
type Indexed struct {
	EventID          string `json:"eventId"`
	Timestamp        string `json:"timestamp"`
	Index            string `json:"index"`
	ObjectStorageKey string `json:"objectStorageKey"`
}

// Topic names of the two notifications.
const (
	TopicEnriched = "experience.enriched"
	TopicIndexed  = "memory.indexed"
)

// NewEnriched builds the experience.enriched payload of an enriched event.
func NewEnriched(e *Event) Enriched {
	tags := e.Tags
	if tags == nil {
		tags = []string{}
	}
	return Enriched{e.EventID, e.Timestamp, e.ImportanceScore, len(e.Input.Embedding), e.ObjectStorageKey, tags}
}

// Notifications are the payloads of the document's event, as NewEnriched
// and NewIndexed make them from the event itself (for a rebuild that has
// only the document).
func (d *IndexDoc) Notifications(index string) (Enriched, Indexed) {
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	return Enriched{d.EventID, d.Timestamp, d.ImportanceScore, len(d.Embedding), d.ObjectStorageKey, tags},
		Indexed{d.EventID, d.Timestamp, index, d.ObjectStorageKey}
}

// NewIndexed builds the memory.indexed payload; index is the index written.
func NewIndexed(e *Event, index string) Indexed {
	return Indexed{e.EventID, e.Timestamp, index, e.ObjectStorageKey}
}

// latencyMillis is latencyMs as the index's long field holds it: truncated,
// as OpenSearch coerces a fraction, and held at the largest long rather
// than converted past it (a float64 beyond int64 converts to an arbitrary,
// on amd64 negative, value).
func latencyMillis(v float64) int64 {
	if v >= math.MaxInt64 { // float64(MaxInt64) is 2^63, one past the largest long
		return math.MaxInt64
	}
	return int64(v)
}
