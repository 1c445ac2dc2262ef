package cli

import (
	"errors"
	"strings"
	"testing"

	"engram/ingest/worker"
)

// On a terminal the worker's status is one line redrawn in place (each
// draw erases the last, none ends the line); elsewhere each is a line.
func TestWorkerStatusLine(t *testing.T) {
	h := worker.Health{Events: map[string]int64{"ingested": 7, "duplicate": 1, "rejected": 2}, Lag: 40, Members: 3, Outage: "archive: connection refused"}
	line := statusLine(10, 4.4, h, nil)
	for _, want := range []string{"10 finished (4/s)", "ingested 7", "duplicates 1", "rejected 2", "lag 40", "3 members", "outage: archive: connection refused"} {
		if !strings.Contains(line, want) {
			t.Fatalf("status %q lacks %q", line, want)
		}
	}
	if l := statusLine(10, 0, h, errors.New("broker down")); !strings.Contains(l, "lag unknown") {
		t.Fatalf("status with the lag unknown: %q", l)
	}

	var tty syncBuffer
	rep := newReporter(&env{stderr: &tty, getenv: func(string) string { return "" }}, false, nil)
	rep.tty = true
	showStatus(rep, "first")
	showStatus(rep, "second")
	if got := tty.String(); got != "first\r\x1b[2Ksecond" {
		t.Fatalf("terminal got %q", got)
	}
	rep.line("")
	if !strings.HasSuffix(tty.String(), "second\r\x1b[2K") {
		t.Fatalf("the line was not erased at the end: %q", tty.String())
	}

	var pipe syncBuffer
	rep = newReporter(&env{stderr: &pipe, getenv: func(string) string { return "" }}, false, nil)
	showStatus(rep, "first")
	showStatus(rep, "second")
	if got := pipe.String(); got != "first\nsecond\n" {
		t.Fatalf("pipe got %q", got)
	}
}
