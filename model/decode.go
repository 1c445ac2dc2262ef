package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// DecodeOptions supplies what decoding may need from outside: the CaseHub
// shape can lack an id and a timestamp, and model does no I/O of its own.
type DecodeOptions struct {
	Now   func() time.Time
	NewID func() string
}

// wire records which members were present, where "absent" and "zero" differ.
type wire struct {
	Context         json.RawMessage `json:"context"`
	ImportanceScore json.RawMessage `json:"importanceScore"`
	Tags            json.RawMessage `json:"tags"`
	Input           *struct {
		Text      json.RawMessage `json:"text"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"input"`
	InternalState *struct {
		Confidence json.RawMessage `json:"confidence"`
	} `json:"internalState"`
	Result *struct {
		Output json.RawMessage `json:"output"`
	} `json:"result"`
	Evaluation *struct {
		RewardScore         json.RawMessage `json:"rewardScore"`
		SelfAssessedQuality json.RawMessage `json:"selfAssessedQuality"`
	} `json:"evaluation"`
	// CaseHub members (schema.md section 7).
	Description json.RawMessage `json:"description"`
}

func set(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }

// Decode parses one JSON object as an experience event, accepting the
// CaseHub shape too. It does not validate; call Validate on the result.
// data is copied, so the caller may reuse its buffer.
func Decode(data []byte, opt DecodeOptions) (*Event, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, Problems{{"", "expected a JSON object"}}
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, jsonProblem(err)
	}
	if set(w.Description) && w.Input == nil {
		return decodeCaseHub(data, opt)
	}
	e := &Event{}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, jsonProblem(err)
	}
	e.raw = bytes.Clone(data)
	e.present = presence{
		context:    set(w.Context),
		input:      w.Input != nil,
		importance: set(w.ImportanceScore),
		tags:       set(w.Tags),
	}
	if w.Input != nil {
		e.present.text = set(w.Input.Text)
		e.present.embedding = set(w.Input.Embedding)
	}
	if w.InternalState != nil {
		e.present.confidence = set(w.InternalState.Confidence)
	}
	if w.Result != nil {
		e.present.output = set(w.Result.Output)
	}
	if w.Evaluation != nil {
		e.present.reward = set(w.Evaluation.RewardScore)
		e.present.quality = set(w.Evaluation.SelfAssessedQuality)
	}
	return e, nil
}

// jsonProblem turns encoding/json's errors into a located Problem.
func jsonProblem(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return Problems{{"", fmt.Sprintf("invalid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))}}
	case errors.As(err, &typ):
		path := typ.Field
		if strings.HasPrefix(typ.Value, "number ") && (typ.Type.Kind() == reflect.Float64 || typ.Type.Kind() == reflect.Float32) {
			return Problems{{path, strings.TrimPrefix(typ.Value, "number ") + " is not a finite number"}}
		}
		return Problems{{path, fmt.Sprintf("expected %s, got %s", jsonKind(typ.Type.String()), typ.Value)}}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.Contains(msg, "exceeded max depth") {
		msg = "nested too deeply"
	}
	return Problems{{"", msg}}
}

// jsonKind names a Go type the way a JSON author would.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "model."), strings.HasPrefix(goType, "*model."),
		goType == "json.RawMessage":
		return "an object"
	case goType == "string":
		return "a string"
	case goType == "bool", goType == "*bool":
		return "a boolean"
	}
	return "a number"
}
