package ingest

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"

	"engram/model"
)

// TraceID and SpanID are W3C trace-context identifiers (16 and 8 bytes).
// They live here, not in an OpenTelemetry package, so that the pipeline
// names every ingestion's trace whether or not spans are exported: the
// waterfall on screen and the spans in a tracing backend then carry the
// same ids, and ingest needs no telemetry dependency.
type (
	// TraceID names an ingestion's trace.
	TraceID [16]byte
	// SpanID names a span of a trace.
	SpanID [8]byte
)

func (t TraceID) String() string { return hex.EncodeToString(t[:]) }
func (s SpanID) String() string  { return hex.EncodeToString(s[:]) }

// IsValid is false for the all-zero id, which W3C reserves for "none".
func (t TraceID) IsValid() bool { return t != TraceID{} }

// IsValid is false for the all-zero id.
func (s SpanID) IsValid() bool { return s != SpanID{} }

// SpanContext is the trace context of one ingestion: the trace it belongs
// to, the id of its own root span, and the span it continues.
type SpanContext struct {
	TraceID TraceID
	SpanID  SpanID // the ingestion's root span (experience.ingest)
	// Parent is the span the ingestion continues: the producer's span from
	// a traceparent, else the event's context.spanId. Zero when the
	// ingestion starts its trace, or joins the event's context.traceId
	// without a span id to hang from.
	Parent  SpanID
	Sampled bool   // the parent's sampled flag (true when there is no traceparent)
	State   string // W3C tracestate, passed through unchanged
}

// Traceparent is the W3C traceparent header of the ingestion's root span,
// for messages produced on its behalf.
func (c SpanContext) Traceparent() string {
	flags := "00"
	if c.Sampled {
		flags = "01"
	}
	return "00-" + c.TraceID.String() + "-" + c.SpanID.String() + "-" + flags
}

// ParseTraceparent reads a W3C traceparent header
// (version-traceid-parentid-flags). ok is false for anything malformed or
// carrying an all-zero id; a future version's extra fields are ignored, as
// the recommendation asks.
func ParseTraceparent(s string) (tid TraceID, sid SpanID, sampled, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || (len(s) > 55 && s[55] != '-') {
		return tid, sid, false, false
	}
	ver, err := hex.DecodeString(s[0:2])
	if err != nil || ver[0] == 0xff || (ver[0] == 0 && len(s) != 55) {
		return tid, sid, false, false
	}
	flags, err := hex.DecodeString(s[53:55])
	if err != nil || !decodeLowerHex(tid[:], s[3:35]) || !decodeLowerHex(sid[:], s[36:52]) ||
		!tid.IsValid() || !sid.IsValid() {
		return TraceID{}, SpanID{}, false, false
	}
	return tid, sid, flags[0]&1 == 1, true
}

// decodeLowerHex fills dst from lower-case hex (W3C forbids upper case in
// traceparent; an event's context ids are accepted in either).
func decodeLowerHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// spanContext decides the trace of an ingestion: the traceparent the item
// came with (a Kafka header), else the event's own context.traceId and
// context.spanId when they are W3C ids, else a new trace. The root span
// always gets a new id of its own.
func spanContext(it Item, ev *model.Event) SpanContext {
	c := SpanContext{Sampled: true}
	if tid, sid, sampled, ok := ParseTraceparent(it.Traceparent); ok {
		c.TraceID, c.Parent, c.Sampled, c.State = tid, sid, sampled, it.Tracestate
	} else if ev != nil && decodeHex(c.TraceID[:], ev.Context.TraceID) && c.TraceID.IsValid() {
		if !decodeHex(c.Parent[:], ev.Context.SpanID) {
			c.Parent = SpanID{}
		}
	} else {
		c.TraceID = TraceID{} // decodeHex may have written part of a bad id
		for !c.TraceID.IsValid() {
			fillRandom(c.TraceID[:])
		}
	}
	for !c.SpanID.IsValid() {
		fillRandom(c.SpanID[:])
	}
	return c
}

// decodeHex fills dst from hex of exactly its length, in either case.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// fillRandom uses math/rand: ids need to be unique, not secret, and this is
// on the path of every event (the OpenTelemetry SDK does the same).
func fillRandom(b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rand.Uint64()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
}
