package model

import (
	"fmt"
	"strings"
	"time"
)

// Phase is where an event sits in the causal chain of a turn.
type Phase int

// Phases in causal order.
const (
	PhaseObservation Phase = iota
	PhaseAction
	PhaseOutcome
)

var phaseNames = [...]string{"observation", "action", "outcome"}

func (p Phase) String() string { return phaseNames[p] }

// PhaseOf maps an event type onto its phase (docs/data-contract.md, Turns
// and causal order). Unknown
// types are treated as observations so that ordering never fails.
func PhaseOf(eventType string) Phase {
	switch eventType {
	case TypeAgentAction, TypeAction:
		return PhaseAction
	case TypeToolResult, TypeConsolidationOutput, TypeOutcome:
		return PhaseOutcome
	}
	return PhaseObservation
}

// TurnKey groups the events of one agent turn: turnId, else traceId, else
// the event's own id.
func TurnKey(turnID, traceID, eventID string) string {
	switch {
	case turnID != "":
		return turnID
	case traceID != "":
		return traceID
	}
	return eventID
}

// TurnKey is the turn this event belongs to.
func (e *Event) TurnKey() string { return TurnKey(e.Context.TurnID, e.Context.TraceID, e.EventID) }

// ParseTimestamp parses an RFC 3339 timestamp that carries a zone. Go
// accepts offsets of 24 hours and more, which RFC 3339 does not (at most
// ±23:59), and years whose UTC day falls outside 0001 to 9999, where the
// archive key's four-digit year would break date order: both are refused.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)", s)
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return time.Time{}, fmt.Errorf("%q: offset %s is outside ±23:59 (RFC 3339)", s, s[len(s)-6:])
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%q: year %d (in UTC) is outside 0001 to 9999", s, y)
	}
	return t, nil
}

// ArchiveKey is the object key of an archived event:
// events/YYYY/MM/DD/<eventId>.json with the date taken in UTC.
func ArchiveKey(eventID, timestamp string) (string, error) {
	if err := CheckEventID(eventID); err != nil {
		return "", err
	}
	t, err := ParseTimestamp(timestamp)
	if err != nil {
		return "", err
	}
	b := make([]byte, 0, ArchivePrefixLen+len(eventID)+len(".json"))
	return string(append(append(AppendArchivePrefix(b, t), eventID...), ".json"...)), nil
}

// ArchivePrefixLen is the length of every ArchivePrefix.
const ArchivePrefixLen = len("events/YYYY/MM/DD/")

// ArchivePrefix is the key prefix holding the events of t's UTC day.
func ArchivePrefix(t time.Time) string {
	return string(AppendArchivePrefix(make([]byte, 0, ArchivePrefixLen), t))
}

// AppendArchivePrefix appends ArchivePrefix(t) to b: "events/YYYY/MM/DD/",
// built by hand rather than through fmt, as every event's key and every
// index document's check of it pays for it. Years are 1 to 9999
// (ParseTimestamp), so four digits hold them.
func AppendArchivePrefix(b []byte, t time.Time) []byte {
	y, m, d := t.UTC().Date()
	b = append(b, "events/"...)
	b = append(b, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '/')
	b = append(b, byte('0'+int(m)/10), byte('0'+int(m)%10), '/')
	return append(b, byte('0'+d/10), byte('0'+d%10), '/')
}

// ArchiveKeyDay is the UTC day a key that begins with an ArchivePrefix
// names, and false for any other key.
func ArchiveKeyDay(key string) (time.Time, bool) {
	if len(key) < ArchivePrefixLen || !strings.HasPrefix(key, "events/") {
		return time.Time{}, false
	}
	t, err := time.Parse("2006/01/02/", key[len("events/"):ArchivePrefixLen])
	return t, err == nil
}
