package ui

import (
	"testing"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

const (
	linkTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	linkSpan  = "00f067aa0ba902b7"
)

// tracedWorld is one event whose context carries a W3C trace and span id.
func tracedWorld() (*memReader, *memArchive) {
	r, a := &memReader{}, &memArchive{}
	ev := testEvent(0, testBase)
	ev.Context.TraceID, ev.Context.SpanID = linkTrace, linkSpan
	body, _ := ev.ArchiveJSON()
	a.put(ev.ObjectStorageKey, body)
	r.add(model.NewIndexDoc(ev, 0))
	return r, a
}

// TestDetailShowsTrace: the detail names the event's trace and (once the
// archive is read: the index keeps no span id) its span.
func TestDetailShowsTrace(t *testing.T) {
	r, a := tracedWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 24)
	press(t, m, "enter")
	mustContain(t, screen(m), "trace "+linkTrace, "span "+linkSpan)
}

// TestYankTraceLink: y l copies trace.url filled with the event's ids; with
// no template, the trace id; an event without a trace says so.
func TestYankTraceLink(t *testing.T) {
	r, a := tracedWorld()
	d := testDeps(r, a)
	d.TraceURL = "http://localhost:16686/trace/{traceId}?uiFind={spanId}"
	m := newTestModel(t, d, testOpts(t), 160, 24)
	press(t, m, "enter", "y")
	mustContain(t, screen(m), "l trace link")
	_, cmd := m.Update(keyMsg("l"))
	if got, want := clipboardOf(t, cmd), "http://localhost:16686/trace/"+linkTrace+"?uiFind="+linkSpan; got != want {
		t.Errorf("yanked %q, want %q", got, want)
	}

	m = newTestModel(t, testDeps(r, a), testOpts(t), 160, 24)
	press(t, m, "y")
	_, cmd = m.Update(keyMsg("l"))
	if got := clipboardOf(t, cmd); got != linkTrace {
		t.Errorf("without trace.url yanked %q, want the trace id", got)
	}

	r2, a2 := world(1, testBase) // no traceId
	m = newTestModel(t, testDeps(r2, a2), testOpts(t), 160, 24)
	press(t, m, "y", "l")
	mustContain(t, screen(m), "no context.traceId")
}

// TestWaterfallShowsTraceID: each ingestion's waterfall names its trace,
// the one its spans carry.
func TestWaterfallShowsTraceID(t *testing.T) {
	r, a := world(3, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 48)
	tr := fixedTrace(1, "ev-a", -1)
	tr.Span.TraceID = ingest.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	send(t, m, uikit.PipeMsg{Run: 1, Trace: tr})
	for m.focus != viewPipeline {
		press(t, m, "tab")
	}
	mustContain(t, screen(m), "trace "+linkTrace)
}
