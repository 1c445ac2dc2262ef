package recall

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/model"
	"engram/query/recall/recalltest"
	"engram/themes"
	"engram/ui/uikit"

	qrecall "engram/query/recall"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// memSearcher finds every fixture document holding a word of the prompt
// or having an embedding: BM25 is the number of the prompt's words it
// holds, the cosine exact.
type memSearcher struct {
	calls int
	extra []*model.IndexDoc // beside the fixture's
}

func (s *memSearcher) Recall(_ context.Context, q qrecall.Request) (qrecall.Answer, error) {
	s.calls++
	var out []qrecall.Candidate
	for _, d := range append(recalltest.Docs(), s.extra...) {
		c := qrecall.Candidate{Doc: d}
		for _, w := range strings.Fields(q.Text) {
			if strings.Contains(d.Summary, w) {
				c.BM25++
			}
		}
		c.Cosine, c.HasCosine = qrecall.Cosine(q.Vector, d.Embedding)
		out = append(out, c)
	}
	return qrecall.Answer{Candidates: out, Note: fmt.Sprintf("all %d events (memory)", len(out))}, nil
}

// strong are n recent, important events holding every word of the
// prompt: they push the fixture's recall-d (none of the words) out of
// the top 10 by its text.
func strong(n int) []*model.IndexDoc {
	var out []*model.IndexDoc
	for i := range n {
		out = append(out, &model.IndexDoc{
			EventID: fmt.Sprintf("recall-strong-%02d", i), Timestamp: recalltest.Now.Add(-30 * time.Minute).Format(time.RFC3339Nano),
			EventType: "observation", Summary: fmt.Sprintf("alpha beta gamma strong %d", i), Embedding: []float64{1, 0.5, 0, 0},
			ImportanceScore: 0.8, RewardScore: 0.5, DecayFactor: 1,
		})
	}
	return out
}

type fixedEmbedder struct{}

func (fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	return [][]float64{recalltest.Vector}, nil
}

// newView is the view over the fixture, timers off (the test sends the
// debounce), the fixture's clock.
func newView(t *testing.T, w, h int) (*Model, *memSearcher) {
	t.Helper()
	s := &memSearcher{}
	st := qrecall.DefaultSettings()
	c := &uikit.Common{Styles: uikit.NewStyles(themes.Dark()), Keys: uikit.DefaultKeyMap(), Ctx: context.Background(), Manual: true}
	c.Deps.Recall = &qrecall.Engine{Searcher: s, Embedder: fixedEmbedder{}, Settings: st}
	c.Deps.Now = func() time.Time { return recalltest.Now }
	v := New(c)
	v.SetSize(w, h)
	return v, s
}

// do runs cmd and hands its message back, as a program would.
func do(v *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if msg := cmd(); msg != nil {
		do(v, v.Update(msg))
	}
}

func typeText(v *Model, s string) {
	for _, r := range s {
		do(v, v.Update(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
}

func press(v *Model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "left":
			msg = tea.KeyPressMsg{Code: tea.KeyLeft}
		case "right":
			msg = tea.KeyPressMsg{Code: tea.KeyRight}
		default:
			msg = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		do(v, v.Update(msg))
	}
}

func ids(v *Model, n int) []string {
	var out []string
	for _, r := range v.Results()[:min(n, len(v.Results()))] {
		out = append(out, r.Doc.EventID)
	}
	return out
}

// Typing waits for the prompt to rest: a stale debounce asks nothing,
// the last one recalls once.
func TestDebounce(t *testing.T) {
	v, s := newView(t, 80, 24)
	typeText(v, "alpha")
	stale := v.RestMsg()
	typeText(v, " beta gamma")
	do(v, v.Update(stale))
	if s.calls != 0 {
		t.Fatalf("a stale debounce recalled (%d calls)", s.calls)
	}
	do(v, v.Update(v.RestMsg()))
	if s.calls != 1 || len(v.Results()) != 24 || v.Prompt() != "alpha beta gamma" {
		t.Fatalf("calls %d, %d results", s.calls, len(v.Results()))
	}
}

// Changing a weight re-ranks the candidates found, without a new query.
func TestWeightKeysRerankInMemory(t *testing.T) {
	v, s := newView(t, 80, 24)
	typeText(v, recalltest.Prompt)
	do(v, v.Update(v.RestMsg()))
	press(v, "esc") // to the results
	if v.Typing() {
		t.Fatal("esc left the prompt focused")
	}
	// Every weight to 0 but importance: the importance order.
	for f := range qrecall.NumFactors {
		for v.factor != f {
			press(v, "right")
		}
		for range 10 {
			press(v, "-")
		}
	}
	for v.factor != qrecall.Importance {
		press(v, "left")
	}
	press(v, "+")
	if got := strings.Join(ids(v, 4), " "); got != "recall-c recall-d recall-a recall-b" {
		t.Fatalf("importance alone: %s (weights %v)", got, v.Settings().Weights)
	}
	press(v, "f") // salience, recency × importance
	if v.Settings().Formula != qrecall.Salience {
		t.Fatalf("f: formula %s", v.Settings().Formula)
	}
	press(v, "<", "<", "<", "<", "<") // half-life 45m
	if got := strings.Join(ids(v, 4), " "); got != "recall-d recall-a recall-c recall-b" {
		t.Fatalf("salience, half-life %s: %s", v.Settings().HalfLife, got)
	}
	press(v, "0")
	if v.Settings().Formula != qrecall.Hybrid || v.Settings().Weights != qrecall.DefaultWeights() {
		t.Fatalf("0: %+v", v.Settings())
	}
	if s.calls != 1 {
		t.Fatalf("re-ranking asked the index again: %d calls", s.calls)
	}
}

// Enter on a result asks the root to open it in the detail, with the
// list as its navigator.
func TestEnterOpensDetail(t *testing.T) {
	v, _ := newView(t, 80, 24)
	typeText(v, recalltest.Prompt)
	press(v, "enter") // recalls at once and goes to the results
	press(v, "down")
	cmd := v.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter: no command")
	}
	msg, ok := cmd().(uikit.OpenDetailMsg)
	if !ok || msg.Doc != v.Results()[1].Doc || msg.Nav == nil {
		t.Fatalf("enter: %#v", msg)
	}
}

// A selected result below the top K says why it stayed out.
func TestWhyNotInStatus(t *testing.T) {
	v, _ := newView(t, 120, 40)
	typeText(v, recalltest.Prompt)
	press(v, "enter")
	for range topK + 2 {
		press(v, "down")
	}
	s := ansi.Strip(v.View())
	if !strings.Contains(s, "why not? rank 13, outside the top 10") || !strings.Contains(s, "ties with the 10th result") {
		t.Fatalf("no why-not:\n%s", s)
	}
}

// explainD explains recall-d, pushed out of the top 10 by its text.
func explainD(v *Model) {
	v.c.Deps.Recall.Searcher.(*memSearcher).extra = strong(topK)
	typeText(v, recalltest.Prompt)
	press(v, "enter")
	do(v, v.Explain(recalltest.Docs()[3]))
}

// Golden views: before a prompt, the results and an event explained at
// 80×24 and 160×48.
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		keys func(v *Model)
	}{
		{"empty-80x24", 80, 24, func(*Model) {}},
		{"results-80x24", 80, 24, func(v *Model) { typeText(v, recalltest.Prompt); press(v, "enter") }},
		{"results-160x48", 160, 48, func(v *Model) { typeText(v, recalltest.Prompt); press(v, "enter", "down", "right", "+") }},
		{"salience-160x48", 160, 48, func(v *Model) { typeText(v, recalltest.Prompt); press(v, "enter", "f") }},
		{"why-80x24", 80, 24, explainD},
		{"why-160x48", 160, 48, explainD},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, _ := newView(t, c.w, c.h)
			c.keys(v)
			got := ansi.Strip(v.View())
			if lines := strings.Count(got, "\n") + 1; lines != c.h {
				t.Errorf("%d lines, want %d", lines, c.h)
			}
			for i, l := range strings.Split(got, "\n") {
				if w := ansi.StringWidth(l); w > c.w {
					t.Errorf("line %d is %d wide: %q", i+1, w, l)
				}
			}
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("view differs from %s:\n%s", path, got)
			}
		})
	}
}

// Explain pins an event below the top K: the panel says its rank, each
// factor with its gap to the K-th result, and the factor that kept it
// out; the index is asked again only when the event is not a candidate.
func TestExplainPanel(t *testing.T) {
	v, s := newView(t, 80, 24)
	s.extra = strong(topK)
	typeText(v, recalltest.Prompt)
	press(v, "enter")
	d := recalltest.Docs()[3] // recall-d
	do(v, v.Explain(d))
	if s.calls != 1 {
		t.Fatalf("a candidate explained asked the index again: %d calls", s.calls)
	}
	got := ansi.Strip(v.View())
	for _, want := range []string{"why not recall-d? rank 14, outside the top 10", "text kept it out", "gap to the 10th +0.300  ← kept it out", "the 10th: "} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in the panel:\n%s", want, got)
		}
	}
	if sel := v.Selected(); sel == nil || sel.EventID != d.EventID {
		t.Fatalf("the explained event is not selected: %v", sel)
	}
	v.StopExplaining()
	if strings.Contains(ansi.Strip(v.View()), "why not recall-d") {
		t.Fatal("the panel stayed after StopExplaining")
	}
}

// An event the candidates lack is asked for by id: the index is asked
// again, with it, as --explain does.
func TestExplainAsksForANonCandidate(t *testing.T) {
	v, s := newView(t, 80, 24)
	typeText(v, recalltest.Prompt)
	press(v, "enter")
	other := strong(1)[0]
	s.extra = []*model.IndexDoc{other} // indexed since the prompt was recalled
	do(v, v.Explain(other))
	if s.calls != 2 || !strings.Contains(ansi.Strip(v.View()), "why not recall-strong-00? in the top 10, at rank 1") {
		t.Fatalf("%d calls:\n%s", s.calls, ansi.Strip(v.View()))
	}
}

// With no prompt the view takes one and says in a line that the
// explanation waits for it; once recalled, the panel shows.
func TestExplainBeforeAPrompt(t *testing.T) {
	v, s := newView(t, 80, 24)
	do(v, v.Explain(recalltest.Docs()[0]))
	got := ansi.Strip(v.View())
	if !v.Typing() || s.calls != 0 || !strings.Contains(got, "why not recall-a? explained here once a prompt is typed") {
		t.Fatalf("typing %v, %d calls:\n%s", v.Typing(), s.calls, got)
	}
	typeText(v, recalltest.Prompt)
	do(v, v.Update(v.RestMsg()))
	if got = ansi.Strip(v.View()); !strings.Contains(got, "why not recall-a? in the top 10, at rank 3") {
		t.Fatalf("no explanation once recalled:\n%s", got)
	}
}

// Before a prompt, the status line says all it means at 80 columns: the
// end of it (that recall only reads) is not cut.
func TestEmptyStatusFitsEighty(t *testing.T) {
	v, _ := newView(t, 80, 24)
	lines := strings.Split(ansi.Strip(v.View()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "(read only).") || strings.Contains(last, "…") {
		t.Fatalf("status: %q", last)
	}
}
