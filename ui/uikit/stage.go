package uikit

import (
	"charm.land/lipgloss/v2"

	"engram/ingest"
)

// StageMark is how a pipeline stage's state is drawn: its glyph (running
// is the one given: the record form's spinner, the waterfall's ▶), its
// style, and its duration once it ended.
func StageMark(st *Styles, s ingest.StageRecord, running string) (glyph string, style lipgloss.Style, dur string) {
	glyph, style = "·", st.Stage.Pending
	switch s.Status {
	case ingest.StatusRunning:
		glyph, style = running, st.Stage.Running
	case ingest.StatusDone:
		glyph, style = "✓", st.Stage.Done
	case ingest.StatusFailed:
		glyph, style = "✗", st.Stage.Failed
	case ingest.StatusSkipped:
		glyph, style = "–", st.Stage.Skipped
	}
	if s.Status == ingest.StatusDone || s.Status == ingest.StatusFailed {
		dur = FormatDuration(s.Duration)
	}
	return glyph, style, dur
}
