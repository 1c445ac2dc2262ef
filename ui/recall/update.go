package recall

import (
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	qrecall "engram/query/recall"
	"engram/ui/uikit"
	"engram/ui/widget/list"
)

// Update handles the prompt, the list's and the weights' keys, the
// debounce and the engine's answers.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	defer v.layout() // the panel's height follows the ranking and the prompt
	switch msg := msg.(type) {
	case restMsg:
		return v.onRest(msg)
	case recalledMsg:
		v.onRecalled(msg)
	case tea.PasteMsg:
		if v.typing && v.in.Update(msg) {
			return v.edited()
		}
	case tea.KeyPressMsg:
		if v.typing {
			return v.onTypingKey(msg)
		}
		return v.onListKey(msg)
	case tea.MouseWheelMsg:
		v.cur.Move(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp], len(v.res))
	}
	return nil
}

// onTypingKey edits the prompt; enter, ↓ and esc go to the results.
func (v *Model) onTypingKey(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, v.keys.Done) {
		if len(v.res) > 0 || msg.String() != "down" {
			v.stopTyping()
		}
		if msg.String() == "enter" {
			return v.onRest(restMsg{v.rest}) // at once, not after the pause
		}
		return nil
	}
	if v.in.Update(msg) {
		return v.edited()
	}
	return nil
}

// edited starts the debounce of an edit.
func (v *Model) edited() tea.Cmd {
	v.rest++
	return v.c.After(debounce, restMsg{v.rest})
}

// onRest recalls the prompt once it has rested (a later edit made msg
// stale).
func (v *Model) onRest(msg restMsg) tea.Cmd {
	if msg.rest != v.rest || v.c.Deps.Recall == nil {
		return nil
	}
	p := strings.TrimSpace(v.in.Value())
	if p == "" {
		v.req++
		v.asked, v.cands, v.res, v.note, v.err, v.loading = "", nil, nil, "", nil, false
		return nil
	}
	if p == v.asked && !v.loading {
		return nil
	}
	v.req++
	v.loading = true
	return v.recall(p)
}

func (v *Model) onRecalled(msg recalledMsg) {
	if msg.req != v.req {
		return
	}
	v.loading, v.err, v.asked = false, msg.err, msg.prompt
	if msg.err != nil {
		return
	}
	v.cands, v.note = msg.cands, msg.note
	v.rank()
	v.cur.Reset()
	v.selectWhy() // where it ranks is what was asked
	v.cur.Scroll(len(v.res))
}

// rank orders the candidates found by the settings now: no new query.
func (v *Model) rank() {
	v.res = qrecall.Rank(v.cands, v.settings, v.now())
}

// onListKey moves in the results, opens one, or changes the settings.
func (v *Model) onListKey(msg tea.KeyPressMsg) tea.Cmd {
	km, ck := v.keys, v.c.Keys
	switch {
	case key.Matches(msg, km.Edit):
		v.typing = true
		v.in.Focus()
	case key.Matches(msg, ck.Enter):
		if d := v.Selected(); d != nil {
			return func() tea.Msg { return uikit.OpenDetailMsg{Doc: d, Nav: v} }
		}
	case key.Matches(msg, km.Factor):
		step := 1
		if s := msg.String(); s == "left" || s == "h" {
			step = -1
		}
		v.factor = qrecall.Factor((int(v.factor) + step + int(qrecall.NumFactors)) % int(qrecall.NumFactors))
	case key.Matches(msg, km.More, km.Less):
		d := weightStep
		if key.Matches(msg, km.Less) {
			d = -d
		}
		w := v.settings.Weights
		w[v.factor] = math.Max(0, math.Round((w[v.factor]+d)*100)/100)
		if sum(w) > 0 {
			v.settings.Weights = w
			v.rerank()
		}
	case key.Matches(msg, km.Formula):
		v.settings.Formula = map[qrecall.Formula]qrecall.Formula{qrecall.Hybrid: qrecall.Salience, qrecall.Salience: qrecall.Hybrid}[v.settings.Formula]
		v.rerank()
	case key.Matches(msg, km.Longer, km.Shorter):
		h := v.settings.HalfLife
		if key.Matches(msg, km.Longer) {
			h *= 2
		} else {
			h = max(time.Minute, h/2)
		}
		v.settings.HalfLife = h
		v.rerank()
	case key.Matches(msg, km.Reset):
		if e := v.c.Deps.Recall; e != nil && e.Settings.Formula != "" {
			v.settings = e.Settings
		} else {
			v.settings = qrecall.DefaultSettings()
		}
		v.rerank()
	default:
		if delta, ok := list.Step(msg, ck, v.rowsH(), len(v.res)); ok {
			v.cur.Move(delta, len(v.res))
		}
	}
	return nil
}

// rerank ranks again keeping the selected event selected.
func (v *Model) rerank() {
	var id string
	if d := v.Selected(); d != nil {
		id = d.EventID
	}
	v.rank()
	for i, r := range v.res {
		if r.Doc.EventID == id {
			v.cur.Select(i)
		}
	}
	v.cur.Scroll(len(v.res))
}

func sum(w qrecall.Weights) float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	return s
}
