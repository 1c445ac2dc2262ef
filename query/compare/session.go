package compare

import (
	"slices"
	"strings"
	"time"

	"engram/model"
)

// Session is one session's turns on a time axis (docs/compare.md).
type Session struct {
	ID     string   `json:"session_id"`
	Agents []string `json:"agents,omitempty"`
	First  string   `json:"first"`
	Last   string   `json:"last"`
	// SpanMs is from the first event to the last.
	SpanMs int64         `json:"span_ms"`
	Turns  []SessionTurn `json:"turns"`
	// Note says how the turns were found, when not from the index's turn
	// keys; Cut that the session has more turns than were read.
	Note string `json:"note,omitempty"`
	Cut  bool   `json:"cut,omitempty"`
}

// SessionTurn is one turn of a session.
type SessionTurn struct {
	Key   string `json:"turn_key"`
	First string `json:"first"`
	Last  string `json:"last"`
	// OffsetMs is its start after the session's, DurationMs its first to
	// its last event, IdleBeforeMs the time since the previous turn's last
	// event (negative when they overlap), Gap whether that idle time
	// stands out: over a second and over four times the median.
	OffsetMs     int64         `json:"offset_ms"`
	DurationMs   int64         `json:"duration_ms"`
	IdleBeforeMs int64         `json:"idle_before_ms"`
	Gap          bool          `json:"gap"`
	Events       int           `json:"events"`
	LatencyMs    *int64        `json:"latency_ms"`
	Outcome      string        `json:"outcome"`
	Steps        []SessionStep `json:"steps"`
}

// SessionStep is one event of a turn of a session.
type SessionStep struct {
	ID        string `json:"event_id"`
	Type      string `json:"type"`
	Phase     string `json:"phase"`
	Tool      string `json:"tool,omitempty"`
	OffsetMs  int64  `json:"offset_ms"`
	LatencyMs *int64 `json:"latency_ms"`
	Success   *bool  `json:"success"`
}

const msLayout = "2006-01-02T15:04:05.000Z07:00"

// Timeline lays out a session's turns (each one's documents in causal
// order) by the time of their first event.
func Timeline(id string, turns map[string][]*model.IndexDoc) *Session {
	s := &Session{ID: id}
	type placed struct {
		key  string
		docs []*model.IndexDoc
		sp   timeSpan
	}
	var ps []placed
	agents := map[string]bool{}
	for key, docs := range turns {
		sp, ok := docSpan(docs)
		if !ok {
			continue
		}
		ps = append(ps, placed{key, docs, sp})
		for _, d := range docs {
			if d.AgentID != "" && !agents[d.AgentID] {
				agents[d.AgentID] = true
				s.Agents = append(s.Agents, d.AgentID)
			}
		}
	}
	slices.Sort(s.Agents)
	slices.SortFunc(ps, func(a, b placed) int {
		if c := a.sp.first.Compare(b.sp.first); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	if len(ps) == 0 {
		return s
	}
	start, end := ps[0].sp.first, ps[0].sp.last
	for _, p := range ps {
		if p.sp.last.After(end) {
			end = p.sp.last
		}
	}
	s.First, s.Last, s.SpanMs = start.UTC().Format(msLayout), end.UTC().Format(msLayout), end.Sub(start).Milliseconds()
	var prevEnd time.Time
	for i, p := range ps {
		t := SessionTurn{
			Key: p.key, First: p.sp.first.UTC().Format(msLayout), Last: p.sp.last.UTC().Format(msLayout),
			OffsetMs: p.sp.first.Sub(start).Milliseconds(), DurationMs: p.sp.last.Sub(p.sp.first).Milliseconds(),
			Events: len(p.docs), Outcome: "unknown",
		}
		if i > 0 {
			t.IdleBeforeMs = p.sp.first.Sub(prevEnd).Milliseconds()
		}
		if i == 0 || p.sp.last.After(prevEnd) {
			prevEnd = p.sp.last
		}
		for _, d := range p.docs {
			st := SessionStep{ID: d.EventID, Type: d.EventType, Phase: d.Phase().String(), Tool: d.Tool, LatencyMs: d.LatencyMs, Success: d.Success}
			if ts, err := model.ParseTimestamp(d.Timestamp); err == nil {
				st.OffsetMs = ts.Sub(start).Milliseconds()
			}
			if d.LatencyMs != nil {
				t.LatencyMs = ptr(derefInt(t.LatencyMs) + *d.LatencyMs)
			}
			if d.Success != nil {
				switch {
				case !*d.Success:
					t.Outcome = "failed"
				case t.Outcome == "unknown":
					t.Outcome = "ok"
				}
			}
			t.Steps = append(t.Steps, st)
		}
		s.Turns = append(s.Turns, t)
	}
	markGaps(s.Turns)
	return s
}

// gapAlways is the idle time between two turns that is a gap however the
// session's other turns are spaced.
const gapAlways = 10 * time.Minute

// markGaps marks the idle times that stand out: over a second, and over
// four times the (lower) median idle time between the session's turns or
// over gapAlways.
func markGaps(ts []SessionTurn) {
	if len(ts) < 2 {
		return
	}
	idle := make([]int64, 0, len(ts)-1)
	for _, t := range ts[1:] {
		idle = append(idle, t.IdleBeforeMs)
	}
	slices.Sort(idle)
	median := max(idle[(len(idle)-1)/2], 0) // the lower one: two turns have one idle time
	for i := 1; i < len(ts); i++ {
		d := ts[i].IdleBeforeMs
		ts[i].Gap = d > 1000 && (d > 4*median || d >= gapAlways.Milliseconds())
	}
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

type timeSpan struct{ first, last time.Time }

// docSpan is the earliest and latest timestamps of docs (false when none
// parses).
func docSpan(docs []*model.IndexDoc) (timeSpan, bool) {
	var sp timeSpan
	ok := false
	for _, d := range docs {
		t, err := model.ParseTimestamp(d.Timestamp)
		if err != nil {
			continue
		}
		if !ok || t.Before(sp.first) {
			sp.first = t
		}
		if !ok || t.After(sp.last) {
			sp.last = t
		}
		ok = true
	}
	return sp, ok
}

// span is docSpan of events.
func span(evs []*Event) (timeSpan, bool) {
	docs := make([]*model.IndexDoc, len(evs))
	for i, e := range evs {
		docs[i] = e.Doc
	}
	return docSpan(docs)
}
