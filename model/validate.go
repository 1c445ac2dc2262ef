package model

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on one event. They keep a hostile input from exhausting memory or
// the index; docs/commands.md (Limits) states them.
const (
	maxEventIDLen = 200
	// maxEventIDBytes keeps <eventId>.json, the last part of the archive
	// key, within the 255 bytes a file name (and most stores' key part)
	// may hold, so the limit is met at validation, not at the archive.
	maxEventIDBytes = 255 - len(".json")
	maxTags         = 1000
	maxTagLen       = 256
)

// CheckEventID says whether id is usable as a document id and as the last
// part of an object key.
func CheckEventID(id string) error {
	n := utf8.RuneCountInString(id)
	switch {
	case n == 0:
		return fmt.Errorf("required")
	case n > maxEventIDLen:
		return fmt.Errorf("%d characters, at most %d allowed", n, maxEventIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("not valid UTF-8")
	case len(id) > maxEventIDBytes:
		return fmt.Errorf("%d bytes in UTF-8, at most %d allowed (<eventId>.json is a file name, at most 255 bytes)", len(id), maxEventIDBytes)
	case strings.ContainsAny(id, `/\`):
		return fmt.Errorf("%s must not contain / or \\ (it is the last part of an object key)", Quote(id))
	case strings.Contains(id, ".."):
		return fmt.Errorf("%s must not contain \"..\"", Quote(id))
	case strings.HasPrefix(id, "."):
		return fmt.Errorf("%s must not start with a dot", Quote(id))
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return fmt.Errorf("%s must not contain control characters", Quote(id))
		}
	}
	return nil
}

// Validate reports every problem of e at once, each with its JSON path.
func (e *Event) Validate() Problems {
	var ps Problems
	if err := CheckEventID(e.EventID); err != nil {
		ps.add("eventId", err.Error())
	}
	if e.Timestamp == "" {
		ps.add("timestamp", "required")
	} else if _, err := ParseTimestamp(e.Timestamp); err != nil {
		ps.add("timestamp", err.Error())
	}
	e.validateType(&ps)
	e.validateContext(&ps)
	e.validateInput(&ps)
	e.validateBlocks(&ps)
	e.validateShapes(&ps)
	unit(&ps, "importanceScore", e.ImportanceScore)
	e.validateTags(&ps)
	return ps
}

func (e *Event) validateType(ps *Problems) {
	if e.Type == "" {
		ps.add("type", "required")
		return
	}
	for _, t := range EventTypes {
		if e.Type == t {
			return
		}
	}
	ps.add("type", fmt.Sprintf("%s is not one of %s", Quote(e.Type), strings.Join(EventTypes, ", ")))
}

func (e *Event) validateContext(ps *Problems) {
	if !e.present.context {
		ps.add("context", "required")
		return
	}
	if e.Context.SessionID == "" {
		ps.add("context.sessionId", "required")
	}
}

func (e *Event) validateInput(ps *Problems) {
	if !e.present.input {
		ps.add("input", "required")
		return
	}
	if strings.TrimSpace(e.Input.Text) == "" {
		ps.add("input.text", "required")
	}
	objectOrAbsent(ps, "input.structured", e.Input.Structured)
	for i, v := range e.Input.Embedding {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			ps.add(fmt.Sprintf("input.embedding[%d]", i), "not a finite number")
		}
	}
}

func (e *Event) validateBlocks(ps *Problems) {
	if s := e.InternalState; s != nil {
		if !e.present.confidence {
			ps.add("internalState.confidence", "required when internalState is present")
		} else {
			unit(ps, "internalState.confidence", s.Confidence)
		}
		for k, v := range s.EmotionalVector {
			finite(ps, "internalState.emotionalVector."+k, v)
		}
	}
	if e.Action != nil {
		objectOrAbsent(ps, "action.parameters", e.Action.Parameters)
	}
	if r := e.Result; r != nil {
		if !e.present.output && !set(r.Content) {
			ps.add("result.output", "required when result is present")
		}
		if r.LatencyMs != nil {
			if finite(ps, "result.latencyMs", *r.LatencyMs) && *r.LatencyMs < 0 {
				ps.add("result.latencyMs", fmt.Sprintf("%v is negative", *r.LatencyMs))
			}
		}
	}
	if ev := e.Evaluation; ev != nil {
		if !e.present.reward {
			ps.add("evaluation.rewardScore", "required when evaluation is present")
		} else {
			unit(ps, "evaluation.rewardScore", ev.RewardScore)
		}
		if !e.present.quality {
			ps.add("evaluation.selfAssessedQuality", "required when evaluation is present")
		} else {
			unit(ps, "evaluation.selfAssessedQuality", ev.SelfAssessedQuality)
		}
		switch ev.UserFeedback {
		case "", "positive", "negative", "neutral":
		default:
			ps.add("evaluation.userFeedback", Quote(ev.UserFeedback)+" is not one of positive, negative, neutral")
		}
	}
}

func (e *Event) validateTags(ps *Problems) {
	if len(e.Tags) > maxTags {
		ps.add("tags", fmt.Sprintf("%d tags, at most %d allowed", len(e.Tags), maxTags))
		return
	}
	for i, t := range e.Tags {
		if t == "" {
			ps.add(fmt.Sprintf("tags[%d]", i), "empty tag")
		} else if n := utf8.RuneCountInString(t); n > maxTagLen {
			ps.add(fmt.Sprintf("tags[%d]", i), fmt.Sprintf("%d characters, at most %d allowed", n, maxTagLen))
		}
	}
}

func finite(ps *Problems, path string, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		ps.add(path, "not a finite number")
		return false
	}
	return true
}

func unit(ps *Problems, path string, v float64) {
	if finite(ps, path, v) && (v < 0 || v > 1) {
		ps.add(path, fmt.Sprintf("%v is outside [0, 1]", v))
	}
}

// Quote renders s for an error message, escaping anything that could act on
// a terminal and cutting it to a readable length.
func Quote(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		s = Summary(s, max) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func objectOrAbsent(ps *Problems, path string, raw []byte) {
	if len(raw) > 0 && raw[0] != '{' && string(raw) != "null" {
		ps.add(path, "expected an object")
	}
}
