package model

import (
	"bytes"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeFast decodes the common event, well formed and in the native
// shape, with encoding/json/v2 (the go-json-experiment mirror): its
// defaults are the rules Decode enforces by hand around encoding/json —
// member names matched exactly, a name given twice refused — and it decodes
// in one pass what took encoding/json two plus exactMembers' scan (11 µs an
// event against 4.5, BenchmarkDecode). It returns nil whenever the event
// is not that simple case: a syntax or type problem, a name given twice
// (known or not), text that is not UTF-8, or the CaseHub shape. Decode's
// own path then decides, so what an event decodes to, and every problem it
// is told, stay exactly what that path gives (FuzzDecodeFast holds the two
// to it).
func decodeFast(data []byte) *Event {
	e := &Event{}
	if jsonv2.Unmarshal(data, e) != nil {
		return nil
	}
	var p probe
	if jsonv2.Unmarshal(data, &p) != nil {
		return nil
	}
	if p.Input == nil && (p.Description || p.Kind || p.CaseID) {
		return nil
	}
	e.present = p.presence()
	e.raw = bytes.Clone(data)
	return e
}

// given is true for a member whose value is not null: where Validate and
// the importance prior tell "absent" from "zero", null counts as absent.
type given bool

func (g *given) UnmarshalJSONFrom(d *jsontext.Decoder) error {
	*g = d.PeekKind() != 'n'
	return d.SkipValue()
}

// probe notes which of the members presence records are given; a block
// given as null stays nil.
type probe struct {
	Context         given `json:"context"`
	ImportanceScore given `json:"importanceScore"`
	Tags            given `json:"tags"`
	Input           *struct {
		Text      given `json:"text"`
		Embedding given `json:"embedding"`
	} `json:"input"`
	InternalState *struct {
		Confidence given `json:"confidence"`
	} `json:"internalState"`
	Result *struct {
		Output given `json:"output"`
	} `json:"result"`
	Evaluation *struct {
		RewardScore         given `json:"rewardScore"`
		SelfAssessedQuality given `json:"selfAssessedQuality"`
	} `json:"evaluation"`
	// Members only the CaseHub shape has.
	Description given `json:"description"`
	Kind        given `json:"kind"`
	CaseID      given `json:"caseId"`
}

func (p *probe) presence() presence {
	pr := presence{
		context:    bool(p.Context),
		input:      p.Input != nil,
		importance: bool(p.ImportanceScore),
		tags:       bool(p.Tags),
	}
	if p.Input != nil {
		pr.text, pr.embedding = bool(p.Input.Text), bool(p.Input.Embedding)
	}
	if p.InternalState != nil {
		pr.confidence = bool(p.InternalState.Confidence)
	}
	if p.Result != nil {
		pr.output = bool(p.Result.Output)
	}
	if p.Evaluation != nil {
		pr.reward = bool(p.Evaluation.RewardScore)
		pr.quality = bool(p.Evaluation.SelfAssessedQuality)
	}
	return pr
}
