package recall

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	qrecall "engram/query/recall"
	"engram/ui/uikit"
)

// Column widths: the gutter and rank, the score, and a factor's cell (a
// bar; on a wide screen the factor's value after it).
const (
	rankW  = 5 // "› 12 "
	scoreW = 6 // "0.712 "
	barW   = 5
)

// wide: the screen has room for each factor's value beside its bar.
func (v *Model) wide() bool { return v.w >= 120 }

func (v *Model) cellW() int {
	if v.wide() {
		return barW + 6 // bar, " 0.93", space
	}
	return barW + 1
}

// View draws the prompt, the settings, the results and a status line.
func (v *Model) View() string {
	st := v.c.Styles
	var b strings.Builder
	b.WriteString(uikit.Fit(v.in.View(st, v.w), v.w))
	b.WriteString("\n" + uikit.Fit(v.settingsLine(), v.w))
	b.WriteString("\n" + v.head())
	b.WriteString(v.rows())
	b.WriteString("\n" + uikit.Fit(v.status(), v.w))
	return uikit.PadLines(b.String(), v.w, v.h)
}

// settingsLine is the formula, each factor's weight (the one + and -
// change marked) and the half-life.
func (v *Model) settingsLine() string {
	st := v.c.Styles
	s := v.settings
	var parts []string
	for f := range qrecall.NumFactors {
		w := fmt.Sprintf("%s %.2f", f.Short(), s.Weights[f])
		product := f == qrecall.Recency || f == qrecall.Importance
		if s.Formula == qrecall.Salience {
			w = f.Short() + map[bool]string{true: " ×", false: " ·"}[product]
		}
		switch {
		case f == v.factor && !v.typing:
			w = st.Selected.Render(w)
		case s.Formula == qrecall.Salience && !product:
			w = st.Subtle.Render(w)
		}
		parts = append(parts, w)
	}
	formula := "hybrid Σ"
	if s.Formula == qrecall.Salience {
		formula = "salience rec×imp"
	}
	return " " + st.Accent.Render(formula) + "  " + strings.Join(parts, " ") + st.Muted.Render("  half-life "+shortDuration(s.HalfLife))
}

// head is the column titles.
func (v *Model) head() string {
	var b strings.Builder
	b.WriteString(uikit.Fit("   # ", rankW) + uikit.Fit("score", scoreW))
	for f := range qrecall.NumFactors {
		b.WriteString(uikit.Fit(f.Short(), v.cellW()))
	}
	b.WriteString("summary")
	return v.c.Styles.Table.Head.Render(uikit.Fit(b.String(), v.w))
}

// scale is the largest contribution among the results, which a full bar
// stands for: bars compare across rows and factors.
func (v *Model) scale() float64 {
	m := 0.0
	for _, r := range v.res {
		for _, p := range r.Parts {
			m = math.Max(m, p)
		}
	}
	if m == 0 {
		return 1
	}
	return m
}

// rows draws the results in sight; those below the top K are muted.
func (v *Model) rows() string {
	st := v.c.Styles
	scale := v.scale()
	sumW := max(8, v.w-rankW-scoreW-int(qrecall.NumFactors)*v.cellW())
	return v.cur.Draw(len(v.res), func(i int, selected bool) string {
		r := v.res[i]
		gut := " "
		if selected && !v.typing {
			gut = "›"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s%3d ", gut, r.Rank)
		fmt.Fprintf(&b, "%.3f ", r.Score)
		for f := range qrecall.NumFactors {
			cell := qrecall.Bar(r.Parts[f]/scale, barW)
			if v.wide() {
				cell += fmt.Sprintf(" %.2f", r.Values[f])
			}
			b.WriteString(cell + " ")
		}
		b.WriteString(uikit.Fit(uikit.OneLine(r.Doc.Summary), sumW))
		line := uikit.Fit(b.String(), v.w)
		switch {
		case selected && !v.typing:
			return st.Selected.Render(line)
		case i >= TopK:
			return st.Muted.Render(line)
		}
		return line
	})
}

// status says what is going on, what was considered, and for a selected
// result below the top K why it stayed out.
func (v *Model) status() string {
	st := v.c.Styles
	switch {
	case v.c.Deps.Recall == nil:
		return st.Muted.Render(" recall needs an index that can recall")
	case v.loading:
		return st.Muted.Render(" recalling " + v.c.Spin.View())
	case v.err != nil:
		return st.Error.Render(" ✗ " + uikit.ErrorText(v.err))
	case v.asked == "":
		return st.Muted.Render(" Type a prompt: the events the memory would retrieve for it, and why. Recall only reads.")
	case len(v.res) == 0:
		return st.Muted.Render(" nothing to recall: no event holds a word of the prompt or an embedding near it")
	}
	sel := v.cur.Sel()
	if !v.typing && sel >= TopK && sel < len(v.res) {
		x := qrecall.Explain(v.res, TopK, v.res[sel].Doc.EventID, v.settings)
		return st.Warning.Render(" why not? " + x.Why())
	}
	return st.Muted.Render(fmt.Sprintf(" %d of %s candidates · top %d bright · %s · recall only reads",
		sel+1, uikit.Thousands(int64(len(v.res))), TopK, v.note))
}

// shortDuration is d without zero minutes and seconds (24h, 1h30m).
func shortDuration(d time.Duration) string {
	s := strings.TrimSuffix(d.String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ShortHelp returns the keys that work now.
func (v *Model) ShortHelp() []key.Binding {
	km, ck := v.keys, v.c.Keys
	if v.typing {
		return []key.Binding{km.Done}
	}
	if len(v.res) == 0 {
		return []key.Binding{km.Edit}
	}
	return []key.Binding{ck.Move, ck.Enter, km.Edit, km.Factor, km.More, km.Formula, km.Longer}
}

// FullHelp returns every key of the view: + and - as one line, < and >
// as one; the prompt's own keys are its footer's.
func (v *Model) FullHelp() [][]key.Binding {
	km, ck := v.keys, v.c.Keys
	return [][]key.Binding{ck.RankKeys(), {ck.Enter, km.Edit}, {km.Factor, km.More, km.Formula, km.Longer, km.Reset}}
}
