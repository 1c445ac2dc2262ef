package compare

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/sergi/go-diff/diffmatchpatch"

	"engram/ingest"
	"engram/model"
)

// Step is one event of a turn as a comparison shows it.
type Step struct {
	ID     string `json:"event_id"`
	Type   string `json:"type"`
	Tool   string `json:"tool,omitempty"`
	Time   string `json:"timestamp"`
	Source string `json:"source"`
}

// StepPair is a place in the two chains: a step of each (Status Same or
// Changed, Diff set), or a step of only one (OnlyLeft, OnlyRight).
type StepPair struct {
	Phase  string     `json:"phase"`
	Status Status     `json:"status"`
	Left   *Step      `json:"left,omitempty"`
	Right  *Step      `json:"right,omitempty"`
	Diff   *EventDiff `json:"diff,omitempty"`
}

// Totals are a turn's sums.
type Totals struct {
	Events int `json:"events"`
	// DurationMs is from its first event's timestamp to its last's.
	DurationMs int64 `json:"duration_ms"`
	// LatencyMs is the sum of its events' result.latencyMs (nil: none
	// gave one).
	LatencyMs *float64 `json:"latency_ms"`
	// Outcome is "failed" when an event has result.success false, else
	// "ok" when one has it true, else "unknown".
	Outcome string `json:"outcome"`
	// Reward is the mean evaluation.rewardScore of the events that have
	// one (Rewarded of them; nil when none has).
	Reward   *float64 `json:"reward"`
	Rewarded int      `json:"rewarded"`
}

// TurnSide is what a turn comparison says of one turn.
type TurnSide struct {
	Key       string `json:"turn_key"`
	SessionID string `json:"session_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	First     string `json:"first,omitempty"`
	Totals    Totals `json:"totals"`
	// Notes are the steps read from the index instead of the archive.
	Notes []string `json:"notes,omitempty"`
}

// TurnDiff is two turns compared (docs/compare.md).
type TurnDiff struct {
	Left   TurnSide   `json:"left"`
	Right  TurnSide   `json:"right"`
	Deltas []Delta    `json:"deltas"`
	Steps  []StepPair `json:"steps"`
}

// FetchAll reads the archived events of docs (FromDoc), a few at a time.
func FetchAll(ctx context.Context, ar ingest.ArchiveReader, docs []*model.IndexDoc) []*Event {
	out := make([]*Event, len(docs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, d := range docs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = FromDoc(ctx, ar, d)
		}()
	}
	wg.Wait()
	return out
}

// Turns compares two turns, their events in causal order (as Reader.Turn
// gives them) and read by FetchAll: the chains are aligned phase by phase
// (observations with observations, actions with actions, outcomes with
// outcomes), within a phase by type and tool where they agree and in order
// where they do not; each pair of steps is compared as two events.
func Turns(lkey string, l []*Event, rkey string, r []*Event) *TurnDiff {
	td := &TurnDiff{Left: turnSide(lkey, l), Right: turnSide(rkey, r)}
	td.Deltas = totalDeltas(td.Left.Totals, td.Right.Totals)
	for _, ph := range []model.Phase{model.PhaseObservation, model.PhaseAction, model.PhaseOutcome} {
		td.Steps = append(td.Steps, align(ph, inPhase(l, ph), inPhase(r, ph))...)
	}
	return td
}

func inPhase(evs []*Event, ph model.Phase) []*Event {
	var out []*Event
	for _, e := range evs {
		if e.Doc.Phase() == ph {
			out = append(out, e)
		}
	}
	return out
}

// align pairs two steps lists of one phase: the longest common run of
// (type, tool) pairs them where they agree; between two such anchors the
// steps left over are paired in order, and what remains is one-sided.
func align(ph model.Phase, l, r []*Event) []StepPair {
	enc := encoder{ids: map[string]rune{}}
	kl, kr := enc.encode(stepKeys(l)), enc.encode(stepKeys(r))
	var out []StepPair
	i, j := 0, 0
	var dl, dr []*Event // pending one-sided runs
	flush := func() {
		n := min(len(dl), len(dr))
		for k := range n {
			out = append(out, pair(ph, dl[k], dr[k]))
		}
		for _, e := range dl[n:] {
			out = append(out, StepPair{Phase: ph.String(), Status: OnlyLeft, Left: stepOf(e)})
		}
		for _, e := range dr[n:] {
			out = append(out, StepPair{Phase: ph.String(), Status: OnlyRight, Right: stepOf(e)})
		}
		dl, dr = nil, nil
	}
	for _, df := range newDMP().DiffMainRunes(kl, kr, false) {
		n := len([]rune(df.Text))
		switch df.Type {
		case diffmatchpatch.DiffDelete:
			dl, i = append(dl, l[i:i+n]...), i+n
		case diffmatchpatch.DiffInsert:
			dr, j = append(dr, r[j:j+n]...), j+n
		default:
			flush()
			for k := range n {
				out = append(out, pair(ph, l[i+k], r[j+k]))
			}
			i, j = i+n, j+n
		}
	}
	flush()
	return out
}

func stepKeys(evs []*Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Doc.EventType + "\x00" + e.Doc.Tool
	}
	return out
}

func pair(ph model.Phase, l, r *Event) StepPair {
	d := Events(l, r)
	st := Same
	if d.Counts.Differ() {
		st = Changed
	}
	return StepPair{Phase: ph.String(), Status: st, Left: stepOf(l), Right: stepOf(r), Diff: d}
}

func stepOf(e *Event) *Step {
	return &Step{ID: e.ID, Type: e.Doc.EventType, Tool: e.Doc.Tool, Time: e.Doc.Timestamp, Source: e.Source}
}

func turnSide(key string, evs []*Event) TurnSide {
	s := TurnSide{Key: key, Totals: totalsOf(evs)}
	for _, e := range evs {
		if s.SessionID == "" {
			s.SessionID, s.AgentID = e.Doc.SessionID, e.Doc.AgentID
		}
		if e.Source != SourceArchive {
			s.Notes = append(s.Notes, e.ID+": "+e.Note)
		}
	}
	if len(evs) > 0 {
		s.First = evs[0].Doc.Timestamp
		if t, ok := span(evs); ok {
			s.First = t.first.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		}
	}
	return s
}

// totalsOf sums a turn's events.
func totalsOf(evs []*Event) Totals {
	t := Totals{Events: len(evs), Outcome: "unknown"}
	if sp, ok := span(evs); ok {
		t.DurationMs = sp.last.Sub(sp.first).Milliseconds()
	}
	var rewards float64
	for _, e := range evs {
		var v struct {
			Result *struct {
				Success   *bool    `json:"success"`
				LatencyMs *float64 `json:"latencyMs"`
			} `json:"result"`
			Evaluation *struct {
				RewardScore *float64 `json:"rewardScore"`
			} `json:"evaluation"`
		}
		if json.Unmarshal(e.Body, &v) != nil {
			continue
		}
		if v.Result != nil && v.Result.LatencyMs != nil {
			t.LatencyMs = ptr(deref(t.LatencyMs) + *v.Result.LatencyMs)
		}
		if v.Result != nil && v.Result.Success != nil {
			switch {
			case !*v.Result.Success:
				t.Outcome = "failed"
			case t.Outcome == "unknown":
				t.Outcome = "ok"
			}
		}
		// The index's reward_score is 0.5 when the event gave none: only
		// the archive's counts.
		if e.Source == SourceArchive && v.Evaluation != nil && v.Evaluation.RewardScore != nil {
			rewards += *v.Evaluation.RewardScore
			t.Rewarded++
		}
	}
	if t.Rewarded > 0 {
		t.Reward = ptr(rewards / float64(t.Rewarded))
	}
	return t
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func totalDeltas(l, r Totals) []Delta {
	num := func(name string, a, b *float64) Delta {
		d := Delta{Name: name, Left: a, Right: b}
		if a != nil && b != nil {
			d.Delta = ptr(*b - *a)
		}
		return d
	}
	f := func(n int64) *float64 { return ptr(float64(n)) }
	return []Delta{
		num("events", f(int64(l.Events)), f(int64(r.Events))),
		num("duration_ms", f(l.DurationMs), f(r.DurationMs)),
		num("latency_ms", l.LatencyMs, r.LatencyMs),
		num("reward", l.Reward, r.Reward),
	}
}
