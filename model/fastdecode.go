package model

import (
	"bytes"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeFast decodes the common, well-formed event in the native shape in
// one pass with encoding/json/v2, whose defaults are the rules Decode
// enforces by hand (3.3 µs an event against 10.5, BenchmarkDecode). It
// returns nil for anything else, so that Decode's own path decides every
// problem (FuzzDecodeFast holds the two alike).
func decodeFast(data []byte) *Event {
	e := &Event{}
	if jsonv2.Unmarshal(data, e) != nil {
		return nil
	}
	pr, known := e.presenceOf(data)
	if !known {
		var p probe
		if jsonv2.Unmarshal(data, &p) != nil {
			return nil
		}
		if caseHubShape(p.Input != nil, bool(p.Description || p.Kind || p.CaseID)) {
			return nil
		}
		pr = p.presence()
	}
	e.present = pr
	e.raw = bytes.Clone(data)
	return e
}

// presenceOf tells presence without the probe's second pass (2 µs an
// event): top-level members from a scan of data, nested ones from the
// decoded values. known is false where a zero value may have been given or
// left out, where a member name has an escape, or where the CaseHub shape is
// possible: the probe must say then.
func (e *Event) presenceOf(data []byte) (p presence, known bool) {
	var top topMembers
	if !top.scan(data) || caseHubShape(top.input, top.caseHub) {
		return p, false
	}
	p.context, p.input, p.importance, p.tags = top.context, top.input, top.importance, top.tags
	known = true
	nonZero := func(given bool) bool {
		known = known && given
		return given
	}
	in := e.Input
	if top.input {
		p.text = nonZero(in.Text != "")
		p.embedding = in.Embedding != nil
	}
	if s := e.InternalState; s != nil {
		p.confidence = nonZero(s.Confidence != 0)
	}
	if r := e.Result; r != nil {
		p.output = nonZero(r.Output != "")
	}
	if v := e.Evaluation; v != nil {
		p.reward = nonZero(v.RewardScore != 0)
		p.quality = nonZero(v.SelfAssessedQuality != 0)
	}
	return p, known
}

// topMembers notes which top-level members presence and the CaseHub test
// read are given (not null).
type topMembers struct {
	context, input, importance, tags, caseHub bool
}

// scan reads the member names of the valid JSON object data; false when a
// name has an escape.
func (t *topMembers) scan(data []byte) bool {
	plain := true
	_ = eachMember(data, func(quoted, value []byte) bool {
		name := quoted[1 : len(quoted)-1]
		if plain = bytes.IndexByte(name, '\\') < 0; !plain {
			return false
		}
		given := value[0] != 'n'
		switch string(name) {
		case "context":
			t.context = given
		case "input":
			t.input = given
		case "importanceScore":
			t.importance = given
		case "tags":
			t.tags = given
		case "description", "kind", "caseId":
			t.caseHub = t.caseHub || given
		}
		return true
	})
	return plain
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
