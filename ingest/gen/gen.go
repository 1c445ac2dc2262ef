package gen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Config shapes a generated stream.
type Config struct {
	Seed     uint64
	Start    time.Time // timestamp of the first event (default 2026-05-08T09:00:00Z)
	Agents   int       // default 5
	Sessions int       // default 12
	Tenants  []string  // default acme, globex
	Prefix   string    // prepended to event ids, so runs can be told apart
	// FirstTurn numbers the first generated turn (default 1), so a second
	// generator can continue a data set without reusing its ids.
	FirstTurn int
	// TurnGap, when set, is the mean idle time before each turn (each gap
	// drawn between 0.2 and 1.8 of it), so a data set spreads over hours
	// as an agent's day does rather than minutes.
	TurnGap time.Duration
	// Clock, when set, stamps a turn's observation with its time instead
	// of a generated one (a live simulated agent); the action and the
	// outcome follow it as they would, so they may lie ahead of the clock.
	Clock func() time.Time
}

// Generator yields events in turn order.
type Generator struct {
	cfg  Config
	rnd  *rand.Rand
	now  time.Time
	turn int
	buf  []map[string]any
}

// New returns a generator for cfg.
func New(cfg Config) *Generator {
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2026, 5, 8, 9, 0, 0, 0, time.UTC)
	}
	if cfg.Agents <= 0 {
		cfg.Agents = 5
	}
	if cfg.Sessions <= 0 {
		cfg.Sessions = 12
	}
	if len(cfg.Tenants) == 0 {
		cfg.Tenants = []string{"acme", "globex"}
	}
	return &Generator{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, 0x656e6772616d)), now: cfg.Start, turn: max(cfg.FirstTurn, 1) - 1}
}

// Next returns the next event as a JSON object.
func (g *Generator) Next() []byte {
	if len(g.buf) == 0 {
		g.buf = g.newTurn()
	}
	ev := g.buf[0]
	g.buf = g.buf[1:]
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // generated values are always encodable
	}
	return b
}

// Turn returns the events of the next whole turn.
func (g *Generator) Turn() [][]byte {
	var out [][]byte
	for _, ev := range g.newTurn() {
		b, _ := json.Marshal(ev)
		out = append(out, b)
	}
	return out
}

var scenarios = []struct {
	tool, perceive, reason, output, tag string
}{
	{"code_review", "PR #%d changes the retry policy of the payment client", "The diff widens the retry window; I need to check idempotency keys before approving.\n\nThe client reuses the request id across retries, so duplicate charges are prevented. I will approve with a note on the jitter bound.", "Approved with one comment on jitter.", "review"},
	{"web_search", "User asks for the latest guidance on vector index sizing (%d dims)", "The question depends on the engine. HNSW memory grows with m and dimension; I should search for the engine's documented formula rather than guess.", "Found the sizing formula: 1.1 * (4 * d + 8 * m) bytes per vector.", "research"},
	{"sql_query", "Transaction %d flagged by the velocity rule", "Three transfers in under a minute to new payees. Pull the account history for the last 30 days and compare with the customer's baseline before escalating.", "History shows a similar pattern monthly: payroll. Not suspicious.", "aml"},
	{"shell", "Build %d failed on the integration stage", "The failure is a timeout talking to the object store. Check whether the bucket exists in the test environment before blaming the code.", "Bucket missing in staging; created it and re-ran the build.", "ci"},
	{"calendar", "Meeting request from agent-b about incident %d", "I have overlapping commitments; propose the earliest slot after the postmortem draft is due so the discussion has material.", "Proposed Thursday 10:00; accepted.", "coordination"},
	{"summarize", "Support thread %d exceeds 40 messages", "Condense the thread into decisions, open questions and owners. Keep customer quotes verbatim where they carry commitments.", "Summary posted: 3 decisions, 2 open questions.", "support"},
}

var failures = []string{"TIMEOUT", "RATE_LIMITED", "PERMISSION_DENIED", "TOOL_ERROR"}

func (g *Generator) newTurn() []map[string]any {
	g.turn++
	r := g.rnd
	sc := scenarios[r.IntN(len(scenarios))]
	agent := fmt.Sprintf("agent-%c", 'a'+rune(r.IntN(g.cfg.Agents)))
	session := fmt.Sprintf("session-%03d", r.IntN(g.cfg.Sessions)+1)
	tenant := g.cfg.Tenants[r.IntN(len(g.cfg.Tenants))]
	turn := fmt.Sprintf("%sturn-%06d", g.cfg.Prefix, g.turn)
	trace := fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())
	subject := fmt.Sprintf(sc.perceive, 100+r.IntN(9000))
	ok := r.Float64() > 0.18
	latency := 20 + r.IntN(2500)
	ctx := map[string]any{"sessionId": session, "agentId": agent, "traceId": trace, "turnId": turn, "tenantId": tenant}
	tags := []string{sc.tag}
	if r.IntN(3) == 0 {
		tags = append(tags, "demo")
	}
	if !ok {
		tags = append(tags, "incident")
	}
	// base is an event gap after the previous one: the agent's thinking,
	// or the tool call's latency.
	base := func(kind, suffix string, gap time.Duration) map[string]any {
		g.now = g.now.Add(gap)
		if g.cfg.Clock != nil && kind == "observation" {
			g.now = g.cfg.Clock()
		}
		return map[string]any{
			"eventId": fmt.Sprintf("%s%s-%06d-%s", g.cfg.Prefix, agent, g.turn, suffix), "timestamp": g.now.Format(time.RFC3339Nano),
			"type": kind, "context": ctx, "importanceScore": 0, "tags": tags,
		}
	}
	think := func() time.Duration { return time.Duration(200+r.IntN(4000)) * time.Millisecond }
	idle := time.Duration(0)
	if g.cfg.TurnGap > 0 {
		idle = time.Duration(float64(g.cfg.TurnGap) * (0.2 + 1.6*r.Float64()))
	}
	obs := base("observation", "obs", idle+think())
	obs["input"] = map[string]any{"text": subject, "embedding": []float64{}, "structured": map[string]any{"subject": subject}}
	act := base("action", "act", think())
	act["input"] = map[string]any{"text": "Decide how to handle: " + subject, "embedding": []float64{}}
	act["internalState"] = map[string]any{"confidence": round2(0.4 + 0.6*r.Float64()), "activePlan": "Handle " + sc.tag + " work item"}
	act["action"] = map[string]any{"tool": sc.tool, "parameters": map[string]any{"ref": g.turn}, "reasoning": g.reasoning(sc.reason)}
	// The outcome comes once the call has taken its latency, and its text
	// says what its result says.
	out := base("outcome", "out", time.Duration(latency)*time.Millisecond+time.Duration(r.IntN(50))*time.Millisecond)
	res := map[string]any{"output": sc.output, "success": ok, "latencyMs": latency}
	if !ok {
		code := failures[r.IntN(len(failures))]
		res["output"] = "The " + sc.tool + " call failed before completing (" + code + ")."
		res["errorCode"] = code
	}
	out["input"] = map[string]any{"text": "Result of " + sc.tool + ": " + res["output"].(string), "embedding": []float64{}}
	out["action"] = map[string]any{"tool": sc.tool}
	out["result"] = res
	out["evaluation"] = map[string]any{"rewardScore": round2(reward(ok, r)), "selfAssessedQuality": round2(0.3 + 0.7*r.Float64())}
	return []map[string]any{obs, act, out}
}

// reasoning makes multi-paragraph reasoning of varied length.
func (g *Generator) reasoning(core string) string {
	paras := []string{core}
	extra := []string{
		"Alternatives considered: escalate to a human now, or gather more evidence first. Evidence is cheap here, so gather it.",
		"Risk: if I am wrong, the cost is a delayed response, not data loss. That bounds how careful this step must be.",
		"Memory check: a similar case last week resolved the same way, which raises my confidence but is not proof.",
	}
	for i := range g.rnd.IntN(len(extra) + 1) {
		paras = append(paras, extra[i])
	}
	return strings.Join(paras, "\n\n")
}

func reward(ok bool, r *rand.Rand) float64 {
	if ok {
		return 0.6 + 0.4*r.Float64()
	}
	return 0.3 * r.Float64()
}

func round2(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

// Events is the first n events of a generator of cfg.
func Events(cfg Config, n int) [][]byte {
	g := New(cfg)
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}
