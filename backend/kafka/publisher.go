package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"engram/ingest"
	"engram/model"
)

// Header names of the trace context (W3C Trace Context).
const (
	HeaderTraceparent = "traceparent"
	HeaderTracestate  = "tracestate"
)

// Trace is the trace context of one event.
type Trace struct {
	TraceID string // context.traceId of the event
	SpanID  string // context.spanId; empty: 16 zeros
	State   string // a tracestate to pass through, if any
}

// TraceOf is the trace context an event carries (its context.traceId and
// context.spanId); the zero Trace when it has no trace id.
func TraceOf(e *model.Event) Trace {
	return Trace{TraceID: e.Context.TraceID, SpanID: e.Context.SpanID}
}

// Traceparent is the header value the source system builds:
// 00-<traceId>-<spanId, else 16 zeros>-01; "" without a trace id.
func (t Trace) Traceparent() string {
	if t.TraceID == "" {
		return ""
	}
	span := t.SpanID
	if span == "" {
		span = strings.Repeat("0", 16)
	}
	return "00-" + t.TraceID + "-" + span + "-01"
}

func (t Trace) headers() []kgo.RecordHeader {
	tp := t.Traceparent()
	if tp == "" {
		return nil
	}
	hs := []kgo.RecordHeader{{Key: HeaderTraceparent, Value: []byte(tp)}}
	if t.State != "" {
		hs = append(hs, kgo.RecordHeader{Key: HeaderTracestate, Value: []byte(t.State)})
	}
	return hs
}

// Publisher delivers the downstream notifications (the ingest Publisher):
// each model.Enriched to the enriched topic and each model.Indexed to the
// indexed topic, keyed by eventId, value = its encoding/json encoding (what
// the topic files hold, without the newline), gzip, acks=all, idempotent;
// and a copy of each to the audit topic when one is configured.
type Publisher struct {
	c   *Client
	now func() time.Time
}

// NewPublisher connects a publisher (lazily: see Client.Check).
func NewPublisher(cfg Config) (*Publisher, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &Publisher{c: c, now: time.Now}, nil
}

// Client is the publisher's connection, for Check and the admin calls.
func (p *Publisher) Client() *Client { return p.c }

// Publish is the ingest Publisher: it produces the notifications of a batch
// with the trace context of each event, and returns once the broker has
// acknowledged all of them (and their audit copies), or with an error after
// at most the delivery timeout.
func (p *Publisher) Publish(ctx context.Context, as []ingest.Announcement) error {
	topics := p.c.cfg.Topics
	krs := make([]*kgo.Record, 2*len(as), 4*len(as))
	for i, a := range as {
		e, err := a.EnrichedJSON()
		if err != nil {
			return fmt.Errorf("kafka: encode %s payload of %s: %w", topics.Enriched, a.Enriched.EventID, err)
		}
		ix, err := a.IndexedJSON()
		if err != nil {
			return fmt.Errorf("kafka: encode %s payload of %s: %w", topics.Indexed, a.Indexed.EventID, err)
		}
		// All of the enriched notifications first, then the indexed, as
		// PublishTraced orders them.
		hs := Trace{TraceID: a.TraceID, SpanID: a.SpanID, State: a.TraceState}.headers()
		krs[i] = &kgo.Record{Topic: topics.Enriched, Key: []byte(a.Enriched.EventID), Value: e, Headers: hs}
		krs[len(as)+i] = &kgo.Record{Topic: topics.Indexed, Key: []byte(a.Indexed.EventID), Value: ix, Headers: hs}
	}
	krs, err := p.c.withAudit(krs, p.now(), true)
	if err != nil {
		return err
	}
	return p.c.produce(ctx, krs)
}

// PublishPayloads is Publish of bare payloads, without traceparent headers.
func (p *Publisher) PublishPayloads(ctx context.Context, enriched []model.Enriched, indexed []model.Indexed) error {
	return p.PublishTraced(ctx, enriched, indexed, nil)
}

// PublishTraced is Publish with the trace context of the events, by
// eventId (model.Enriched does not carry it: build the map with TraceOf
// from the events of the batch). An enriched notification whose event has
// a trace id gets the traceparent header (and tracestate when set), as the
// source system does; so does its indexed notification, which the source
// system sends without one: a consumer of memory.indexed can then carry on
// the ingestion's trace (headers it does not read change nothing for it).
func (p *Publisher) PublishTraced(ctx context.Context, enriched []model.Enriched, indexed []model.Indexed, traces map[string]Trace) error {
	topics := p.c.cfg.Topics
	krs := make([]*kgo.Record, 0, 2*(len(enriched)+len(indexed)))
	for _, e := range enriched {
		kr, err := record(topics.Enriched, e.EventID, e, traces[e.EventID].headers())
		if err != nil {
			return err
		}
		krs = append(krs, kr)
	}
	for _, ix := range indexed {
		kr, err := record(topics.Indexed, ix.EventID, ix, traces[ix.EventID].headers())
		if err != nil {
			return err
		}
		krs = append(krs, kr)
	}
	// The values are encoding/json's own output: compact, valid JSON.
	krs, err := p.c.withAudit(krs, p.now(), true)
	if err != nil {
		return err
	}
	return p.c.produce(ctx, krs)
}

// Close closes the connection.
func (p *Publisher) Close() error { return p.c.Close() }

// InFlight makes the Publisher an ingest.Pipeliner: the idempotent producer
// keeps up to five produce requests in flight to a broker, so several
// batches' notifications wait for their acknowledgements at once instead of
// one round trip after the other.
func (p *Publisher) InFlight() int { return 4 }

func record(topic, key string, v any, headers []kgo.RecordHeader) (*kgo.Record, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("kafka: encode %s payload of %s: %w", topic, key, err)
	}
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: b, Headers: headers}, nil
}

// auditRecord is the value of an audit mirror record.
type auditRecord struct {
	OriginalTopic string          `json:"originalTopic"`
	Payload       json.RawMessage `json:"payload"`
	Timestamp     string          `json:"timestamp"` // ISO-8601, UTC, milliseconds
}

// auditTime is the audit timestamp format (JavaScript's toISOString).
const auditTime = "2006-01-02T15:04:05.000Z"

// withAudit appends a copy of each record to the audit topic, when one is
// configured: same key and headers, value {"originalTopic", "payload",
// "timestamp"}, the originals given the same timestamp. compact says the
// values are encoding/json's compact JSON, so the audit value is assembled
// around them without compacting each again.
func (c *Client) withAudit(krs []*kgo.Record, now time.Time, compact bool) ([]*kgo.Record, error) {
	if c.cfg.Topics.Audit == "" {
		return krs, nil
	}
	now = now.UTC().Truncate(time.Millisecond)
	ts := now.Format(auditTime)
	n := len(krs)
	for _, kr := range krs[:n] {
		kr.Timestamp = now
		v, err := auditValue(kr, ts, compact)
		if err != nil {
			return nil, fmt.Errorf("kafka: encode audit record of %s: %w", kr.Key, err)
		}
		krs = append(krs, &kgo.Record{Topic: c.cfg.Topics.Audit, Key: kr.Key, Value: v, Headers: kr.Headers, Timestamp: now})
	}
	return krs, nil
}

func auditValue(kr *kgo.Record, ts string, compact bool) ([]byte, error) {
	if !compact {
		payload := json.RawMessage(kr.Value)
		if !json.Valid(kr.Value) {
			// A rejected raw record need not be JSON: mirror it as a string.
			payload, _ = json.Marshal(string(kr.Value))
		}
		return json.Marshal(auditRecord{OriginalTopic: kr.Topic, Payload: payload, Timestamp: ts})
	}
	topic, err := json.Marshal(kr.Topic)
	if err != nil {
		return nil, err
	}
	v := make([]byte, 0, len(kr.Value)+len(topic)+len(ts)+48)
	v = append(append(append(v, `{"originalTopic":`...), topic...), `,"payload":`...)
	v = append(append(append(v, kr.Value...), `,"timestamp":"`...), ts...)
	return append(v, `"}`...), nil
}
