package record

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

// Update edits the form; ctrl+s (or enter on the button) records.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		v.edit(msg)
	case tea.KeyPressMsg:
		return v.onKey(msg)
	case uikit.PipeMsg:
		v.onStage(msg)
	case hopBatch:
		return tea.Batch(v.onHop(msg.hopMsg), msg.next)
	case foundMsg:
		return v.onFound(msg)
	case archivedMsg:
		return v.onArchived(msg)
	case HopTickMsg:
		return v.onHopTick(msg)
	}
	return nil
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	switch {
	case key.Matches(msg, km.Submit), msg.String() == "enter" && v.focus == fSubmit:
		return v.submit()
	case key.Matches(msg, km.Send):
		return v.send()
	case key.Matches(msg, km.Reset):
		v.reset()
		return uikit.StatusCmd("the form and its trace are cleared", false)
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

func (v *Model) edit(msg tea.Msg) {
	if v.focus == fType || v.focus == fSuccess || v.focus == fSubmit {
		return
	}
	if v.f.inputs[v.focus].Update(msg) {
		v.touch()
	}
}

// touch revalidates as the user types, showing the touched fields' errors.
func (v *Model) touch() {
	v.f.touched[v.focus] = true
	v.f.validate(false)
}

// reset empties the form (R keeps the last values, to record variations).
// reset clears the form and the trace beside it: a send still following
// its hops is stopped, a recording still running is no longer drawn.
func (v *Model) reset() {
	if v.sending != nil && v.sending.cancel != nil {
		v.sending.cancel()
	}
	v.f, v.copyOf, v.again, v.sent, v.live, v.sending = newForm(), "", false, "", nil, nil
	v.setFocus(fSession)
}

// submit validates everything and, when the event is good, runs it through
// the pipeline in this process.
func (v *Model) submit() tea.Cmd {
	if v.Busy() {
		return uikit.StatusCmd("an event is being recorded", false)
	}
	ev, cmd := v.checked()
	if ev == nil {
		return cmd
	}
	if v.sending != nil {
		v.sending.cancel()
		v.sending = nil
	}
	v.runs++
	v.live = &liveTrace{id: ev.EventID, running: true, start: v.c.Deps.Now()}
	for i := range v.live.stages {
		v.live.stages[i].Stage = ingest.Stage(i)
	}
	return recordCmd(v.c.Ctx, v.c.Deps.Recorder, ev, v.ch, recordRun(v.runs))
}

// checked validates every field and builds the event to record or send;
// without one, cmd says why (a field not valid, the same values again).
func (v *Model) checked() (ev *model.Event, cmd tea.Cmd) {
	if _, ok := v.f.validate(true); !ok {
		for i := range v.f.errs {
			if v.f.errs[i] != "" {
				v.setFocus(fieldID(i))
				break
			}
		}
		return nil, uikit.StatusCmd("the event is not valid: see the fields marked ✗", true)
	}
	if same := v.f.sameAs(v.sent); same && !v.again {
		v.again = true // a second ctrl+s is deliberate
		return nil, uikit.StatusCmd("already recorded as "+uikit.Clean(v.Recording())+": the same key again makes another copy, ctrl+r clears the form", false)
	}
	v.again, v.sent = false, v.f.values()
	ev, _ = v.f.event(v.c.Deps.NewID(), v.c.Deps.Now())
	return ev, nil
}

// recordRun numbers the form's pipelines apart from the followers'.
func recordRun(n uint64) uint64 { return 1<<31 | n }

// onStage draws a stage of the form's event as it starts and ends.
func (v *Model) onStage(msg uikit.PipeMsg) {
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

// Recorded ends the live trace of the form's event; it reports whether the
// event is in the index. Of another event, it reports false.
func (v *Model) Recorded(msg DoneMsg) bool {
	if v.live == nil || msg.ID != v.live.id {
		return false
	}
	v.live.running = false
	v.live.err = msg.Err
	if msg.Trace != nil {
		v.live.trace, v.live.stages = msg.Trace, msg.Trace.Stages
	}
	t := v.live.trace
	return msg.Err == nil && t != nil && (t.Outcome == ingest.OutcomeIngested || t.Outcome == ingest.OutcomeDuplicate)
}

// DoneMsg says the form's event went through the pipeline (the root hands it
// to Recorded, and selects the event in the stream when it is in).
type DoneMsg struct {
	ID    string
	Trace *ingest.Trace
	Err   error
}

// recordCmd runs ev through the pipeline, its stages reported to ch.
func recordCmd(ctx context.Context, rec uikit.Recorder, ev *model.Event, ch chan<- tea.Msg, run uint64) tea.Cmd {
	return func() tea.Msg {
		t, err := rec.Record(ctx, ev, uikit.Observer{Ctx: ctx, Ch: ch, Run: run, Record: true})
		return DoneMsg{ID: ev.EventID, Trace: t, Err: err}
	}
}
