package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffFixture is two events that differ in known ways: a field only on
// the left (result.errorCode), one only on the right
// (evaluation.hallucinated), unicode and escape sequences in their texts,
// numbers that moved; a third event whose archive object is removed; and
// two turns whose chains differ by one action and one outcome.
const diffFixture = `{"eventId":"ev-left","timestamp":"2026-05-08T10:00:00Z","type":"agent_action","context":{"sessionId":"s-1","turnId":"t-a","agentId":"ag"},"input":{"text":"Plan the naïve café route 日本語 \u001b[31mRED\u001b[0m"},"internalState":{"confidence":0.6},"action":{"tool":"search","reasoning":"I will search the index first because the archive is slow.\nThen I check the result."},"result":{"output":"found 3","success":true,"latencyMs":120,"errorCode":"E-left"},"evaluation":{"rewardScore":0.8,"selfAssessedQuality":0.5},"tags":["a"]}
{"eventId":"ev-right","timestamp":"2026-05-08T10:05:00Z","type":"agent_action","context":{"sessionId":"s-1","turnId":"t-b","agentId":"ag"},"input":{"text":"Plan the naïve café route 日本語 \u001b]0;pwned\u0007"},"internalState":{"confidence":0.9},"action":{"tool":"search","reasoning":"I will search the archive first because the index is stale.\nThen I check the result."},"result":{"output":"found 3","success":false,"latencyMs":480},"evaluation":{"rewardScore":0.2,"selfAssessedQuality":0.5,"hallucinated":true},"tags":["a"]}
{"eventId":"ev-gone","timestamp":"2026-05-08T10:06:00Z","type":"tool_result","context":{"sessionId":"s-1","turnId":"t-b","agentId":"ag"},"input":{"text":"the result"},"action":{"tool":"search"},"result":{"output":"x","success":false,"latencyMs":30},"tags":[]}
{"eventId":"ev-a-obs","timestamp":"2026-05-08T09:59:59Z","type":"user_input","context":{"sessionId":"s-1","turnId":"t-a","agentId":"ag"},"input":{"text":"where is the café?"},"tags":[]}
{"eventId":"ev-a-fetch","timestamp":"2026-05-08T10:00:01Z","type":"agent_action","context":{"sessionId":"s-1","turnId":"t-a","agentId":"ag"},"input":{"text":"fetch it"},"action":{"tool":"fetch"},"tags":[]}
{"eventId":"ev-a-out","timestamp":"2026-05-08T10:00:02Z","type":"tool_result","context":{"sessionId":"s-1","turnId":"t-a","agentId":"ag"},"input":{"text":"the result"},"action":{"tool":"search"},"result":{"output":"ok","success":true,"latencyMs":20},"evaluation":{"rewardScore":0.9,"selfAssessedQuality":0.9},"tags":[]}
{"eventId":"ev-b-obs","timestamp":"2026-05-08T10:04:59Z","type":"user_input","context":{"sessionId":"s-1","turnId":"t-b","agentId":"ag"},"input":{"text":"where is the café now?"},"tags":[]}
{"eventId":"ev-c-obs","timestamp":"2026-05-08T11:30:00Z","type":"user_input","context":{"sessionId":"s-1","turnId":"t-c","agentId":"ag"},"input":{"text":"later"},"tags":[]}
`

func diffCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	if _, stderr, code := c.run(diffFixture, "ingest"); code != 0 || !strings.Contains(stderr, "ingested 8,") {
		t.Fatalf("ingest: code %d, %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(c.data, "archive", "events", "2026", "05", "08", "ev-gone.json")); err != nil {
		t.Fatal(err)
	}
	return c
}

// noEscapes fails when s holds a control character other than a line
// break: event text must never reach the terminal raw.
func noEscapes(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			t.Fatalf("%s holds control character %U:\n%s", what, r, s)
		}
	}
}

func TestDiffEvents(t *testing.T) {
	c := diffCLI(t)
	out, stderr, code := c.run("", "diff", "ev-left", "ev-right")
	if code != 0 {
		t.Fatalf("diff: code %d, %s", code, stderr)
	}
	noEscapes(t, "diff", out)
	for _, want := range []string{
		"left   ev-left  agent_action  2026-05-08T10:00:00Z  from the archive",
		"latency_ms  120   480    +360 (+300%)",
		"reward      0.8   0.2    -0.6 (-75%)",
		"- result.errorCode ",
		`"E-left"`,
		"+ evaluation.hallucinated ",
		"~ result.success ",
		"true → false",
		"I will search the [-index-]{+archive+} first because the [-archive-]{+index+} is [-slow-]{+stale+}.\n",
		"    Then I check the result.",
		`~ input.text`,
		`日本語 \x1b[-[31mRED\x1b[0m-]{+]0;pwned\x07+}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "~ action.tool") || strings.Contains(out, "tags") {
		t.Errorf("same fields listed without --all:\n%s", out)
	}
	if out, _, _ := c.run("", "diff", "--all", "ev-left", "ev-right"); !strings.Contains(out, `= action.tool `) {
		t.Errorf("--all lists no same field:\n%s", out)
	}
}

func TestDiffEventsJSON(t *testing.T) {
	c := diffCLI(t)
	out, stderr, code := c.run("", "diff", "--json", "ev-left", "ev-right")
	if code != 0 {
		t.Fatalf("diff --json: code %d, %s", code, stderr)
	}
	noEscapes(t, "diff --json", strings.TrimSuffix(out, "\n"))
	var d struct {
		Left   struct{ EventID, Source string } `json:"left"`
		Counts map[string]int                   `json:"counts"`
		Fields []struct {
			Path, Status string
			Delta        *float64
			Words        []struct{ Op, Text string }
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	status := map[string]string{}
	for _, f := range d.Fields {
		status[f.Path] = f.Status
		if f.Path == "input.text" {
			var l string
			for _, w := range f.Words {
				if w.Op != "+" {
					l += w.Text
				}
			}
			if l != "Plan the naïve café route 日本語 \x1b[31mRED\x1b[0m" {
				t.Errorf("input.text words %+v", f.Words)
			}
		}
	}
	if status["result.errorCode"] != "only_left" || status["evaluation.hallucinated"] != "only_right" ||
		status["action.reasoning"] != "changed" || status["action.tool"] != "same" || d.Counts["only_left"] != 1 || d.Left.Source != "archive" {
		t.Errorf("statuses %v, counts %v", status, d.Counts)
	}
}

func TestDiffMissing(t *testing.T) {
	c := diffCLI(t)
	_, stderr, code := c.run("", "diff", "ev-left", "no-such\x1b[2J")
	if code != 1 || !strings.Contains(stderr, `no event "no-such\x1b[2J" in sqlite `) {
		t.Errorf("missing id: code %d, stderr %q", code, stderr)
	}
	noEscapes(t, "stderr", stderr)
	if _, stderr, code = c.run("", "diff", "--turn", "t-a", "t-zz"); code != 1 || !strings.Contains(stderr, `no turn "t-zz" in`) {
		t.Errorf("missing turn: code %d, stderr %q", code, stderr)
	}
	if _, _, code = c.run("", "diff", "ev-left"); code != 2 {
		t.Errorf("one id: code %d", code)
	}
	// A missing archive object: the index document stands in, and says so.
	out, stderr, code := c.run("", "diff", "ev-gone", "ev-a-out")
	if code != 0 || !strings.Contains(out, "ev-gone  tool_result  2026-05-08T10:06:00Z  from the index") ||
		!strings.Contains(out, `note: archive object "events/2026/05/08/ev-gone.json" is missing; compared from the index document`) ||
		!strings.Contains(out, "latency_ms  30    20     -10 (-33%)") {
		t.Errorf("missing archive object: code %d, stderr %s\n%s", code, stderr, out)
	}
}

// diffTurnWants is what diff --turn t-a t-b prints of the fixtures, on
// either index.
var diffTurnWants = []string{
	"left   turn t-a  session s-1  2026-05-08T09:59:59.000Z  4 events  outcome ok",
	"right  turn t-b  session s-1  2026-05-08T10:04:59.000Z  3 events  outcome failed",
	"note: ev-gone: archive object",
	"outcome: ok → failed",
	"step 1  observation  differs",
	"step 2  action  differs\n  left   ev-left  agent_action  tool search",
	"  right  ev-right  agent_action  tool search",
	"step 3  action  only in the left turn\n  left   ev-a-fetch  agent_action  tool fetch",
	"step 4  outcome  differs",
	"where is the café{+ now+}?",
}

func TestDiffTurns(t *testing.T) {
	c := diffCLI(t)
	out, stderr, code := c.run("", "diff", "--turn", "t-a", "t-b")
	if code != 0 {
		t.Fatalf("diff --turn: code %d, %s", code, stderr)
	}
	noEscapes(t, "diff --turn", out)
	for _, want := range diffTurnWants {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, _, code = c.run("", "diff", "--turn", "--json", "t-a", "t-b")
	var d struct {
		Steps []struct{ Phase, Status string } `json:"steps"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Steps) != 4 || d.Steps[2].Status != "only_left" {
		t.Errorf("--turn --json: code %d, %+v\n%s", code, d, out)
	}
}

func TestSession(t *testing.T) {
	c := diffCLI(t)
	out, stderr, code := c.run("", "session", "s-1")
	if code != 0 {
		t.Fatalf("session: code %d, %s", code, stderr)
	}
	ia, ib, ic := strings.Index(out, "t-a "), strings.Index(out, "t-b "), strings.Index(out, "t-c ")
	if ia < 0 || ib < ia || ic < ib {
		t.Errorf("turns out of time order:\n%s", out)
	}
	for _, want := range []string{"session s-1  ·  3 turns", "┄┄ 1h24m idle ┄┄", "failed", "ev-a-fetch  agent_action  fetch"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, _, code = c.run("", "session", "--json", "s-1")
	var s struct {
		Turns []struct {
			Key  string `json:"turn_key"`
			Gap  bool
			Step []any `json:"steps"`
		} `json:"turns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || len(s.Turns) != 3 || !s.Turns[2].Gap || len(s.Turns[0].Step) != 4 {
		t.Errorf("session --json: code %d, %+v\n%s", code, s, out)
	}
	if _, stderr, code = c.run("", "session", "s-none"); code != 1 || !strings.Contains(stderr, `no session "s-none"`) {
		t.Errorf("missing session: code %d, %s", code, stderr)
	}
}
