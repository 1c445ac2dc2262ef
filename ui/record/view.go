package record

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

// View draws the form and, beside it, the stage trace.
func (v *Model) View() string {
	tw := v.traceW()
	fw := v.w - tw - 1
	form := v.formLines(fw)
	// Keep the focused field in sight.
	fl := v.focusLine()
	if fl < v.top {
		v.top = fl
	} else if fl >= v.top+v.h {
		v.top = fl - v.h + 1
	}
	form = form[min(v.top, len(form)):]
	left := uikit.PadLines(strings.Join(form, "\n"), fw, v.h)
	sep := strings.TrimSuffix(strings.Repeat(v.c.Styles.Border.Render("│")+"\n", v.h), "\n")
	right := uikit.PadLines(strings.Join(v.traceLines(tw), "\n"), tw, v.h)
	return uikit.JoinH(left, sep, right)
}

// ShortHelp returns the form's keys.
func (v *Model) ShortHelp() []key.Binding {
	km := v.c.Keys
	bs := []key.Binding{km.NextField, km.PrevField, km.Submit}
	if v.CanSend() {
		bs = append(bs, km.Send)
	}
	if v.focus == fType || v.focus == fSuccess {
		bs = append(bs, km.Choice)
	}
	if v.focus < fSubmit && v.f.inputs[v.focus].Multiline {
		bs = append(bs, km.LineBreak)
	}
	return append(bs, km.Back)
}

// FullHelp returns every key of the form.
func (v *Model) FullHelp() [][]key.Binding {
	km := v.c.Keys
	acts := []key.Binding{km.Submit}
	if v.CanSend() {
		acts = append(acts, km.Send)
	}
	return [][]key.Binding{{km.NextField, km.PrevField, km.Choice, km.LineBreak}, append(acts, km.Reset, km.FormHelp, km.Back)}
}

// labelW is the width of the labels column.
const labelW = 12

func (v *Model) formLines(w int) []string {
	st := v.c.Styles
	sub := "  (runs the pipeline in this process)"
	if v.CanSend() {
		sub = "  ctrl+s: in this process · ctrl+p: to " + uikit.Clean(v.rawTopic())
	}
	title := st.Title.Render(" Record a test event")
	if !v.CanSend() && uikit.Width(title+sub) > w { // narrow: the short form, not a cut one
		sub = "  (in this process)"
	}
	if uikit.Width(title+sub) <= w { // narrow: the buttons below say where it goes
		title += st.Muted.Render(sub)
	}
	lines := []string{title, ""}
	for i := fType; i < fSubmit; i++ {
		lines = append(lines, v.fieldLine(i, w))
		if e := v.f.errs[i]; e != "" {
			lines = append(lines, strings.Repeat(" ", labelW+3)+st.Error.Render(uikit.Trunc("✗ "+uikit.Clean(e), w-labelW-3)))
		}
	}
	button := "[ record ]"
	if v.focus == fSubmit {
		button = st.Selected.Render(button)
	}
	lines = append(lines, "", strings.Repeat(" ", labelW+3)+button+st.Muted.Render("  ctrl+s"))
	if v.CanSend() {
		lines = append(lines, strings.Repeat(" ", labelW+3)+uikit.Trunc("[ send to "+uikit.Clean(v.rawTopic())+" ]"+st.Muted.Render("  ctrl+p"), max(4, w-labelW-3)))
	}
	if v.f.general != "" {
		lines = append(lines, " "+st.Error.Render(uikit.Trunc("✗ "+uikit.Clean(v.f.general), w-2)))
	}
	return lines
}

// focusLine is the form line of the focused field.
func (v *Model) focusLine() int {
	n := 2
	for i := fType; i < v.focus && i < fSubmit; i++ {
		n++
		if v.f.errs[i] != "" {
			n++
		}
	}
	if v.focus == fSubmit {
		n++
	}
	return n
}

func (v *Model) fieldLine(fid fieldID, w int) string {
	st := v.c.Styles
	label := uikit.Fit(fieldLabels[fid], labelW)
	mark := " "
	if v.focus == fid {
		label, mark = st.Accent.Render(label), st.Accent.Render("›")
	} else {
		label = st.Muted.Render(label)
	}
	room := max(4, w-labelW-3)
	var val string
	switch fid {
	case fType:
		val = "‹ " + model.EventTypes[v.f.typ] + " ›"
	case fSuccess:
		val = "‹ " + successChoices[v.f.success] + " ›"
	default:
		in := &v.f.inputs[fid]
		in.Placeholder = fieldHints[fid]
		val = in.View(st, room)
	}
	if fid == fType || fid == fSuccess {
		if v.focus == fid {
			val = st.Accent.Render(val)
		}
		if h := fieldHints[fid]; v.focus == fid {
			val += st.Subtle.Render("  " + h)
		}
	}
	return mark + label + "  " + uikit.Trunc(val, room)
}

// traceLines draws the live trace: each stage pending, running, done or
// failed, with its duration and error.
func (v *Model) traceLines(w int) []string {
	st := v.c.Styles
	if v.sending != nil {
		return v.hopLines(w)
	}
	lines := []string{st.Title.Render(" Stage trace"), ""}
	if v.live == nil {
		return append(lines, st.Muted.Render(uikit.Trunc(" ctrl+s records the event;", w)), st.Muted.Render(uikit.Trunc(" its stages show here live.", w)))
	}
	lines = append(lines, " "+uikit.Trunc(uikit.Clean(v.live.id), w-2))
	for i, s := range v.live.stages {
		glyph, style, dur := uikit.StageMark(st, s, v.c.Spin.View())
		lines = append(lines, fmt.Sprintf(" %s %s %s", style.Render(glyph), uikit.Fit(ingest.Stage(i).String(), 9), st.Muted.Render(uikit.FitRight(dur, 9))))
		if s.Err != nil {
			for _, l := range uikit.WrapText(uikit.ErrorText(s.Err), w-4) {
				lines = append(lines, "   "+st.Error.Render(l))
			}
		}
	}
	return append(lines, "", v.outcomeLine(w))
}

func (v *Model) outcomeLine(w int) string {
	st := v.c.Styles
	switch t := v.live.trace; {
	case v.live.running:
		return " " + st.Accent.Render(v.c.Spin.View()+" recording…")
	case v.live.err != nil:
		return " " + st.Error.Render(uikit.Trunc("✗ "+uikit.ErrorText(v.live.err), w-2))
	case t == nil:
		return ""
	case t.Outcome == ingest.OutcomeIngested || t.Outcome == ingest.OutcomeDuplicate:
		return " " + st.Success.Render(uikit.Trunc("✓ "+t.Outcome.String()+" in "+uikit.FormatDuration(t.Total), w-2)) +
			"\n" + st.Muted.Render(uikit.Trunc(" selected in the stream (esc)", w))
	}
	return " " + st.Error.Render(uikit.Trunc("✗ "+v.live.trace.Outcome.String(), w-2))
}

// hopLines draws the sent event's way through the deployment: each hop
// seen (with the time it took after the one before, and since the
// produce), awaited, or stuck.
func (v *Model) hopLines(w int) []string {
	st := v.c.Styles
	s := v.sending
	lines := []string{st.Title.Render(uikit.Trunc(" Deployment trace", w)), "", " " + uikit.Trunc(uikit.Clean(s.id), w-2)}
	next := s.next()
	for h := range uikit.NumHops {
		var glyph, step, total string
		style := st.Stage.Pending
		switch {
		case !s.at[h].IsZero():
			glyph, style = "✓", st.Stage.Done
			step, total = "+"+uikit.FormatDuration(s.at[h].Sub(s.before(h))), uikit.FormatDuration(s.at[h].Sub(s.start))
		case h == next && s.stuck:
			glyph, style, step = "✗", st.Stage.Failed, "stuck"
		case h == next && s.err == nil:
			glyph, style = v.c.Spin.View(), st.Stage.Running
		default:
			glyph = "·"
		}
		lines = append(lines, fmt.Sprintf(" %s %s %s %s", style.Render(glyph), uikit.Fit(h.String(), 9), st.Muted.Render(uikit.FitRight(step, 9)), st.Muted.Render(uikit.FitRight(total, 8))))
		if h == uikit.HopProduced && s.where != "" {
			lines = append(lines, st.Muted.Render("   "+uikit.Trunc(s.where, w-4)))
		}
	}
	return append(lines, append([]string{""}, v.sendOutcome(w)...)...)
}

func (v *Model) sendOutcome(w int) []string {
	st := v.c.Styles
	s := v.sending
	var text, spin string
	style := st.Error
	switch {
	case s.err != nil:
		text = "✗ not produced: " + uikit.ErrorText(s.err)
	case s.stuck:
		text = fmt.Sprintf("✗ stuck at %s after %s", s.next(), uikit.FormatDuration(s.after))
		if s.last != "" {
			text += ": " + s.last
		}
	case s.running():
		spin, text, style = v.c.Spin.View()+" ", "waiting for "+s.next().String()+"…", st.Accent
		if s.last != "" {
			text += " (" + s.last + ")"
		}
		text += fmt.Sprintf(" stuck after %s (ui.hop_timeout)", uikit.FormatDuration(v.c.Opts.HopTimeout))
	default:
		text, style = "✓ through the deployment in "+uikit.FormatDuration(s.at[uikit.NumHops-1].Sub(s.start)), st.Success
	}
	var out []string
	for i, l := range uikit.WrapText(text, max(10, w-4)) {
		if i == 0 && spin != "" {
			l = spin + l // styled already: not for WrapText, which cleans
		}
		out = append(out, " "+style.Render(l))
	}
	if !s.at[uikit.HopFound].IsZero() {
		out = append(out, st.Muted.Render(uikit.Trunc(" selected in the stream (esc)", w)))
	}
	if s.stuck {
		hint := "a slower deployment: more ui.hop_timeout (--hop-timeout)"
		if h := v.stuckHint(); h != "" {
			hint = h + "; " + hint
		}
		for _, l := range uikit.WrapText(hint, max(10, w-4)) {
			out = append(out, " "+st.Muted.Render(l))
		}
	}
	return out
}

// stuckHint is what a hop that never came suggests.
func (v *Model) stuckHint() string {
	switch v.sending.next() {
	case uikit.HopEnriched, uikit.HopIndexed:
		return "is a worker consuming the raw topic? (Topics view: its group's lag)"
	case uikit.HopFound:
		return "the notifications came but this inspector's index does not have it: is it the deployment's index?"
	case uikit.HopArchived:
		return "the index has it but its archive object cannot be read here"
	}
	return ""
}
