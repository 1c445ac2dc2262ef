// Package record is the inspector's Record view: a form for a test event,
// built and checked as an ingested line is, and the live stage trace of
// its ingestion by the pipeline in this process.
package record

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/ingest"
	"engram/model"
	"engram/ui/uikit"
)

// Model is the Record view.
type Model struct {
	c     *uikit.Common
	f     *form
	focus fieldID
	top   int // first form line drawn
	w, h  int
	live  *liveTrace
	// sending is the event last sent to the raw topic (ctrl+p); live or
	// sending is set, not both: the trace beside the form is the last's.
	sending *sent
	runs    uint64 // numbers the pipelines this view starts (see chanObserver)
	// copyOf is the event a duplicate holds only the index's part of,
	// while its archived event is on its way.
	copyOf string
	sent   string // the form's values last recorded (form.values)
	again  bool   // ctrl+s on those same values was pressed once: record
	ch     chan<- tea.Msg
}

// New is an empty form; its pipelines report their stages to ch.
func New(c *uikit.Common, ch chan<- tea.Msg) *Model {
	v := &Model{c: c, f: newForm(), focus: fSession, ch: ch}
	v.f.inputs[v.focus].Focus()
	return v
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the form the area it is drawn in.
func (v *Model) SetSize(w, h int) { v.w, v.h = w, h }

// traceW is the width of the stage trace beside the form.
func (v *Model) traceW() int {
	if v.w >= 100 {
		return v.w * 2 / 5
	}
	return min(34, v.w/2)
}

// Busy reports whether an event is being recorded.
func (v *Model) Busy() bool {
	return v.live != nil && v.live.running || v.sending != nil && v.sending.running()
}

// Duplicate opens the form on a copy of an event: the archived one when
// archived (its JSON) decodes, else what the index document holds until
// CopyArchived brings the rest. It reports whether the copy is whole.
func (v *Model) Duplicate(d *model.IndexDoc, archived []byte) bool {
	v.copyOf = ""
	if full, err := model.Decode(archived, model.DecodeOptions{}); archived != nil && err == nil {
		v.fill(full)
		return true
	}
	v.fill(eventFromDoc(d))
	v.copyOf = d.EventID
	return false
}

// CopyArchived fills the form from the archived event of the copy it was
// opened on, unless the user has started editing; it reports whether it did.
func (v *Model) CopyArchived(id string, archived []byte) bool {
	if id == "" || id != v.copyOf || v.f.touched != [numFields]bool{} {
		return false
	}
	full, err := model.Decode(archived, model.DecodeOptions{})
	if err != nil {
		return false
	}
	v.copyOf = ""
	v.fill(full)
	return true
}

// fill opens the form on ev.
func (v *Model) fill(ev *model.Event) {
	v.f.fill(ev)
	v.setFocus(fText)
	v.f.validate(false)
}

func (v *Model) setFocus(fid fieldID) {
	v.f.inputs[v.focus].Blur()
	v.focus = (fid + numFields) % numFields
	v.f.inputs[v.focus].Focus()
}

// FocusedField is the label of the field the keys edit ("" for the button).
func (v *Model) FocusedField() string { return fieldLabels[v.focus] }

// Value is what a field holds, by its label: the chosen name for the type
// and for success.
func (v *Model) Value(label string) string {
	for fid, l := range fieldLabels {
		switch {
		case l != label || fieldID(fid) == fSubmit:
		case fieldID(fid) == fType:
			return model.EventTypes[v.f.typ]
		case fieldID(fid) == fSuccess:
			return successChoices[v.f.success]
		default:
			return v.f.inputs[fid].Value()
		}
	}
	return ""
}

// Recording is the id of the event last submitted ("" before any).
func (v *Model) Recording() string {
	switch {
	case v.sending != nil:
		return v.sending.id
	case v.live != nil:
		return v.live.id
	}
	return ""
}

// liveTrace is the record form's event going through the stages.
type liveTrace struct {
	id      string
	stages  [ingest.NumStages]ingest.StageRecord
	start   time.Time
	running bool
	trace   *ingest.Trace
	err     error
}
