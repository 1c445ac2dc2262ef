package ui

import (
	"strings"

	"engram/model"
)

// Links from an event to its trace in a tracing backend (Jaeger, Tempo…):
// the event's own context.traceId and context.spanId, which engram's
// ingestion spans continue, put into the trace.url setting's template.

// traceLink fills a trace URL template: {traceId} and {spanId} are
// replaced. With no template, or no trace id, the link is the trace id
// itself ("" when there is none), so y l copies what there is.
func traceLink(tmpl, traceID, spanID string) string {
	if tmpl == "" || traceID == "" {
		return traceID
	}
	return strings.NewReplacer("{traceId}", traceID, "{spanId}", spanID).Replace(tmpl)
}

// traceHelp is the help's word on y l, wrapped to the window where shown.
const traceHelp = "y l copies the trace link: trace.url (--trace-url) with {traceId} and {spanId} " +
	"of the event, e.g. http://localhost:16686/trace/{traceId}; else the trace id.\n" +
	"The Pipeline view shows the trace id of each ingestion."

// traceLinkOf is what y l copies for d, and what to call it.
func (m *Model) traceLinkOf(d *model.IndexDoc) (text, what string) {
	span := ""
	if m.detail.Doc() == d {
		span = m.detail.SpanID()
	}
	if m.c.Deps.TraceURL == "" {
		return d.TraceID, "trace id"
	}
	return traceLink(m.c.Deps.TraceURL, d.TraceID, span), "trace link"
}
