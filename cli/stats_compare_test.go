package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// compareEvents: window A (10:00-11:00) has 40 outcomes, every 10th failed,
// 100 ms each, agent a; window B (11:00-12:00) has 40, every 4th failed,
// 200 ms each, agent b.
func compareEvents() string {
	var b strings.Builder
	for i := range 80 {
		agent, ok, ms, at := "a", i%10 != 9, 100, fmt.Sprintf("10:%02d:%02d", i/2%60, i%2*30)
		if i >= 40 {
			j := i - 40
			agent, ok, ms, at = "b", j%4 != 3, 200, fmt.Sprintf("11:%02d:%02d", j/2%60, j%2*30)
		}
		fmt.Fprintf(&b, `{"eventId":"cmp-%d","type":"outcome","timestamp":"2026-05-08T%sZ","context":{"agentId":%q,"sessionId":"s1","turnId":"t%d"},"input":{"text":"result %d"},"result":{"output":"done","success":%v,"latencyMs":%d}}`+"\n",
			i, at, agent, i, i, ok, ms)
	}
	return b.String()
}

type compareOut struct {
	A, B struct {
		Label, Since, Until, Group string
	}
	Groups []struct {
		Group    string
		TooSmall string `json:"too_small"`
		Changes  []changeOut
	}
}

func (c compareOut) change(group, measure string) changeOut {
	for _, g := range c.Groups {
		for _, ch := range g.Changes {
			if g.Group == group && ch.Measure == measure {
				return ch
			}
		}
	}
	return changeOut{}
}

func TestStatsCompareKnownAnswers(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(compareEvents(), "ingest"); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	b := []string{"stats", "--json", "--since", "2026-05-08T11:00:00Z", "--until", "2026-05-08T12:00:00Z", "--every", "1h"}
	for _, spec := range [][]string{{"--compare", "previous"}, {"--compare", "2026-05-08T10:00:00Z/2026-05-08T11:00:00Z"}, {"--by", "agent", "--since", "2026-05-08T10:00:00Z", "--every", "2h", "--compare", "a,b"}} {
		out, stderr, code := c.run("", append(append([]string{}, b...), spec...)...)
		var got compareOut
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%v: code %d %v %s %s", spec, code, err, stderr, out)
		}
		ev, fr, p50, rw := got.change("all", "events"), got.change("all", "failure rate"), got.change("all", "latency p50"), got.change("all", "reward mean")
		if *ev.A != 40 || *ev.B != 40 || ev.Direction != "same" || ev.Verdict != "neutral" {
			t.Errorf("%v events %+v", spec, ev)
		}
		if *fr.A != 0.1 || *fr.B != 0.25 || fr.Direction != "up" || fr.Verdict != "worse" {
			t.Errorf("%v failure rate %+v", spec, fr)
		}
		if *p50.A != 100 || *p50.B != 200 || *p50.Relative != 1 || p50.Verdict != "worse" {
			t.Errorf("%v p50 %+v", spec, p50)
		}
		if rw.Direction != "same" || rw.Verdict != "neutral" || *rw.A != *rw.B { // no reward given: the same default on both sides
			t.Errorf("%v reward %+v", spec, rw)
		}
		if got.Groups[0].TooSmall != "" {
			t.Errorf("%v: too small %q", spec, got.Groups[0].TooSmall)
		}
	}
	// A side under 20 events is said to be too small; the table says so too.
	out, _, code := c.run("", "stats", "--since", "2026-05-08T11:00:00Z", "--until", "2026-05-08T11:10:00Z", "--compare", "previous")
	if code != 0 || !strings.Contains(out, "too small to compare: A has 0 events and B 20, under 20 each") && !strings.Contains(out, "too small to compare: A has 0 events, under 20") {
		t.Errorf("small windows: code %d\n%s", code, out)
	}
	if !strings.Contains(out, "failure rate") || !strings.Contains(out, "A (previous)") {
		t.Errorf("table:\n%s", out)
	}
	for _, bad := range [][]string{{"--compare", "yesterday"}, {"--compare", "a,b"}, {"--compare", "x/y"}} {
		_, stderr, code := c.run("", append([]string{"stats"}, bad...)...)
		if code != 1 || !strings.Contains(stderr, "stats: --compare") {
			t.Errorf("%v: code %d %s", bad, code, stderr)
		}
	}
}
