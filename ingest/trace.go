package ingest

import (
	"fmt"
	"strings"
	"time"

	"engram/model"
)

// Stage is one step of the pipeline, in the order they run.
type Stage int

// The pipeline's stages.
const (
	StageReceive Stage = iota
	StageValidate
	StageEmbed
	StageScore
	StageKey
	StageArchive
	StageIndex
	StagePublish
	NumStages
)

var stageNames = [...]string{"receive", "validate", "embed", "score", "key", "archive", "index", "publish"}

func (s Stage) String() string { return stageNames[s] }

// Status is where a stage stands.
type Status int

// Stage statuses.
const (
	StatusPending Status = iota
	StatusRunning
	StatusDone
	StatusFailed
	StatusSkipped
)

var statusNames = [...]string{"pending", "running", "done", "failed", "skipped"}

func (s Status) String() string { return statusNames[s] }

// Source says where an input came from, for error messages (FILE:LINE).
type Source struct {
	File string
	Line int
}

func (s Source) String() string {
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// StageRecord is one stage of one event's trace.
type StageRecord struct {
	Stage    Stage
	Status   Status
	Start    time.Time
	Duration time.Duration
	Err      error
	Note     string // e.g. "duplicate", "already indexed"
	// Retries are the transient failures the stage waited out, in order
	// (tracing shows each as a span event).
	Retries []Outage
}

// StageEvent reports a stage starting or ending, while the pipeline runs.
type StageEvent struct {
	Seq     uint64
	Src     Source
	EventID string
	StageRecord
}

// Outcome is how an input ended.
type Outcome int

// Outcomes.
const (
	OutcomeIngested Outcome = iota
	OutcomeDuplicate
	OutcomeRejected
	OutcomeFailed
	OutcomeCanceled
	OutcomeValid // --dry-run: valid, nothing written
)

var outcomeNames = [...]string{"ingested", "duplicate", "rejected", "failed", "not ingested (canceled)", "valid"}

func (o Outcome) String() string { return outcomeNames[o] }

// Trace is the finished record of one input through the pipeline: a value
// that can be rendered and kept.
type Trace struct {
	Seq      uint64
	Src      Source
	EventID  string
	Key      string
	Type     string
	Stages   [NumStages]StageRecord
	Outcome  Outcome
	Err      error
	Problems model.Problems // why it was rejected, each with its JSON path
	Input    []byte         // the raw input, kept only when rejected
	Start    time.Time
	Total    time.Duration
	Ref      any // the Item's Ref

	// What telemetry reports beyond the stages, set as the pipeline learns
	// it: the ingestion's trace context (from receive on), the event's
	// session, its importance score and embedding length (once scored and
	// embedded) and the index it went into (once indexed).
	Span      SpanContext
	SessionID string
	Score     float64
	Dim       int
	IndexName string
}

// Slowest is the stage that took longest.
func (t *Trace) Slowest() Stage {
	best := StageReceive
	for i, r := range t.Stages {
		if r.Duration > t.Stages[best].Duration {
			best = Stage(i)
		}
	}
	return best
}

// Render is a one-line human form: the outcome, then each stage that ran
// with its duration.
func (t *Trace) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s:", t.Src, model.Quote(t.EventID), t.Outcome)
	for _, r := range t.Stages {
		if r.Status == StatusPending || r.Status == StatusSkipped {
			continue
		}
		fmt.Fprintf(&b, " %s=%s", r.Stage, FormatDuration(r.Duration))
		if r.Status == StatusFailed {
			b.WriteString("(failed)")
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "(%s)", r.Note)
		}
	}
	fmt.Fprintf(&b, " total=%s", FormatDuration(t.Total))
	if t.Err != nil {
		fmt.Fprintf(&b, " error: %v", t.Err)
	}
	return b.String()
}

// FormatDuration shows a stage duration compactly: µs, ms with one decimal, or
// rounded seconds.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

// Observer is told about stages while they run and about each finished
// trace. The pipeline calls it from several goroutines.
type Observer interface {
	Stage(StageEvent)
	Done(*Trace)
}
