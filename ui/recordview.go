package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

// recordView is the form for a test event and the live stage trace of its
// ingestion.
type recordView struct {
	c     *uikit.Common
	f     *form
	focus fieldID
	top   int // first form line drawn
	w, h  int
	live  *liveTrace
	runs  uint64 // numbers the pipelines this view starts (see chanObserver)
	ch    chan<- tea.Msg
}

func newRecordView(c *uikit.Common, ch chan<- tea.Msg) *recordView {
	v := &recordView{c: c, f: newForm(), focus: fSession, ch: ch}
	v.f.inputs[v.focus].Focus()
	return v
}

// Size is the area SetSize gave.
func (v *recordView) Size() (w, h int) { return v.w, v.h }

func (v *recordView) SetSize(w, h int) { v.w, v.h = w, h }

// traceW is the width of the stage trace beside the form.
func (v *recordView) traceW() int {
	if v.w >= 100 {
		return v.w * 2 / 5
	}
	return min(34, v.w/2)
}

func (v *recordView) busy() bool { return v.live != nil && v.live.running }

// fill opens the form on a copy of an event.
func (v *recordView) fill(ev *model.Event) {
	v.f.fill(ev)
	v.setFocus(fText)
	v.f.validate(false)
}

func (v *recordView) setFocus(fid fieldID) {
	v.f.inputs[v.focus].Blur()
	v.focus = (fid + numFields) % numFields
	v.f.inputs[v.focus].Focus()
}

// Update edits the form; ctrl+s (or enter on the button) records.
func (v *recordView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		v.edit(msg)
	case tea.KeyPressMsg:
		return v.onKey(msg)
	case uikit.PipeMsg:
		v.onStage(msg)
	}
	return nil
}

func (v *recordView) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Submit), msg.String() == "enter" && v.focus == fSubmit:
		return v.submit()
	case msg.String() == "enter":
		v.setFocus(v.focus + 1)
	case key.Matches(msg, km.NextField):
		v.setFocus(v.focus + 1)
	case key.Matches(msg, km.PrevField):
		v.setFocus(v.focus - 1)
	case v.focus == fType && key.Matches(msg, km.Choice):
		v.f.typ = cycle(v.f.typ, len(model.EventTypes), msg.String() == "right")
		v.touch()
	case v.focus == fSuccess && key.Matches(msg, km.Choice):
		v.f.success = cycle(v.f.success, len(successChoices), msg.String() == "right")
		v.touch()
	default:
		v.edit(msg)
	}
	return nil
}

func cycle(i, n int, fwd bool) int {
	if fwd {
		return (i + 1) % n
	}
	return (i + n - 1) % n
}

func (v *recordView) edit(msg tea.Msg) {
	if v.focus == fType || v.focus == fSuccess || v.focus == fSubmit {
		return
	}
	if v.f.inputs[v.focus].Update(msg) {
		v.touch()
	}
}

// touch revalidates as the user types, showing the touched fields' errors.
func (v *recordView) touch() {
	v.f.touched[v.focus] = true
	v.f.validate(false)
}

// submit validates everything and, when the event is good, runs it through
// the pipeline in this process.
func (v *recordView) submit() tea.Cmd {
	if v.busy() {
		return uikit.StatusCmd("an event is being recorded", false)
	}
	if _, ok := v.f.validate(true); !ok {
		for i := range v.f.errs {
			if v.f.errs[i] != "" {
				v.setFocus(fieldID(i))
				break
			}
		}
		return uikit.StatusCmd("the event is not valid: see the fields marked ✗", true)
	}
	id := v.c.Deps.NewID()
	ev, _ := v.f.event(id, v.c.Deps.Now())
	v.runs++
	v.live = &liveTrace{id: id, running: true, start: v.c.Deps.Now()}
	for i := range v.live.stages {
		v.live.stages[i].Stage = ingest.Stage(i)
	}
	return recordCmd(v.c.Ctx, v.c.Deps.Recorder, ev, v.ch, recordRun(v.runs))
}

// recordRun numbers the form's pipelines apart from the followers'.
func recordRun(n uint64) uint64 { return 1<<31 | n }

// onStage draws a stage of the form's event as it starts and ends.
func (v *recordView) onStage(msg uikit.PipeMsg) {
	if v.live == nil || msg.Run != recordRun(v.runs) {
		return
	}
	if msg.Stage != nil {
		v.live.stages[msg.Stage.Stage] = msg.Stage.StageRecord
	}
	if msg.Trace != nil {
		v.live.stages, v.live.trace = msg.Trace.Stages, msg.Trace
		v.live.start = msg.Trace.Start
	}
}

// onRecorded ends the live trace; it reports whether the event is in.
func (v *recordView) onRecorded(msg recordedMsg) bool {
	if v.live == nil || msg.id != v.live.id {
		return false
	}
	v.live.running = false
	v.live.err = msg.err
	if msg.trace != nil {
		v.live.trace, v.live.stages = msg.trace, msg.trace.Stages
	}
	t := v.live.trace
	return msg.err == nil && t != nil && (t.Outcome == ingest.OutcomeIngested || t.Outcome == ingest.OutcomeDuplicate)
}

// View draws the form and, beside it, the stage trace.
func (v *recordView) View() string {
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

// ShortHelp: the form's keys.
func (v *recordView) ShortHelp() []key.Binding {
	km := v.c.Keys
	bs := []key.Binding{km.NextField, km.PrevField, km.Submit}
	if v.focus == fType || v.focus == fSuccess {
		bs = append(bs, km.Choice)
	}
	if v.focus < fSubmit && v.f.inputs[v.focus].Multiline {
		bs = append(bs, km.LineBreak)
	}
	return append(bs, km.Back)
}

// FullHelp: every key of the form.
func (v *recordView) FullHelp() [][]key.Binding {
	km := v.c.Keys
	return [][]key.Binding{{km.NextField, km.PrevField, km.Choice, km.LineBreak, km.Submit, km.Back}}
}

// labelW is the width of the labels column.
const labelW = 12

func (v *recordView) formLines(w int) []string {
	st := v.c.Styles
	lines := []string{st.Title.Render(" Record a test event") + st.Muted.Render("  (runs the pipeline in this process)"), ""}
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
	if v.f.general != "" {
		lines = append(lines, " "+st.Error.Render(uikit.Trunc("✗ "+uikit.Clean(v.f.general), w-2)))
	}
	return lines
}

// focusLine is the form line of the focused field.
func (v *recordView) focusLine() int {
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

func (v *recordView) fieldLine(fid fieldID, w int) string {
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
func (v *recordView) traceLines(w int) []string {
	st := v.c.Styles
	lines := []string{st.Title.Render(" Stage trace"), ""}
	if v.live == nil {
		return append(lines, st.Muted.Render(uikit.Trunc(" ctrl+s records the event;", w)), st.Muted.Render(uikit.Trunc(" its stages show here live.", w)))
	}
	lines = append(lines, " "+uikit.Trunc(uikit.Clean(v.live.id), w-2))
	for i, s := range v.live.stages {
		glyph, style := "·", st.Stage.Pending
		switch s.Status {
		case ingest.StatusRunning:
			glyph, style = v.c.Spin.View(), st.Stage.Running
		case ingest.StatusDone:
			glyph, style = "✓", st.Stage.Done
		case ingest.StatusFailed:
			glyph, style = "✗", st.Stage.Failed
		case ingest.StatusSkipped:
			glyph, style = "–", st.Stage.Skipped
		}
		dur := ""
		if s.Status == ingest.StatusDone || s.Status == ingest.StatusFailed {
			dur = uikit.FormatDuration(s.Duration)
		}
		lines = append(lines, fmt.Sprintf(" %s %s %s", style.Render(glyph), uikit.Fit(ingest.Stage(i).String(), 9), st.Muted.Render(uikit.FitRight(dur, 9))))
		if s.Err != nil {
			for _, l := range uikit.WrapText(uikit.ErrorText(s.Err), w-4) {
				lines = append(lines, "   "+st.Error.Render(l))
			}
		}
	}
	return append(lines, "", v.outcomeLine(w))
}

func (v *recordView) outcomeLine(w int) string {
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
