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

// member is the scalar at keys under n ("" when absent): the archived
// event's context.spanId, which the index document does not keep.
func member(n *jnode, keys ...string) string {
	for _, k := range keys {
		if n == nil {
			return ""
		}
		var next *jnode
		for _, kid := range n.kids {
			if kid.key == k {
				next = kid
				break
			}
		}
		n = next
	}
	if n == nil || n.container() {
		return ""
	}
	return n.text
}

// spanID is the shown event's context.spanId, once its archive is read.
func (v *detailView) spanID() string { return member(v.archTree, "context", "spanId") }

// traceHelp is the help's word on y l.
const traceHelp = "y l copies the trace link: trace.url (--trace-url) with {traceId} and {spanId}\n" +
	"of the event, e.g. http://localhost:16686/trace/{traceId}; else the trace id.\n" +
	"The Pipeline view shows the trace id of each ingestion."

// traceLinkOf is what y l copies for d, and what to call it.
func (m *Model) traceLinkOf(d *model.IndexDoc) (text, what string) {
	span := ""
	if m.detail.doc == d {
		span = m.detail.spanID()
	}
	if m.c.Deps.TraceURL == "" {
		return d.TraceID, "trace id"
	}
	return traceLink(m.c.Deps.TraceURL, d.TraceID, span), "trace link"
}
