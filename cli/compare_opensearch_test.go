package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"engram/backend/osindex/ostest"
)

// osCLI is a CLI whose index is a fresh index on the real cluster, with
// fixture ingested into it (the archive in the data directory, as
// ever); run passes the OpenSearch flags after the command's name.
func osCLI(t *testing.T, prefix, fixture string, events int) func(args ...string) (string, string, int) {
	t.Helper()
	u := ostest.URL(t)
	name := ostest.Index(t, prefix)
	c := newCLI(t)
	run := func(args ...string) (string, string, int) {
		flags := []string{"--index", "opensearch", "--opensearch-url", u, "--opensearch-index", name}
		return c.run("", append(append(args[:1:1], flags...), args[1:]...)...)
	}
	flags := []string{"ingest", "--index", "opensearch", "--opensearch-url", u, "--opensearch-index", name}
	if _, stderr, code := c.run(fixture, flags...); code != 0 || !strings.Contains(stderr, "ingested "+strconv.Itoa(events)+",") {
		t.Fatalf("ingest into %s: code %d, %s", name, code, stderr)
	}
	// Searches see what a refresh has made visible (about a second later
	// on its own); the documents by id are visible at once.
	ostest.MustAdmin(t, u, "POST", "/"+name+"/_refresh", "")
	if fixture == diffFixture {
		if err := os.Remove(filepath.Join(c.data, "archive", "events", "2026", "05", "08", "ev-gone.json")); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// diff, diff --turn and session on the real cluster give the answers
// they give on SQLite (TestDiffEvents, TestDiffTurns, TestSession).
func TestDiffOpenSearch(t *testing.T) {
	run := osCLI(t, "engram-diff-", diffFixture, 8)

	out, stderr, code := run("diff", "ev-left", "ev-right")
	if code != 0 {
		t.Fatalf("diff: code %d, %s", code, stderr)
	}
	noEscapes(t, "diff", out)
	for _, want := range []string{
		"left   ev-left  agent_action  2026-05-08T10:00:00Z  from the archive",
		"right  ev-right  agent_action  2026-05-08T10:05:00Z  from the archive",
		"latency_ms  120   480    +360 (+300%)",
		"reward      0.8   0.2    -0.6 (-75%)",
		"- result.errorCode ", `"E-left"`, "+ evaluation.hallucinated ", "true → false",
		"I will search the [-index-]{+archive+} first because the [-archive-]{+index+} is [-slow-]{+stale+}.\n",
		`日本語 \x1b[-[31mRED\x1b[0m-]{+]0;pwned\x07+}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff: missing %q in\n%s", want, out)
		}
	}
	// The event whose archive object is gone: its index document stands in.
	if out, _, code = run("diff", "ev-gone", "ev-right"); code != 0 || !strings.Contains(out, "left   ev-gone  tool_result  2026-05-08T10:06:00Z  from the index") {
		t.Errorf("diff with a missing archive object: code %d\n%s", code, out)
	}
	if _, stderr, code = run("diff", "ev-left", "ev-none"); code != 1 || !strings.Contains(stderr, `"ev-none"`) {
		t.Errorf("diff of a missing id: code %d, %s", code, stderr)
	}

	out, stderr, code = run("diff", "--turn", "t-a", "t-b")
	if code != 0 {
		t.Fatalf("diff --turn: code %d, %s", code, stderr)
	}
	noEscapes(t, "diff --turn", out)
	for _, want := range diffTurnWants {
		if !strings.Contains(out, want) {
			t.Errorf("diff --turn: missing %q in\n%s", want, out)
		}
	}
	out, _, code = run("diff", "--turn", "--json", "t-a", "t-b")
	var d struct {
		Steps []struct{ Phase, Status string } `json:"steps"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Steps) != 4 || d.Steps[2].Status != "only_left" {
		t.Errorf("diff --turn --json: code %d, %+v\n%s", code, d, out)
	}

	out, stderr, code = run("session", "s-1")
	if code != 0 {
		t.Fatalf("session: code %d, %s", code, stderr)
	}
	ia, ib, ic := strings.Index(out, "t-a "), strings.Index(out, "t-b "), strings.Index(out, "t-c ")
	if ia < 0 || ib < ia || ic < ib {
		t.Errorf("session: turns out of time order:\n%s", out)
	}
	for _, want := range []string{"session s-1  ·  3 turns", "┄┄ 1h24m idle ┄┄", "failed", "ev-a-fetch  agent_action  fetch"} {
		if !strings.Contains(out, want) {
			t.Errorf("session: missing %q in\n%s", want, out)
		}
	}
	out, _, code = run("session", "--json", "s-1")
	var s struct {
		Turns []struct {
			Key    string `json:"turn_key"`
			Events int
			Gap    bool
		} `json:"turns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || len(s.Turns) != 3 || s.Turns[0].Key != "t-a" || s.Turns[0].Events != 4 ||
		s.Turns[1].Key != "t-b" || s.Turns[1].Events != 3 || s.Turns[2].Key != "t-c" || !s.Turns[2].Gap {
		t.Errorf("session --json: code %d, %+v\n%s", code, s, out)
	}
	if _, stderr, code = run("session", "s-none"); code != 1 || !strings.Contains(stderr, `no session "s-none"`) {
		t.Errorf("missing session: code %d, %s", code, stderr)
	}
}

// stats --compare on the real cluster: the known answers of
// TestStatsCompareKnownAnswers (failure rate 10% → 25%, p50 100 → 200 ms).
func TestStatsCompareOpenSearch(t *testing.T) {
	run := osCLI(t, "engram-statscmp-", compareEvents(), 80)
	b := []string{"stats", "--json", "--since", "2026-05-08T11:00:00Z", "--until", "2026-05-08T12:00:00Z", "--every", "1h"}
	for _, spec := range [][]string{{"--compare", "previous"}, {"--by", "agent", "--since", "2026-05-08T10:00:00Z", "--every", "2h", "--compare", "a,b"}} {
		out, stderr, code := run(append(append([]string{}, b...), spec...)...)
		var got compareOut
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%v: code %d %v %s %s", spec, code, err, stderr, out)
		}
		ev, fr, p50 := got.change("all", "events"), got.change("all", "failure rate"), got.change("all", "latency p50")
		if ev.A == nil || *ev.A != 40 || *ev.B != 40 || ev.Direction != "same" {
			t.Errorf("%v events %+v", spec, ev)
		}
		if fr.A == nil || *fr.A != 0.1 || *fr.B != 0.25 || fr.Direction != "up" || fr.Verdict != "worse" {
			t.Errorf("%v failure rate %+v", spec, fr)
		}
		if p50.A == nil || *p50.A != 100 || *p50.B != 200 || p50.Verdict != "worse" {
			t.Errorf("%v p50 %+v", spec, p50)
		}
		if got.Groups[0].TooSmall != "" {
			t.Errorf("%v: too small %q", spec, got.Groups[0].TooSmall)
		}
	}
	out, _, code := run("stats", "--since", "2026-05-08T11:00:00Z", "--until", "2026-05-08T11:10:00Z", "--compare", "previous")
	if code != 0 || !strings.Contains(out, "too small to compare") || !strings.Contains(out, "A (previous)") {
		t.Errorf("small windows: code %d\n%s", code, out)
	}
}
