package model

import "encoding/json"

// Event types of the source system, and the three CaseHub kinds engram adds.
const (
	TypeUserInput                = "user_input"
	TypeToolResult               = "tool_result"
	TypeSystemEvent              = "system_event"
	TypeAgentAction              = "agent_action"
	TypeEnvironmentalObservation = "environmental_observation"
	TypeConsolidationOutput      = "consolidation_output"
	TypeObservation              = "observation"
	TypeAction                   = "action"
	TypeOutcome                  = "outcome"
)

// EventTypes lists every accepted value of Event.Type, source types first.
var EventTypes = []string{
	TypeUserInput, TypeToolResult, TypeSystemEvent, TypeAgentAction,
	TypeEnvironmentalObservation, TypeConsolidationOutput,
	TypeObservation, TypeAction, TypeOutcome,
}

// Event is one experience event (docs/data-contract.md, The experience
// event). Optional blocks are
// pointers so that "absent" and "zero" stay distinguishable: the importance
// prior and the validation rules depend on the difference.
type Event struct {
	EventID          string         `json:"eventId"`
	Timestamp        string         `json:"timestamp"`
	Type             string         `json:"type"`
	Context          Context        `json:"context"`
	Input            Input          `json:"input"`
	InternalState    *InternalState `json:"internalState,omitempty"`
	Action           *Action        `json:"action,omitempty"`
	Result           *Result        `json:"result,omitempty"`
	Evaluation       *Evaluation    `json:"evaluation,omitempty"`
	ObjectStorageKey string         `json:"objectStorageKey,omitempty"`
	ImportanceScore  float64        `json:"importanceScore"`
	Tags             []string       `json:"tags"`
	// Subtype and Payload: the Cognitive Substrate's typed events
	// (subtypeOperationalSignal and its payload, model/shapes.go).
	Subtype string          `json:"subtype,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`

	// KeepEmbedding asks the pipeline to keep input.embedding when it has
	// the embedder's dimension: set for events read back from the archive.
	KeepEmbedding bool `json:"-"`

	// raw is the event as it arrived. The archive holds this, patched with
	// what the pipeline adds, so fields engram does not know survive.
	raw json.RawMessage
	// present records which optional-but-required-on-the-wire members were
	// on the input, for validation.
	present presence
}

type presence struct {
	context, input, text, embedding, importance, tags bool
	confidence, output, reward, quality               bool
}

// Context identifies where an event happened.
type Context struct {
	SessionID     string `json:"sessionId"`
	UserID        string `json:"userId,omitempty"`
	GoalID        string `json:"goalId,omitempty"`
	PolicyVersion string `json:"policyVersion,omitempty"`
	AgentID       string `json:"agentId,omitempty"`
	TraceID       string `json:"traceId,omitempty"`
	SpanID        string `json:"spanId,omitempty"`
	TurnID        string `json:"turnId,omitempty"`
	TenantID      string `json:"tenantId,omitempty"`
	// Source is where the event came from: session, ambient or system
	// (Sources); SourceOf tells it for events that do not say.
	Source string `json:"source,omitempty"`
}

// Input is what the agent perceived.
type Input struct {
	Text       string          `json:"text"`
	Embedding  []float64       `json:"embedding"`
	Structured json.RawMessage `json:"structured,omitempty"`
}

// InternalState is a snapshot of the agent's working cognition.
type InternalState struct {
	Confidence            float64            `json:"confidence"`
	WorkingMemorySnapshot string             `json:"workingMemorySnapshot,omitempty"`
	ActivePlan            string             `json:"activePlan,omitempty"`
	EmotionalVector       map[string]float64 `json:"emotionalVector,omitempty"`
}

// Action is what the agent decided to do, and why.
type Action struct {
	Tool       string          `json:"tool,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Reasoning  string          `json:"reasoning,omitempty"`
}

// Result is what came of the action. Success is nil when unknown.
type Result struct {
	Output    string   `json:"output"`
	Success   *bool    `json:"success,omitempty"`
	LatencyMs *float64 `json:"latencyMs,omitempty"`
	ErrorCode string   `json:"errorCode,omitempty"`
	// Content is MCP content blocks (text, image, resource_link, …), kept
	// as given and read by Blocks; IsError is MCP's failure flag, which
	// Succeeded counts as success false where Success is absent.
	Content json.RawMessage `json:"content,omitempty"`
	IsError *bool           `json:"isError,omitempty"`
}

// Evaluation is how the event was judged.
type Evaluation struct {
	RewardScore         float64 `json:"rewardScore"`
	SelfAssessedQuality float64 `json:"selfAssessedQuality"`
	UserFeedback        string  `json:"userFeedback,omitempty"`
	Hallucinated        *bool   `json:"hallucinated,omitempty"`
}

// Raw returns the event as it arrived (nil for an event built in code).
func (e *Event) Raw() json.RawMessage { return e.raw }
