package cli

import (
	"strings"
	"testing"
)

// TestSortFlag: search and turns --sort time list by event time, newest
// first, where --sort indexed (the default) lists by indexing order; a
// ranked search stays ranked; tail refuses time order; a bad value is a
// one-line usage error.
func TestSortFlag(t *testing.T) {
	c := newCLI(t)
	lines := strings.SplitAfter(demoLines(40), "\n")
	// The newer half first: indexing order is not time order.
	for _, batch := range []string{strings.Join(lines[20:], ""), strings.Join(lines[:20], "")} {
		if _, stderr, code := c.run(batch, "ingest"); code != 0 {
			t.Fatalf("ingest: %d %s", code, stderr)
		}
	}
	times := func(args ...string) []string {
		t.Helper()
		out, stderr, code := c.run("", args...)
		if code != 0 {
			t.Fatalf("%v: code %d, %s", args, code, stderr)
		}
		var ts []string
		for _, d := range jsonDocs(t, out) {
			for _, k := range []string{"timestamp", "last"} {
				if v, ok := d[k].(string); ok {
					ts = append(ts, v)
				}
			}
		}
		return ts
	}
	newestFirst := func(ts []string) bool {
		for i := 1; i < len(ts); i++ {
			if ts[i] > ts[i-1] {
				return false
			}
		}
		return len(ts) > 1
	}
	if ts := times("search", "--json", "--sort", "time", "-tag:nosuchtag"); !newestFirst(ts) || len(ts) != 40 {
		t.Errorf("search --sort time: %d events, not newest first by timestamp: %v", len(ts), ts)
	}
	if ts := times("search", "--json", "--sort", "indexed", "-tag:nosuchtag"); newestFirst(ts) {
		t.Errorf("search --sort indexed came out in time order: the data set should not be indexed in time order")
	}
	if ts := times("turns", "--json", "--sort", "time"); !newestFirst(ts) {
		t.Errorf("turns --sort time: not newest first by last: %v", ts)
	}
	if ts := times("turns", "--json"); newestFirst(ts) {
		t.Errorf("turns (indexed) came out in time order: the data set should not be indexed in time order")
	}
	if out, stderr, code := c.run("", "search", "--sort", "time", "Decide"); code != 0 || !strings.Contains(stderr, "ranked by relevance") || out == "" {
		t.Errorf("search --sort time with words: code %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"search", "--sort", "newest", "x"}, {"turns", "--sort", "Time"}, {"tail", "--sort", "x"}} {
		_, stderr, code := c.run("", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--sort") || !strings.Contains(stderr, "indexed, time") {
			t.Errorf("%v: code %d, stderr %q; want exit 2 and one line naming --sort and its choices", args, code, stderr)
		}
	}
	if _, stderr, code := c.run("", "tail", "--sort", "time"); code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "as they are indexed") {
		t.Errorf("tail --sort time: code %d, stderr %q; want exit 2 and one line", code, stderr)
	}
}

// TestTurnsFilterWholeTurns: turns EXPR lists the turns with a match, each
// with the whole turn's totals (every event, its outcome and latency) and
// its observation's summary; the table shows them, the summary last.
func TestTurnsFilterWholeTurns(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(demoLines(60), "ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, stderr, code := c.run("", "turns", "--json", "type:outcome")
	turns := jsonDocs(t, out)
	if code != 0 || len(turns) == 0 {
		t.Fatalf("turns type:outcome: code %d, %d rows, %s", code, len(turns), stderr)
	}
	partial := false
	for _, tr := range turns {
		key := tr["turn_key"].(string)
		out, stderr, code := c.run("", "turn", "--json", key)
		events := jsonDocs(t, out)
		if code != 0 {
			t.Fatalf("turn %s: %d %s", key, code, stderr)
		}
		var failures, latency float64
		for _, e := range events {
			if e["success"] == false {
				failures++
			}
			if l, ok := e["latency_ms"].(float64); ok {
				latency += l
			}
		}
		if tr["events"] != float64(len(events)) || tr["failures"] != failures || tr["latency_ms"] != latency {
			t.Errorf("turn %s: events %v failures %v latency %v; the turn has %d events, %v failures, %v ms",
				key, tr["events"], tr["failures"], tr["latency_ms"], len(events), failures, latency)
		}
		if tr["summary"] != events[0]["summary"] || tr["summary"] == "" {
			t.Errorf("turn %s: summary %q, want its first event's %q", key, tr["summary"], events[0]["summary"])
		}
		partial = partial || len(events) > 1
	}
	if !partial {
		t.Error("no turn with an outcome has other events: the test shows nothing")
	}
	c.env["COLUMNS"] = "200"
	out, _, _ = c.run("", "turns", "type:outcome")
	head, first, _ := strings.Cut(out, "\n")
	if !strings.Contains(head, "OUTCOME") || !strings.HasSuffix(strings.TrimSpace(head), "SUMMARY") ||
		!strings.Contains(first, turns[0]["summary"].(string)[:10]) {
		t.Errorf("turns table: header %q, first row %q", head, first)
	}
}
