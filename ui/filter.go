package ui

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query/expr"
	"engram/ui/uikit"
	"engram/ui/widget/textinput"
)

// filterBar edits the query expression the stream and the turns are
// filtered by. It draws over the status and footer lines: the input, then
// the error pointing at its column, or an example.
type filterBar struct {
	c       *uikit.Common
	open    bool
	input   textinput.Model
	applied string
	err     error

	// rows are the rows whose values tab completes (the stream's).
	rows func() []*model.IndexDoc
	// comp is what tab completes and lists.
	comp completer
	// history is the expressions applied, oldest first; at is where ↑/↓
	// are in it (len(history): the one being typed).
	history []string
	at      int
}

func newFilterBar(c *uikit.Common) filterBar {
	return filterBar{c: c, input: textinput.Model{Prompt: "/ ", Placeholder: "filter, e.g. type:action agent:planner", Limit: 2000}}
}

func (f *filterBar) show() {
	f.open, f.at = true, len(f.history)
	f.comp.reset()
	f.input.SetValue(f.applied)
	f.input.Focus()
	f.check()
}

// fail reopens the bar on an expression the index refused.
func (f *filterBar) fail(expr string, err error) {
	f.open = true
	f.input.SetValue(expr)
	f.input.Focus()
	f.err = err
}

// check validates what is typed with the filter language's parser (no I/O).
func (f *filterBar) check() {
	f.err = nil
	if f.c.Deps.CheckFilter != nil && strings.TrimSpace(f.input.Value()) != "" {
		f.err = f.c.Deps.CheckFilter(f.input.Value())
	}
}

// update handles a key while the bar is open; apply is set when the
// expression is to be applied.
func (f *filterBar) update(msg tea.Msg) (apply bool) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			f.open, f.err = false, nil
			return false
		case "enter":
			f.check()
			if f.err != nil {
				return false
			}
			f.open = false
			f.applied = strings.TrimSpace(f.input.Value())
			f.remember(f.applied)
			return true
		case "tab", "shift+tab":
			f.input.SetValue(f.comp.tab(f.input.Value(), map[string]int{"tab": 1, "shift+tab": -1}[k.String()], f.cands))
			f.check()
			return false
		case "up", "down":
			f.recall(map[string]int{"up": -1, "down": 1}[k.String()])
			return false
		}
	}
	f.comp.reset()
	if f.input.Update(msg) {
		f.check()
	}
	return false
}

// cands are the completions of typed among the rows shown.
func (f *filterBar) cands(typed string) (string, []string, bool) {
	var rows []*model.IndexDoc
	if f.rows != nil {
		rows = f.rows()
	}
	return filterCands(typed, rows)
}

// remember adds an applied expression to the history (once, newest last).
func (f *filterBar) remember(expr string) {
	if expr == "" {
		return
	}
	f.history = append(slices.DeleteFunc(f.history, func(h string) bool { return h == expr }), expr)
}

// recall shows the expression applied delta steps back (-1) or on (+1),
// skipping the one already shown.
func (f *filterBar) recall(delta int) {
	for at := f.at + delta; at >= 0 && at < len(f.history); at += delta {
		if f.history[at] != f.input.Value() {
			f.at = at
			f.input.SetValue(f.history[at])
			f.check()
			return
		}
	}
}

// view is the bar's lines: the input, then the hint or the error, which
// wraps (a list of known fields is long).
func (f *filterBar) view(w int) []string {
	st := f.c.Styles
	line := f.input.View(st, w)
	if cands, at := f.comp.listed(); f.err == nil && cands != nil {
		return []string{line, candLine(st, cands, at, w)}
	}
	if f.err == nil {
		return []string{line, st.Muted.Render(uikit.Fit(" enter apply · esc cancel · tab completes · ↑/↓ earlier filters", w))}
	}
	msg := uikit.ErrorText(f.err)
	var syn *expr.SyntaxError
	if errors.As(f.err, &syn) {
		msg = uikit.Clean(syn.Msg)
	}
	if col := errorColumn(f.err); col > 0 {
		// The caret sits under the column, counted in cells of the input.
		pad := uikit.Width(f.input.Prompt) + cellsBefore(f.input.Value(), col-1)
		caret := strings.Repeat(" ", max(0, min(pad, w-2))) + "^"
		msg = "column " + strconv.Itoa(col) + ": " + msg
		if uikit.Width(caret)+1+uikit.Width(msg) > w { // the text under the caret, from the left
			return append([]string{line, st.Error.Render(caret)}, errorLines(st, msg, w)...)
		}
		return []string{line, st.Error.Render(caret + " " + msg)}
	}
	return append([]string{line}, errorLines(st, msg, w)...)
}

// errorLines wraps an error to w cells, each line styled and indented.
func errorLines(st *uikit.Styles, msg string, w int) []string {
	var out []string
	for _, l := range uikit.WrapText(msg, max(10, w-2)) {
		out = append(out, st.Error.Render(" "+l))
	}
	return out
}

// errorColumn finds the 1-based column (in characters) a filter error
// points at: an expr.SyntaxError's, a Column() method's, else "column N"
// in its text; 0 if none.
func errorColumn(err error) int {
	var syn *expr.SyntaxError
	if errors.As(err, &syn) {
		return syn.Col
	}
	var c interface{ Column() int }
	if errors.As(err, &c) {
		return c.Column()
	}
	if m := columnRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

var columnRE = regexp.MustCompile(`(?i)\bcol(?:umn)?\s*(\d+)`)

// cellsBefore is the width of the first n runes of s.
func cellsBefore(s string, n int) int {
	rs := []rune(s)
	n = max(0, min(n, len(rs)))
	return uikit.Width(uikit.Clean(string(rs[:n])))
}
