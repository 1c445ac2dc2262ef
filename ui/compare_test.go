package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"engram/model"
)

// compareWorld is the test world and, newest, two events that differ in
// known ways (a field only on the left, one only on the right, unicode
// and escape sequences in their texts, numbers that moved) and a third
// whose archive object is missing.
func compareWorld() (*memReader, *memArchive) {
	r, a := world(6, testBase)
	add := func(archived bool, raw string) {
		ev, err := model.Decode([]byte(raw), model.DecodeOptions{})
		if err != nil {
			panic(err)
		}
		ev.Input.Embedding = model.StubEmbedding(ev.Input.Text, model.StubDimension)
		ev.ImportanceScore = model.Importance(ev)
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		if archived {
			body, _ := ev.ArchiveJSON()
			a.put(ev.ObjectStorageKey, body)
		}
		r.add(model.NewIndexDoc(ev, 0))
	}
	at := func(s int) string { return testBase.Add(time.Hour + time.Duration(s)*time.Second).Format(time.RFC3339) }
	add(false, `{"eventId":"ev-gone","timestamp":"`+at(0)+`","type":"tool_result","context":{"sessionId":"s-9","agentId":"coder"},"input":{"text":"the result"},"action":{"tool":"shell"},"result":{"output":"x","success":false,"latencyMs":30},"tags":[]}`)
	add(true, `{"eventId":"ev-left","timestamp":"`+at(1)+`","type":"agent_action","context":{"sessionId":"s-9","turnId":"t-a","agentId":"coder"},"input":{"text":"Plan the naïve café route 日本語 \u001b[31mRED\u001b[0m"},"internalState":{"confidence":0.6},"action":{"tool":"search","reasoning":"I will search the index first because the archive is slow.\nThen I check the result."},"result":{"output":"found 3","success":true,"latencyMs":120,"errorCode":"E-left"},"evaluation":{"rewardScore":0.8,"selfAssessedQuality":0.5},"tags":["a"]}`)
	add(true, `{"eventId":"ev-right","timestamp":"`+at(2)+`","type":"agent_action","context":{"sessionId":"s-9","turnId":"t-b","agentId":"coder"},"input":{"text":"Plan the naïve café route 日本語 \u001b]0;pwned\u0007"},"internalState":{"confidence":0.9},"action":{"tool":"search","reasoning":"I will search the archive first because the index is stale.\nThen I check the result."},"result":{"output":"found 3","success":false,"latencyMs":480},"evaluation":{"rewardScore":0.2,"selfAssessedQuality":0.5,"hallucinated":true},"tags":["a"]}`)
	return r, a
}

// The stream lists ev-right first (newest), then ev-left, then ev-gone:
// m on ev-left, = on ev-right compares left with right. The snapshots
// are of the Compare view at 80×24 and 160×48 windows.
func TestCompareGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r, a := compareWorld()
			m := newTestModel(t, testDeps(r, a), testOpts(t), size[0], size[1])
			press(t, m, "down", "m", "up", "=")
			if m.focus != viewCompare {
				t.Fatalf("focus %v after m, =", m.focus)
			}
			// The view alone, as the root sized it (the window less the
			// header, status and footer lines): the tabs and the footer
			// are the root's, and change with every view added.
			golden.RequireEqual(t, []byte(ansi.Strip(m.compare.View())))
		})
	}
}

func TestCompareView(t *testing.T) {
	r, a := compareWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 48)
	press(t, m, "=")
	mustContain(t, screen(m), "nothing marked: m marks an event")
	press(t, m, "down", "m")
	mustContain(t, screen(m), "marked ev-left: = on another event compares the two")
	press(t, m, "=")
	mustContain(t, screen(m), "this is the marked event")
	press(t, m, "up", "=")
	s := screen(m)
	mustContain(t, s, "Compare ev-left ⇄ ev-right", "◀ ev-left", "▶ ev-right",
		"- result.errorCode", `"E-left"`, "+ evaluation.hallucinated", "~ result.latencyMs", "480  Δ +360 (+300%)",
		"I will search the [-index-] first", "I will search the {+archive+} first",
		`日本語 \x1b[-[31mRED\x1b[0m-]`, `日本語 \x1b{+]0;pwned\x07+}`, "12 changed · 1 only left · 1 only right")
	// No escape sequence of the events reaches the terminal raw: the only
	// ones drawn are the styles'.
	if strings.Contains(ansi.Strip(m.View().Content), "\x1b") || strings.Contains(s, "\a") {
		t.Fatal("an escape sequence of the event text reached the screen")
	}
	// y, e and the like act on the right event.
	if d := m.current(); d == nil || d.EventID != "ev-right" {
		t.Fatalf("current %v", d)
	}
	// Two events on screen: a copy names the one it took.
	press(t, m, "y", "k")
	mustContain(t, screen(m), "copied the archive key (ev-right, ")
	press(t, m, "esc")
	if m.focus != viewStream {
		t.Fatalf("esc went to %v", m.focus)
	}
	// Tab now reaches the comparison.
	if ids := m.views(); ids[len(ids)-1] != viewCompare {
		t.Fatalf("views %v", ids)
	}
}

func TestCompareMissingArchiveObject(t *testing.T) {
	r, a := compareWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 160, 48)
	press(t, m, "down", "down", "m", "up", "=")
	mustContain(t, screen(m), "the index ⚠ (archive object unreadable)",
		`⚠ left: archive object "events/`, `ev-gone.json" is missing; compared from the index document`)
}

// From the detail, = compares and Esc returns to the detail, whose own
// Esc still goes back to the stream.
func TestCompareFromDetail(t *testing.T) {
	r, a := compareWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 40)
	press(t, m, "down", "m", "up", "enter", "=")
	if m.focus != viewCompare {
		t.Fatalf("focus %v", m.focus)
	}
	press(t, m, "esc")
	if m.focus != viewDetail || m.detail.Doc().EventID != "ev-right" {
		t.Fatalf("esc from the comparison: focus %v", m.focus)
	}
	press(t, m, "esc")
	if m.focus != viewStream {
		t.Fatalf("esc from the detail: focus %v", m.focus)
	}
}

// The comparison scrolls: End shows its last field, Home its first.
func TestCompareScrolls(t *testing.T) {
	r, a := compareWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "down", "m", "up", "=", "end")
	mustContain(t, screen(m), "objectStorageKey")
	press(t, m, "home")
	mustContain(t, screen(m), "latency_ms")
}

// A real program: mark, compare, back.
func TestCompareFlow(t *testing.T) {
	r, a := compareWorld()
	tm, p := flow(t, testDeps(r, a))
	waitScreen(t, p, "the stream", has("t-b", "t-a", "ev-gone"))
	keys(tm, "down", "m")
	waitScreen(t, p, "the mark", has("marked ev-left"))
	keys(tm, "up", "=")
	waitScreen(t, p, "the comparison", has("Compare ev-left ⇄ ev-right", "12 changed · 1 only left · 1 only right"))
	keys(tm, "end")
	waitScreen(t, p, "its end", has("+ evaluation.hallucin", "- result.errorCode"))
	keys(tm, "esc")
	waitScreen(t, p, "the stream again", func(s string) bool {
		return !strings.Contains(s, "Compare ev-left ⇄") && strings.Contains(selectedLine(s), "Plan the naïve")
	})
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// In the Turns list, m marks a turn and = on another compares the two
// turns step by step.
func TestCompareTurns(t *testing.T) {
	r, a := world(12, testBase)
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 40)
	press(t, m, "tab")
	if m.focus != viewTurns {
		t.Fatalf("focus %v", m.focus)
	}
	press(t, m, "=")
	mustContain(t, screen(m), "no turn marked: m marks a turn")
	press(t, m, "m")
	mustContain(t, screen(m), "marked turn turn-0003: = on another turn compares the two")
	press(t, m, "down", "=")
	if m.focus != viewCompare {
		t.Fatalf("focus %v after m, down, =", m.focus)
	}
	mustContain(t, screen(m), "Compare turns turn-0003 ⇄ turn-0002", "◀ turn-0003", "▶ turn-0002",
		"latency_ms", "87 ", "66  Δ -21 (-24%)",
		"~ step 1 observation", "ev-000009 · user_input", "ev-000006 · user_input",
		"~ step 3 outcome", `"turn-0003"`, `"turn-0002"`)
	if d := m.current(); d == nil || d.EventID != "ev-000006" {
		t.Fatalf("current %v", d)
	}
	press(t, m, "esc")
	if m.focus != viewTurns {
		t.Fatalf("esc went to %v", m.focus)
	}
}

func TestCompareTurnsGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r, a := world(12, testBase)
			m := newTestModel(t, testDeps(r, a), testOpts(t), size[0], size[1])
			press(t, m, "tab", "m", "down", "=")
			golden.RequireEqual(t, []byte(ansi.Strip(m.compare.View())))
		})
	}
}

// unmatchedWorld adds two turns of different shapes to the test world: t-a
// asks twice then searches; t-b, newer, asks once, searches, then runs a
// shell before the result. Aligned, t-a's second question and t-b's shell
// step are each one turn's only.
func unmatchedWorld() (*memReader, *memArchive) {
	r, a := world(3, testBase)
	at := func(s int) string { return testBase.Add(time.Hour + time.Duration(s)*time.Second).Format(time.RFC3339) }
	for i, raw := range []string{
		`{"eventId":"ev-a1","timestamp":"` + at(1) + `","type":"user_input","context":{"sessionId":"s-9","turnId":"t-a","agentId":"coder"},"input":{"text":"free some disk"},"tags":[]}`,
		`{"eventId":"ev-a2","timestamp":"` + at(2) + `","type":"user_input","context":{"sessionId":"s-9","turnId":"t-a","agentId":"coder"},"input":{"text":"the cache first"},"tags":[]}`,
		`{"eventId":"ev-a3","timestamp":"` + at(3) + `","type":"agent_action","context":{"sessionId":"s-9","turnId":"t-a","agentId":"coder"},"input":{"text":"free some disk"},"action":{"tool":"search","reasoning":"find the cache"},"tags":[]}`,
		`{"eventId":"ev-a4","timestamp":"` + at(4) + `","type":"tool_result","context":{"sessionId":"s-9","turnId":"t-a","agentId":"coder"},"input":{"text":"free some disk"},"action":{"tool":"search"},"result":{"output":"cache at /var/cache","success":true,"latencyMs":40},"tags":[]}`,
		`{"eventId":"ev-b1","timestamp":"` + at(11) + `","type":"user_input","context":{"sessionId":"s-9","turnId":"t-b","agentId":"coder"},"input":{"text":"free some disk"},"tags":[]}`,
		`{"eventId":"ev-b2","timestamp":"` + at(12) + `","type":"agent_action","context":{"sessionId":"s-9","turnId":"t-b","agentId":"coder"},"input":{"text":"free some disk"},"action":{"tool":"search","reasoning":"find the logs"},"tags":[]}`,
		`{"eventId":"ev-b3","timestamp":"` + at(13) + `","type":"agent_action","context":{"sessionId":"s-9","turnId":"t-b","agentId":"coder"},"input":{"text":"free some disk"},"action":{"tool":"shell","reasoning":"du -sh /var"},"tags":[]}`,
		`{"eventId":"ev-b4","timestamp":"` + at(14) + `","type":"tool_result","context":{"sessionId":"s-9","turnId":"t-b","agentId":"coder"},"input":{"text":"free some disk"},"action":{"tool":"shell"},"result":{"output":"freed 2 GB","success":false,"latencyMs":200},"tags":[]}`,
	} {
		ev, err := model.Decode([]byte(raw), model.DecodeOptions{})
		if err != nil {
			panic(fmt.Sprint(i, err))
		}
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		body, _ := ev.ArchiveJSON()
		a.put(ev.ObjectStorageKey, body)
		r.add(model.NewIndexDoc(ev, 0))
	}
	return r, a
}

// Two turns of different shapes: the steps pair by phase and by (type,
// tool), the one left over on each side marked as only that turn's,
// its other column saying there is no such step.
func TestCompareTurnsUnmatchedSteps(t *testing.T) {
	r, a := unmatchedWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 120, 60)
	press(t, m, "tab", "down", "m", "up", "=")
	if m.focus != viewCompare {
		t.Fatalf("focus %v after m, =", m.focus)
	}
	s := screen(m)
	mustContain(t, s, "Compare turns t-a ⇄ t-b", "200  Δ +160 (+400%)",
		"~ step 1 observation", "ev-a1 · user_input", "ev-b1 · user_input",
		"- step 2 observation", "ev-a2 · user_input", "— no such step",
		"~ step 3 action", "ev-a3 · agent_action · search", "ev-b2 · agent_action · search",
		"+ step 4 action", "ev-b3 · agent_action · shell",
		"~ step 5 outcome", "ev-a4 · tool_result · search", "ev-b4 · tool_result · shell")
	for _, c := range []struct{ step, left, right string }{
		{"- step 2 observation", "ev-a2 · user_input", "— no such step"},
		{"+ step 4 action", "— no such step", "ev-b3 · agent_action · shell"},
	} {
		line := lineWith(s, c.step)
		l, r, ok := strings.Cut(line, "│")
		if !ok || !strings.Contains(l, c.left) || !strings.Contains(r, c.right) {
			t.Fatalf("%s: %q, want %q │ %q", c.step, line, c.left, c.right)
		}
	}
}

// The unmatched steps at 80×24: the first page has the left's extra
// question, the next the right's extra shell step.
func TestCompareTurnsUnmatchedGolden(t *testing.T) {
	r, a := unmatchedWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 80, 24)
	press(t, m, "tab", "down", "m", "up", "=")
	for _, page := range []string{"first", "next"} {
		t.Run(page, func(t *testing.T) {
			golden.RequireEqual(t, []byte(ansi.Strip(m.compare.View())))
		})
		press(t, m, "pgdown")
	}
}

// lineWith is the first line of s that holds sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
