package record

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"engram/model"
	"engram/ui/widget/textinput"
)

// fieldID names the record form's fields, in the order they are shown.
type fieldID int

const (
	fType fieldID = iota
	fSession
	fTurn
	fAgent
	fTenant
	fText
	fTool
	fReasoning
	fOutput
	fSuccess
	fLatency
	fErrCode
	fReward
	fConfidence
	fTags
	fTrace
	fSubmit
	numFields
)

var fieldLabels = [numFields]string{
	"type", "session", "turn", "agent", "tenant", "input text", "tool", "reasoning",
	"output", "success", "latency ms", "error code", "reward", "confidence", "tags", "trace id", "",
}

var fieldHints = [numFields]string{
	fType: "←/→ to choose", fSession: "required", fText: "required: what was perceived",
	fSuccess: "←/→: unknown, true, false", fLatency: "milliseconds", fReward: "0..1 (also the self-assessed quality)",
	fConfidence: "0..1", fTags: "comma separated", fErrCode: "e.g. TIMEOUT", fTrace: "optional: 32 hex digits",
}

// fieldPaths maps the JSON paths Validate reports onto the fields.
var fieldPaths = map[string]fieldID{
	"type": fType, "context.sessionId": fSession, "context": fSession, "input.text": fText, "input": fText,
	"result.latencyMs": fLatency, "evaluation.rewardScore": fReward, "evaluation.selfAssessedQuality": fReward,
	"internalState.confidence": fConfidence, "tags": fTags, "result.output": fOutput,
	"context.traceId": fTrace, "result.errorCode": fErrCode,
}

var successChoices = []string{"unknown", "true", "false"}

// form is the record form's values. Its event is built as JSON and read
// back with model.Decode, so it is checked exactly as an ingested line is.
type form struct {
	inputs  [numFields]textinput.Model
	typ     int // index in model.EventTypes
	success int // index in successChoices
	touched [numFields]bool
	errs    [numFields]string
	general string // a problem no field owns
}

func newForm() *form {
	f := &form{}
	for i := range f.inputs {
		f.inputs[i].Limit = 100000
	}
	// Perceptions, reasoning and outputs are often several paragraphs.
	for _, fid := range []fieldID{fText, fReasoning, fOutput} {
		f.inputs[fid].Multiline = true
	}
	return f
}

// event builds the form's event with id and timestamp; fieldErrs holds
// what could not even be put into JSON (a latency that is not a number).
func (f *form) event(id string, now time.Time) (*model.Event, [numFields]string) {
	var bad [numFields]string
	num := func(fid fieldID) *float64 {
		s := strings.TrimSpace(f.inputs[fid].Value())
		if s == "" {
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			bad[fid] = fmt.Sprintf("%q is not a number", s)
			return nil
		}
		return &v
	}
	val := func(fid fieldID) string { return strings.TrimSpace(f.inputs[fid].Value()) }
	ev := map[string]any{
		"eventId": id, "timestamp": now.UTC().Format(time.RFC3339Nano), "type": model.EventTypes[f.typ],
		"input":           map[string]any{"text": f.inputs[fText].Value(), "embedding": []float64{}},
		"importanceScore": 0, "tags": splitTags(val(fTags)),
	}
	ctx := map[string]any{"sessionId": val(fSession)}
	for fid, name := range map[fieldID]string{fTurn: "turnId", fAgent: "agentId", fTenant: "tenantId", fTrace: "traceId"} {
		if v := val(fid); v != "" {
			ctx[name] = v
		}
	}
	ev["context"] = ctx
	if tool, why := val(fTool), f.inputs[fReasoning].Value(); tool != "" || strings.TrimSpace(why) != "" {
		ev["action"] = omitEmpty(map[string]any{"tool": tool, "reasoning": why})
	}
	lat, code := num(fLatency), val(fErrCode)
	if out := f.inputs[fOutput].Value(); out != "" || f.success != 0 || lat != nil || code != "" {
		res := map[string]any{"output": out}
		if code != "" {
			res["errorCode"] = code
		}
		if f.success != 0 {
			res["success"] = f.success == 1
		}
		if lat != nil {
			res["latencyMs"] = *lat
		}
		ev["result"] = res
	}
	if r := num(fReward); r != nil {
		ev["evaluation"] = map[string]any{"rewardScore": *r, "selfAssessedQuality": *r}
	}
	if c := num(fConfidence); c != nil {
		ev["internalState"] = map[string]any{"confidence": *c}
	}
	b, _ := json.Marshal(ev)
	e, err := model.Decode(b, model.DecodeOptions{})
	if err != nil {
		bad[fSubmit] = err.Error()
	}
	return e, bad
}

// values is the event the form makes, but for its id and timestamp: two
// submits of the same values make the same string.
func (f *form) values() string {
	ev, _ := f.event("", time.Time{})
	if ev == nil {
		return ""
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// sameAs: the form makes the event values describes.
func (f *form) sameAs(values string) bool { return values != "" && f.values() == values }

func splitTags(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
			delete(m, k)
		}
	}
	return m
}

// validate fills errs from model.Event.Validate; only touched fields show
// theirs unless all is set (a submit).
func (f *form) validate(all bool) (*model.Event, bool) {
	ev, bad := f.event("form-check", time.Now())
	f.errs, f.general = [numFields]string{}, ""
	ok := true
	for i, e := range bad {
		if e != "" {
			f.errs[i], ok = e, false
		}
	}
	if ev != nil {
		for _, p := range ev.Validate() {
			fid, known := fieldFor(p.Path)
			if !known {
				f.general, ok = p.String(), false
				continue
			}
			if f.errs[fid] == "" {
				f.errs[fid] = p.Reason
			}
			ok = false
		}
	}
	if !all {
		for i := range f.errs {
			if !f.touched[i] {
				f.errs[i] = ""
			}
		}
	}
	return ev, ok
}

func fieldFor(path string) (fieldID, bool) {
	if fid, ok := fieldPaths[path]; ok {
		return fid, true
	}
	if strings.HasPrefix(path, "tags[") {
		return fTags, true
	}
	return 0, false
}

// fill sets the form from an event (duplicate as new); the id and the
// timestamp are made afresh at submit.
func (f *form) fill(ev *model.Event) {
	*f = *newForm()
	for i, t := range model.EventTypes {
		if t == ev.Type {
			f.typ = i
		}
	}
	set := func(fid fieldID, s string) { f.inputs[fid].SetValue(s) }
	set(fSession, ev.Context.SessionID)
	set(fTurn, ev.Context.TurnID)
	set(fAgent, ev.Context.AgentID)
	set(fTenant, ev.Context.TenantID)
	set(fTrace, ev.Context.TraceID)
	set(fText, ev.Input.Text)
	if a := ev.Action; a != nil {
		set(fTool, a.Tool)
		set(fReasoning, a.Reasoning)
	}
	if r := ev.Result; r != nil {
		set(fOutput, r.Output)
		set(fErrCode, r.ErrorCode)
		if r.Success != nil {
			f.success = map[bool]int{true: 1, false: 2}[*r.Success]
		}
		if r.LatencyMs != nil {
			set(fLatency, strconv.FormatFloat(*r.LatencyMs, 'f', -1, 64))
		}
	}
	if e := ev.Evaluation; e != nil {
		set(fReward, strconv.FormatFloat(e.RewardScore, 'f', -1, 64))
	}
	if s := ev.InternalState; s != nil {
		set(fConfidence, strconv.FormatFloat(s.Confidence, 'f', -1, 64))
	}
	set(fTags, strings.Join(ev.Tags, ", "))
}

// eventFromDoc rebuilds what an index document holds of an event, for
// "duplicate as new" when the archive is not at hand.
func eventFromDoc(d *model.IndexDoc) *model.Event {
	ev := &model.Event{Type: d.EventType, Tags: d.Tags}
	ev.Context = model.Context{SessionID: d.SessionID, AgentID: d.AgentID, TurnID: d.TurnID, TenantID: d.TenantID, TraceID: d.TraceID}
	ev.Input.Text = d.Summary
	if d.Tool != "" {
		ev.Action = &model.Action{Tool: d.Tool}
	}
	if d.Success != nil || d.LatencyMs != nil {
		ev.Result = &model.Result{Success: d.Success}
		if d.LatencyMs != nil {
			ms := float64(*d.LatencyMs)
			ev.Result.LatencyMs = &ms
		}
	}
	return ev
}
