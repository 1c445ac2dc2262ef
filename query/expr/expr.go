package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"engram/model"
)

// Kind is what a term tests.
type Kind uint8

// Kinds of term.
const (
	// KindText is a free word (Phrase false) or a quoted phrase (Phrase
	// true) in Value, matched by full text on summary.
	KindText Kind = iota + 1
	// KindField is Field:Value, an exact match on a keyword field (one of
	// KeywordFields).
	KindField
	// KindSuccess is success:Bool.
	KindSuccess
	// KindCompare is Field Op Num on a numeric field (one of NumericFields).
	KindCompare
	// KindSince is since:Time, timestamp >= Time (inclusive).
	KindSince
	// KindUntil is until:Time, timestamp < Time (exclusive).
	KindUntil
)

var kindNames = [...]string{"", "text", "field", "success", "compare", "since", "until"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Op is a comparison operator.
type Op uint8

// Comparison operators.
const (
	OpEQ Op = iota + 1 // =
	OpLT               // <
	OpLE               // <=
	OpGT               // >
	OpGE               // >=
)

var opNames = [...]string{"", "=", "<", "<=", ">", ">="}

func (o Op) String() string {
	if int(o) < len(opNames) && o != 0 {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Holds reports whether a Op b.
func (o Op) Holds(a, b float64) bool {
	switch o {
	case OpEQ:
		return a == b
	case OpLT:
		return a < b
	case OpLE:
		return a <= b
	case OpGT:
		return a > b
	case OpGE:
		return a >= b
	}
	return false
}

// Field names.
const (
	FieldType    = "type"    // event_type
	FieldSession = "session" // session_id
	FieldTurn    = "turn"    // the turn key (turn_id, else trace_id, else event_id)
	FieldAgent   = "agent"   // agent_id
	FieldTenant  = "tenant"  // tenant_id
	FieldTrace   = "trace"   // trace_id
	FieldTool    = "tool"    // tool
	FieldTag     = "tag"     // one of tags
	FieldID      = "id"      // event_id
	FieldSource  = "source"  // source (model.SourceOf: context.source, else system for system: sessions)

	FieldImportance = "importance" // importance_score
	FieldReward     = "reward"     // reward_score
	FieldConfidence = "confidence" // confidence
	FieldLatency    = "latency"    // latency_ms

	FieldSuccess = "success"
	FieldSince   = "since"
	FieldUntil   = "until"
)

// KeywordFields are the fields of KindField terms.
var KeywordFields = []string{FieldType, FieldSession, FieldTurn, FieldAgent, FieldTenant, FieldTrace, FieldTool, FieldTag, FieldID, FieldSource}

// NumericFields are the fields of KindCompare terms.
var NumericFields = []string{FieldImportance, FieldReward, FieldConfidence, FieldLatency}

// values are the values field accepts when they are a closed set (type:
// and success:), for completion and messages; nil when any value is
// accepted (tool:, tag:, the ids). The slice is the caller's.
func values(field string) []string {
	return append([]string(nil), closedValues(strings.ToLower(field))...)
}

func closedValues(field string) []string {
	switch field {
	case FieldType:
		return model.EventTypes
	case FieldSuccess:
		return successValues
	case FieldSource:
		return model.Sources
	}
	return nil
}

var successValues = []string{"true", "false"}

// knownFields is every field name, sorted, for error messages.
const knownFields = "agent, confidence, id, importance, latency, reward, session, since, source, success, tag, tenant, tool, trace, turn, type, until"

// Time is the value of since: and until:, relative to the query's now or
// absolute.
type Time struct {
	// Relative: the time is Ago before now.
	Relative bool
	Ago      time.Duration
	// At is the absolute time, in UTC, when not Relative.
	At time.Time
}

// Resolve is the time t stands for when the query runs at now.
func (t Time) Resolve(now time.Time) time.Time {
	if t.Relative {
		return now.Add(-t.Ago)
	}
	return t.At
}

func (t Time) equal(u Time) bool {
	if t.Relative != u.Relative {
		return false
	}
	if t.Relative {
		return t.Ago == u.Ago
	}
	return t.At.Equal(u.At)
}

// Term is one condition of an expression; which fields are set depends on
// Kind.
type Term struct {
	Kind Kind
	// Neg: the term is negated (-term).
	Neg bool
	// Field is the field of KindField and KindCompare terms.
	Field string
	// Value is the word or phrase of KindText and the value of KindField.
	Value string
	// Phrase: a KindText term written in quotes.
	Phrase bool
	// Op and Num are the comparison of KindCompare.
	Op  Op
	Num float64
	// Bool is the value of KindSuccess.
	Bool bool
	// Time is the value of KindSince and KindUntil.
	Time Time
}

// Equal reports whether t and u are the same term.
func (t Term) Equal(u Term) bool {
	if t.Kind != u.Kind || t.Neg != u.Neg {
		return false
	}
	switch t.Kind {
	case KindText:
		return t.Value == u.Value && t.Phrase == u.Phrase
	case KindField:
		return t.Field == u.Field && t.Value == u.Value
	case KindSuccess:
		return t.Bool == u.Bool
	case KindCompare:
		return t.Field == u.Field && t.Op == u.Op && t.Num == u.Num
	case KindSince, KindUntil:
		return t.Time.equal(u.Time)
	}
	return true
}

// String is the term in canonical form.
func (t Term) String() string {
	var b strings.Builder
	if t.Neg {
		b.WriteByte('-')
	}
	switch t.Kind {
	case KindText:
		if t.Phrase || !bareWord(t.Value) {
			b.WriteString(quote(t.Value))
		} else {
			b.WriteString(t.Value)
		}
	case KindField:
		b.WriteString(t.Field)
		b.WriteByte(':')
		b.WriteString(value(t.Value))
	case KindSuccess:
		b.WriteString("success:")
		b.WriteString(strconv.FormatBool(t.Bool))
	case KindCompare:
		b.WriteString(t.Field)
		b.WriteString(t.Op.String())
		b.WriteString(strconv.FormatFloat(t.Num, 'g', -1, 64))
	case KindSince, KindUntil:
		if t.Kind == KindSince {
			b.WriteString("since:")
		} else {
			b.WriteString("until:")
		}
		b.WriteString(formatTime(t.Time))
	default:
		b.WriteString(quote(t.Value))
	}
	return b.String()
}

// Expr is a parsed expression: all Terms must hold. No terms matches
// everything.
type Expr struct {
	Terms []Term
}

// Empty reports whether e matches everything.
func (e *Expr) Empty() bool { return e == nil || len(e.Terms) == 0 }

// HasText reports whether e has a positive free word or phrase: results are
// then ranked by text relevance. (Negated words alone only filter.)
func (e *Expr) HasText() bool {
	if e == nil {
		return false
	}
	for _, t := range e.Terms {
		if t.Kind == KindText && !t.Neg {
			return true
		}
	}
	return false
}

// String is e in canonical form: Parse(e.String()) is equal to e.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	parts := make([]string, len(e.Terms))
	for i, t := range e.Terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, " ")
}

// Equal reports whether e and f have the same terms in the same order.
func (e *Expr) Equal(f *Expr) bool {
	if e.Empty() || f.Empty() {
		return e.Empty() == f.Empty()
	}
	if len(e.Terms) != len(f.Terms) {
		return false
	}
	for i := range e.Terms {
		if !e.Terms[i].Equal(f.Terms[i]) {
			return false
		}
	}
	return true
}
