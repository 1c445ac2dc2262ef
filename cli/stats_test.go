package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// statsEvents are four outcomes with known answers: agent a at 10:05 (ok,
// 100 ms), 10:20 (failed, 300 ms), 11:10 (ok, 200 ms); agent b at 11:30
// (failed, 1000 ms).
func statsEvents() string {
	var b strings.Builder
	for i, e := range []struct {
		agent, at string
		ok        bool
		ms        int
	}{{"a", "10:05", true, 100}, {"a", "10:20", false, 300}, {"a", "11:10", true, 200}, {"b", "11:30", false, 1000}} {
		fmt.Fprintf(&b, `{"eventId":"st-%d","type":"outcome","timestamp":"2026-05-08T%s:00Z","context":{"agentId":%q,"sessionId":"s1","turnId":"t%d"},"input":{"text":"result %d"},"result":{"output":"done","success":%v,"latencyMs":%d}}`+"\n",
			i, e.at, e.agent, i, i, e.ok, e.ms)
	}
	return b.String()
}

func TestStatsKnownAnswers(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run(statsEvents(), "ingest"); code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	out, stderr, code := c.run("", "stats", "--since", "2026-05-08T10:00:00Z", "--until", "2026-05-08T12:00:00Z", "--every", "1h", "--by", "agent", "--json")
	if code != 0 {
		t.Fatalf("stats: %d %s", code, stderr)
	}
	var s statsOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s.All.Count != 4 || s.All.Failures != 2 || s.All.FailureRate != 0.5 || len(s.Buckets) != 2 || strings.Join(s.Groups, ",") != "a,b" {
		t.Fatalf("all %+v, %d buckets, groups %v", s.All, len(s.Buckets), s.Groups)
	}
	a := s.Totals[0]
	if a.Count != 3 || a.Failures != 1 || *a.Latency.P50 != 200 || *a.Latency.P99 != 300 || a.Latency.N != 3 {
		t.Errorf("agent a: %+v p50 %v p99 %v", a, *a.Latency.P50, *a.Latency.P99)
	}
	b0, b1 := s.Buckets[0], s.Buckets[1]
	if b0.Start != "2026-05-08T10:00:00Z" || b0.All.Count != 2 || b0.Group[0].Count != 2 || b0.Group[1].Count != 0 || b0.Group[1].Latency.P50 != nil {
		t.Errorf("first bucket %+v", b0)
	}
	if b1.All.Count != 2 || b1.Group[1].Count != 1 || *b1.Group[1].Latency.P95 != 1000 {
		t.Errorf("second bucket %+v", b1)
	}
	// A pipe gets a line a bucket and group, for grep.
	out, _, code = c.run("", "stats", "--since", "2026-05-08T10:00:00Z", "--until", "2026-05-08T12:00:00Z", "--every", "1h", "--by", "agent")
	mustLines := []string{"2026-05-08T10:00:00Z  a", "2026-05-08T11:00:00Z  b"}
	for _, want := range mustLines {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("plain output lacks %q:\n%s", want, out)
		}
	}
	// An expression narrows it.
	out, _, _ = c.run("", "stats", "--since", "2026-05-08", "--until", "2026-05-09", "--json", "success:false")
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.All.Count != 2 || s.All.Failures != 2 {
		t.Errorf("success:false: %+v %v", s.All, err)
	}
}

// Bad input is one line naming the flag, exit 1 (2 for a bad expression).
func TestStatsBadInput(t *testing.T) {
	c := newCLI(t)
	c.run(statsEvents(), "ingest")
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--every", "0"}, "stats: --every 0: want a duration above zero", 1},
		{[]string{"--every", "soon"}, `stats: --every "soon": want a duration`, 1},
		{[]string{"--by", "colour"}, `stats: --by "colour": want one of`, 1},
		{[]string{"--since", "2026-05-08", "--until", "2026-05-08"}, "stats: the range is empty", 1},
		{[]string{"--since", "yesterday"}, `stats: --since "yesterday"`, 1},
		{[]string{"--top", "0", "--by", "agent"}, "stats: --top 0: want 1 or more", 1},
		{[]string{"--since", "2000-01-01", "--every", "1m"}, "buckets, over 2000", 1},
		{[]string{"latency>"}, "invalid expression", 2},
	} {
		_, stderr, code := c.run("", append([]string{"stats"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || (tc.code == 1 && strings.Count(strings.TrimSpace(stderr), "\n") != 0) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q on one line", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	if got := sparkline([]int64{0, 1, 4, 8, 2}); got != " ▁▄█▂" {
		t.Errorf("sparkline %q", got)
	}
	if got := sparkline([]int64{0, 0}); got != "  " {
		t.Errorf("empty sparkline %q", got)
	}
}
