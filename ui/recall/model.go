// Package recall is the inspector's Recall view: what the memory would
// retrieve for a prompt and why, a bar per factor a row. Changed weights
// re-rank the candidates already found, without asking the index again;
// recall only reads (retrieval_count is not changed).
package recall

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/model"
	qrecall "engram/query/recall"
	"engram/ui/uikit"
	"engram/ui/widget/list"
	"engram/ui/widget/textinput"
)

// debounce is how long the prompt must rest before it is recalled.
const debounce = 300 * time.Millisecond

// topK is how many results count as retrieved: the rows below it are the
// other candidates, drawn muted, each with why it stayed out.
const topK = 10

// weightStep is how much + and - change the selected factor's weight.
const weightStep = 0.05

// Model is the Recall view.
type Model struct {
	c    *uikit.Common
	keys keyMap
	in   textinput.Model

	typing   bool
	settings qrecall.Settings // what the rows are ranked by now
	factor   qrecall.Factor   // the factor + and - change

	asked string // the prompt the candidates are of
	// why is the event explained in the panel, nil for none: asked
	// among the candidates whatever its relevance, as --explain does.
	why     *model.IndexDoc
	cands   []qrecall.Candidate
	res     []qrecall.Result
	note    string
	err     error
	loading bool

	rest uint64 // numbers the prompt's edits: a stale debounce is dropped
	req  uint64 // numbers the recalls: a stale answer is dropped
	cur  list.Cursor
	w, h int
}

// New is the view with an empty prompt, ranked by the configured
// settings.
func New(c *uikit.Common) *Model {
	v := &Model{c: c, keys: defaultKeys()}
	v.in.Prompt = " Recall › "
	v.in.Placeholder = "a prompt: what would the memory retrieve for it?"
	v.in.Limit = 500
	if e := c.Deps.Recall; e != nil {
		v.settings = e.Settings
	}
	if v.settings.Formula == "" {
		v.settings = qrecall.DefaultSettings()
	}
	v.typing = true
	v.in.Focus()
	return v
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area: the prompt, the settings line and the
// column titles above the rows, the status line below them.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.layout()
}

// rowsH is the rows' height: the body less the prompt, the settings, the
// column titles, the status and the explanation panel.
func (v *Model) rowsH() int { return max(1, v.h-3-len(v.statusLines())-len(v.panel())) }

// layout fits the rows to what the panel now takes.
func (v *Model) layout() {
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(len(v.res))
}

// Busy reports whether a recall is running.
func (v *Model) Busy() bool { return v.loading }

// Typing reports whether the prompt takes the keys (the root then passes
// it every key but ctrl+c).
func (v *Model) Typing() bool { return v.typing }

// Prompt is the text typed.
func (v *Model) Prompt() string { return v.in.Value() }

// Settings are what the rows are ranked by now.
func (v *Model) Settings() qrecall.Settings { return v.settings }

// Results are the ranked candidates, best first.
func (v *Model) Results() []qrecall.Result { return v.res }

// Shown is called when the view takes the focus; an empty prompt is typed into at once.
func (v *Model) Shown() tea.Cmd {
	if v.in.Value() == "" {
		v.typing = true
		v.in.Focus()
	}
	return nil
}

// Back handles Esc: it stops typing when there are results to move in.
func (v *Model) Back() bool {
	if v.typing && len(v.res) > 0 {
		v.stopTyping()
		return true
	}
	return false
}

func (v *Model) stopTyping() {
	v.typing = false
	v.in.Blur()
}

// Explain pins d in the explanation panel against the prompt: at once
// when d is among the candidates already found, else after a recall that
// takes it in whatever its relevance. With no prompt the prompt takes the
// keys, and the panel says it waits for one.
func (v *Model) Explain(d *model.IndexDoc) tea.Cmd {
	v.why = d
	defer v.layout()
	p := strings.TrimSpace(v.in.Value())
	if p == "" || v.c.Deps.Recall == nil {
		v.typing = true
		v.in.Focus()
		return nil
	}
	v.stopTyping()
	if p == v.asked && !v.loading && v.candidate(d.EventID) {
		v.selectWhy()
		return nil
	}
	v.rest++ // a debounce still pending would ask again without it
	v.req++
	v.loading = true
	return v.recall(p)
}

// Explained is the event in the explanation panel, nil for none.
func (v *Model) Explained() *model.IndexDoc { return v.why }

// StopExplaining closes the explanation panel.
func (v *Model) StopExplaining() {
	v.why = nil
	v.layout()
}

// candidate reports whether the event id is among the candidates found.
func (v *Model) candidate(id string) bool {
	for _, c := range v.cands {
		if c.Doc != nil && c.Doc.EventID == id {
			return true
		}
	}
	return false
}

// selectWhy selects the explained event's row, when it has one.
func (v *Model) selectWhy() {
	if v.why == nil {
		return
	}
	for i, r := range v.res {
		if r.Doc != nil && r.Doc.EventID == v.why.EventID {
			v.cur.Select(i)
			v.cur.Scroll(len(v.res))
			return
		}
	}
}

// Selected is the selected result's event, nil when there is none.
func (v *Model) Selected() *model.IndexDoc {
	if v.typing || v.cur.Sel() >= len(v.res) {
		return nil
	}
	return v.res[v.cur.Sel()].Doc
}

// Step is the navigator for the detail: the result delta away from the
// one with id from (nil at an end).
func (v *Model) Step(from string, delta int) (*model.IndexDoc, tea.Cmd) {
	for i, r := range v.res {
		if r.Doc.EventID != from {
			continue
		}
		if j := i + delta; j >= 0 && j < len(v.res) {
			v.cur.Select(j)
			v.cur.Scroll(len(v.res))
			return v.res[j].Doc, nil
		}
	}
	return nil, nil
}

var _ uikit.Navigator = (*Model)(nil)

// now is the clock recency is measured against.
func (v *Model) now() time.Time {
	if v.c.Deps.Now != nil {
		return v.c.Deps.Now()
	}
	return time.Now()
}

// restMsg: the prompt has not changed for debounce since edit rest.
type restMsg struct{ rest uint64 }

// recalledMsg answers recall number req, of prompt.
type recalledMsg struct {
	req    uint64
	prompt string
	cands  []qrecall.Candidate
	note   string
	err    error
}

// RestMsg is the debounce's message for the prompt as it is now (tests
// whose timers do not fire send it themselves).
func (v *Model) RestMsg() tea.Msg { return restMsg{v.rest} }

// recall asks the engine for the candidates of the prompt, the explained
// event among them.
func (v *Model) recall(prompt string) tea.Cmd {
	var ids []string
	if v.why != nil {
		ids = []string{v.why.EventID}
	}
	return recall(v.c.Ctx, v.c.Deps.Recall, prompt, ids, v.req)
}

func recall(ctx context.Context, e *qrecall.Engine, prompt string, ids []string, req uint64) tea.Cmd {
	return func() tea.Msg {
		cands, _, note, err := e.Run(ctx, prompt, "", ids, e.Settings)
		return recalledMsg{req: req, prompt: prompt, cands: cands, note: note, err: err}
	}
}

// keyMap is the view's own keys.
type keyMap struct {
	Edit, Done, Factor, More, Less, Formula, Longer, Shorter, Reset key.Binding
	// Leave names esc in the prompt's footer; Done matches it.
	Leave key.Binding
}

func defaultKeys() keyMap {
	b := func(keys []string, h, d string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(h, d))
	}
	return keyMap{
		Edit:    b([]string{"/", "i"}, "/", "edit the prompt"),
		Done:    b([]string{"enter", "down", "esc"}, "enter", "to the results"),
		Leave:   b([]string{"esc"}, "esc", "leave the prompt"),
		Factor:  b([]string{"left", "right", "h", "l"}, "←/→", "factor"),
		More:    b([]string{"+"}, "+/-", "weight"),
		Less:    b([]string{"-"}, "-", "less weight"),
		Formula: b([]string{"f"}, "f", "hybrid/salience"),
		Longer:  b([]string{">"}, "</>", "half-life"),
		Shorter: b([]string{"<"}, "<", "shorter half-life"),
		Reset:   b([]string{"0"}, "0", "configured weights"),
	}
}
