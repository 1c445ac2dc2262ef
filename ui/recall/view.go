package recall

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

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
	for _, l := range v.panel() {
		b.WriteString("\n" + uikit.Fit(l, v.w))
	}
	for _, l := range v.statusLines() {
		b.WriteString("\n" + uikit.Fit(l, v.w))
	}
	return uikit.PadLines(b.String(), v.w, v.h)
}

// statusLines is the status wrapped on at most two lines: what the
// candidates were and why an event stayed out are too long for one at 80
// columns, and their ends say the most.
func (v *Model) statusLines() []string {
	style, text := v.status()
	lines := strings.Split(ansi.Wrap(text, max(10, v.w), " "), "\n")
	if len(lines) > 2 {
		lines = []string{lines[0], strings.Join(lines[1:], " ")}
	}
	for i, l := range lines {
		if i > 0 {
			l = " " + l // under the first line's leading space
		}
		lines[i] = style.Render(uikit.Trunc(l, v.w))
	}
	return lines
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
		switch {
		case selected && !v.typing:
			gut = "›"
		case v.why != nil && r.Doc.EventID == v.why.EventID:
			gut = "•" // where the explained event ranks, the cursor elsewhere
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
		case i >= topK:
			return st.Muted.Render(line)
		}
		return line
	})
}

// status says what is going on, what was considered, and for a selected
// result below the top K why it stayed out: its style and its text.
func (v *Model) status() (lipgloss.Style, string) {
	st := v.c.Styles
	switch {
	case v.c.Deps.Recall == nil:
		return st.Muted, " recall needs an index that can recall"
	case v.loading:
		return st.Muted, " recalling " + v.c.Spin.View()
	case v.err != nil:
		return st.Error, " ✗ " + uikit.ErrorText(v.err)
	case v.asked == "":
		return st.Muted, " Type a prompt: what the memory would retrieve for it, and why (read only)."
	case len(v.res) == 0:
		return st.Muted, " nothing to recall: no event holds a word of the prompt or an embedding near it"
	}
	sel := v.cur.Sel()
	explained := v.why != nil && sel < len(v.res) && v.res[sel].Doc.EventID == v.why.EventID
	if !v.typing && sel >= topK && sel < len(v.res) && !explained { // the panel says it already
		x := qrecall.Explain(v.res, topK, v.res[sel].Doc.EventID, v.settings)
		return st.Warning, " why not? " + x.Why()
	}
	return st.Muted, fmt.Sprintf(" %d of %s candidates · top %d bright · %s · recall only reads",
		sel+1, uikit.Thousands(int64(len(v.res))), topK, v.note)
}

// panelLines bounds the explanation's sentence, wrapped.
const panelLines = 3

// panel is the explanation of the pinned event: why it is or is not in
// the top K (wrapped), its factors with the gap to the K-th result's, the
// one that kept it out marked, and the K-th result. Before a prompt is
// recalled it is one line saying what it waits for. The rows give way
// to it down to three.
func (v *Model) panel() []string {
	if v.why == nil || v.c.Deps.Recall == nil || v.err != nil {
		return nil
	}
	st := v.c.Styles
	id := uikit.Clean(v.why.EventID)
	switch {
	case v.loading:
		return []string{st.Warning.Render(" why not " + id + "? recalling…")}
	case v.asked == "":
		return []string{st.Warning.Render(" why not " + id + "? explained here once a prompt is typed")}
	}
	x := qrecall.Explain(v.res, topK, v.why.EventID, v.settings)
	why := uikit.WrapText("why not "+id+"? "+x.Why(), max(10, v.w-2))
	if len(why) > panelLines {
		why = append(why[:panelLines-1], uikit.Trunc(strings.Join(why[panelLines-1:], " "), v.w-2))
	}
	var out []string
	for _, l := range why {
		out = append(out, st.Warning.Render(" "+l))
	}
	if !x.Missing {
		out = append(out, v.factorLines(x)...)
		if !x.In {
			out = append(out, st.Muted.Render(fmt.Sprintf("   the %s: %.3f  %s  %s", qrecall.Ordinal(x.K), x.Kth.Score,
				uikit.Clean(x.Kth.Doc.EventID), uikit.OneLine(x.Kth.Doc.Summary))))
		}
	}
	if room := v.h - 3 - len(v.statusLines()) - 3; len(out) > room { // three rows at least stay
		out = out[:max(1, room)]
	}
	return out
}

// factorLines is a line a factor of the explained event: its value, its
// contribution and bar (scaled to it and the K-th result), on a wide
// screen the raw BM25 or cosine, and its gap to the K-th.
func (v *Model) factorLines(x qrecall.Explanation) []string {
	st := v.c.Styles
	scale := 1e-9
	for f := range qrecall.NumFactors {
		scale = math.Max(scale, math.Max(x.Parts[f], x.Kth.Parts[f]))
	}
	salience := v.settings.Formula == qrecall.Salience
	out := make([]string, 0, qrecall.NumFactors)
	for f := range qrecall.NumFactors {
		contrib := fmt.Sprintf("+%.3f", x.Parts[f])
		if salience {
			contrib = "      "
			if f == qrecall.Recency || f == qrecall.Importance {
				contrib = fmt.Sprintf("×%.3f", x.Parts[f])
			}
		}
		line := fmt.Sprintf("   %-10s %.3f  %s %s", f, x.Values[f], contrib, qrecall.Bar(x.Parts[f]/scale, 2*barW))
		if v.wide() {
			line += " " + uikit.Fit(rawFactor(x.Result, f), 13)
		}
		if !x.In && x.Gaps[f] != 0 {
			line += fmt.Sprintf("  gap to the %s %+.3f", qrecall.Ordinal(x.K), x.Gaps[f])
		}
		if !x.In && f == x.Decisive && x.Gap > 1e-12 { // a tie is the tie-break's, which the sentence says
			out = append(out, line+st.Warning.Render("  ← kept it out"))
			continue
		}
		out = append(out, line)
	}
	return out
}

// rawFactor is what a factor was computed from, where it is not the
// document's own field: text's BM25, similarity's cosine.
func rawFactor(r qrecall.Result, f qrecall.Factor) string {
	switch {
	case f == qrecall.Text:
		return fmt.Sprintf("bm25 %.2f", r.BM25)
	case f == qrecall.Similarity && r.HasCosine:
		return fmt.Sprintf("cosine %.3f", r.Cosine)
	case f == qrecall.Similarity:
		return "no embedding"
	}
	return ""
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
	if v.typing { // the root gives the prompt every key but tab, so it says both ways out
		return []key.Binding{km.Done, km.Leave, ck.NextView}
	}
	var back []key.Binding
	if v.why != nil { // esc goes back to where w was pressed
		back = []key.Binding{ck.Back}
	}
	if len(v.res) == 0 {
		return append([]key.Binding{km.Edit}, back...)
	}
	return append([]key.Binding{ck.Move, ck.Enter, km.Edit, km.Factor, km.More, km.Formula, km.Longer, ck.WhyNot}, back...)
}

// FullHelp returns every key of the view: + and - as one line, < and >
// as one; the prompt's own keys are its footer's.
func (v *Model) FullHelp() [][]key.Binding {
	km, ck := v.keys, v.c.Keys
	return [][]key.Binding{ck.RankKeys(), {ck.Enter, km.Edit}, {km.Factor, km.More, km.Formula, km.Longer, km.Reset}}
}
