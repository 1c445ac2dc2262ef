package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// caseHubEvent is the CaseHub experience event (docs/data-contract.md,
// CaseHub events).
type caseHubEvent struct {
	Kind        string          `json:"kind"`
	EventType   string          `json:"eventType"`
	Type        string          `json:"type"`
	EventID     string          `json:"eventId"`
	Timestamp   json.RawMessage `json:"timestamp"`
	AgentID     *string         `json:"agentId"`
	TenantID    *string         `json:"tenantId"`
	CaseID      string          `json:"caseId"`
	TurnID      string          `json:"turnId"`
	Description string          `json:"description"`
	Importance  *float64        `json:"importance"`
	// Confidence is what newer CaseHub versions write where they wrote
	// importance.
	Confidence *float64          `json:"confidence"`
	Metadata   map[string]string `json:"metadata"`
	Subject    *string           `json:"subject"`
	Capability string            `json:"capability"`
	Result     *string           `json:"result"`
}

// caseHubReserved are the attribute keys the CaseHub converter sets itself.
var caseHubReserved = []string{"event-type", "turn-id", "subject", "capability", "result"}

func decodeCaseHub(data []byte, opt DecodeOptions) (*Event, error) {
	var c caseHubEvent
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, jsonProblem(err)
	}
	var ps Problems
	kind := strings.ToLower(firstNonEmpty(c.Kind, c.EventType, c.Type))
	switch kind {
	case TypeObservation, TypeAction, TypeOutcome:
	case "":
		ps.add("kind", "required for a CaseHub event (observation, action or outcome)")
	default:
		ps.add("kind", Quote(kind)+" is not one of observation, action, outcome")
	}
	c.checkRequired(kind, &ps)
	c.checkMetadata(kind, &ps)
	checkMemory(&ps, c.Metadata)
	ts, tsErr := caseHubTime(c.Timestamp)
	if tsErr != "" {
		ps.add("timestamp", tsErr)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	e := c.toEvent(kind, ts, opt)
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	e.raw = raw
	e.present = presence{context: true, input: true, text: true, tags: true, output: e.Result != nil, confidence: e.InternalState != nil}
	return e, nil
}

func (c *caseHubEvent) checkRequired(kind string, ps *Problems) {
	if c.AgentID == nil || *c.AgentID == "" {
		ps.add("agentId", "required")
	}
	if c.TenantID == nil || *c.TenantID == "" {
		ps.add("tenantId", "required")
	}
	if c.CaseID == "" {
		ps.add("caseId", "required (it becomes context.sessionId)")
	}
	if strings.TrimSpace(c.Description) == "" {
		ps.add("description", "required and must not be blank")
	}
	if kind == TypeObservation && (c.Subject == nil || *c.Subject == "") {
		ps.add("subject", "required for an observation")
	}
	if kind == TypeOutcome && (c.Result == nil || *c.Result == "") {
		ps.add("result", "required for an outcome")
	}
	if c.Importance != nil && (*c.Importance < 0 || *c.Importance > 1) {
		ps.add("importance", fmt.Sprintf("%v is outside [0, 1]", *c.Importance))
	}
	if c.Confidence != nil && (*c.Confidence < 0 || *c.Confidence > 1) {
		ps.add("confidence", fmt.Sprintf("%v is outside [0, 1]", *c.Confidence))
	}
}

// caseHubTime reads CaseHub's timestamp: an RFC 3339 string as it is
// (Validate checks it), or a number of epoch seconds with a fraction
// (Jackson's default for a Java Instant) or, from 10^11 up, epoch
// milliseconds, written as RFC 3339 in UTC with milliseconds.
func caseHubTime(raw json.RawMessage) (string, string) {
	if !set(raw) {
		return "", ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return "", "expected an RFC 3339 string or a number of epoch seconds (or milliseconds)"
	}
	ms := f * 1000
	if f >= 1e11 {
		ms = f
	}
	if ms > 253402300799999 { // after 9999-12-31
		return "", fmt.Sprintf("%s is after the year 9999", string(raw))
	}
	return time.UnixMilli(int64(math.Round(ms))).UTC().Format("2006-01-02T15:04:05.000Z07:00"), ""
}

// checkMetadata refuses caller metadata that collides with a reserved key the
// converter sets for this event: CaseHub throws rather than overwrite.
func (c *caseHubEvent) checkMetadata(kind string, ps *Problems) {
	setByEvent := map[string]bool{
		"event-type": true,
		"turn-id":    c.TurnID != "",
		"subject":    c.Subject != nil,
		"capability": c.Capability != "",
		"result":     c.Result != nil,
	}
	for _, k := range caseHubReserved {
		if _, ok := c.Metadata[k]; ok && setByEvent[k] {
			ps.add("metadata."+k, "collides with a reserved attribute this "+kindOr(kind)+" sets")
		}
	}
}

func kindOr(kind string) string {
	if kind == "" {
		return "event"
	}
	return kind
}

func (c *caseHubEvent) toEvent(kind, ts string, opt DecodeOptions) *Event {
	e := &Event{EventID: c.EventID, Timestamp: ts, Type: kind, Tags: []string{}}
	if e.EventID == "" && opt.NewID != nil {
		e.EventID = opt.NewID()
	}
	if e.Timestamp == "" && opt.Now != nil {
		e.Timestamp = opt.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	e.Context = Context{SessionID: c.CaseID, AgentID: *c.AgentID, TenantID: *c.TenantID, TurnID: c.TurnID}
	e.Input = Input{Text: c.Description, Embedding: []float64{}}
	structured := map[string]any{}
	if c.Subject != nil {
		structured["subject"] = *c.Subject
	}
	if len(c.Metadata) > 0 {
		structured["metadata"] = c.Metadata
	}
	if c.Importance != nil {
		structured["importance"] = *c.Importance
	}
	if len(structured) > 0 {
		e.Input.Structured, _ = json.Marshal(structured)
	}
	if c.Confidence != nil {
		e.InternalState = &InternalState{Confidence: *c.Confidence}
	}
	if c.Capability != "" || kind == TypeAction {
		e.Action = &Action{Tool: c.Capability}
	}
	if c.Result != nil {
		e.Result = &Result{Output: *c.Result}
		switch c.Metadata["outcome-status"] {
		case "SUCCESS":
			e.Result.Success = ptr(true)
		case "FAILURE":
			e.Result.Success = ptr(false)
		}
	}
	return e
}

func ptr[T any](v T) *T { return &v }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
