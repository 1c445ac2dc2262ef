package querytest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"engram/model"
)

// Names the data set uses, for tests that want to aim at something.
const (
	TenantA = "acme"
	TenantB = "globex"
	// sharedTrace is the turn key of a turn with one TenantA document and
	// one document without a tenant (source-system shaped).
	sharedTrace = "trace-shared"
	// topWord appears in a handful of summaries, three times in one of
	// them (TopWordDoc), once in the others.
	topWord = "lantern"
	// uniqueWord appears in exactly one summary.
	uniqueWord = "zephyr"
	// phrase is two words that some summaries hold side by side and some
	// apart.
	phrase = "falcon harbor"
)

// vocabulary of summaries: distinct English stems, no stop words, so that
// SQLite's porter tokenizer and OpenSearch's english analyzer agree with
// the simple reference tokenizer of this package.
var vocabulary = strings.Fields(`memory agent planner vector cache kafka bucket index query orchid granite
meadow copper river signal beacon quartz summit violet ember glacier canyon thistle walnut prism
saffron tundra marble cobalt juniper nebula pixel rocket sonar`)

var (
	obsTypes       = []string{model.TypeUserInput, model.TypeEnvironmentalObservation, model.TypeSystemEvent, model.TypeObservation}
	actTypes       = []string{model.TypeAgentAction, model.TypeAction}
	outTypes       = []string{model.TypeToolResult, model.TypeConsolidationOutput, model.TypeOutcome}
	sourceObsTypes = obsTypes[:3]
	sourceActTypes = actTypes[:1]
	sourceOutTypes = outTypes[:2]
	tagPool        = []string{"demo", "prod", "memory", "retry", "search", "eval"}
	tools          = []string{"search", "web search", "calculator", "kafka.publish"}
	importances    = []float64{0.1, 0.25, 0.5, 0.7, 0.79, 0.9, 1}
)

// Generate is the suite's deterministic data set, about n documents in
// ingestion order before now: turns across sessions, agents and two tenants,
// interleaved, with odd timestamps, failures, tags and documents shaped like
// the source system's. Every timestamp is 20-40 s past a whole minute, so
// whole-minute relative times have no document near their boundary for 20 s.
func Generate(now time.Time, n int) []*model.IndexDoc {
	rng := rand.New(rand.NewPCG(20260508, 42))
	type turn struct{ docs []*model.IndexDoc }
	var turns []turn
	count := 0
	ids := rng.Perm(10 * n) // event ids in an order unrelated to ingestion
	nextID := func() string {
		id := fmt.Sprintf("evt-%05d", ids[count])
		count++
		return id
	}
	total := 0
	for j := 0; total < n; j++ {
		var t turn
		// Newest turns are a couple of minutes old; turns are ~40 minutes apart.
		minutes := (n-total)*10 - 8 + rng.IntN(5)
		base := now.Truncate(time.Millisecond).Add(-time.Duration(minutes)*time.Minute - 33*time.Second)
		shape := rng.IntN(10)
		session := fmt.Sprintf("sess-%d", rng.IntN(6))
		agent := []string{"agent-a", "agent-b", "agent-c", ""}[rng.IntN(4)]
		tenant := []string{TenantA, TenantB}[rng.IntN(2)]
		switch {
		case shape < 2: // source system, alone in its turn
			d := newDoc(rng, nextID(), base, sourceObsTypes[rng.IntN(3)], session, agent)
			t.docs = append(t.docs, d)
		case shape < 3: // source system, grouped by trace
			trace := fmt.Sprintf("trace-%03d", j)
			for _, types := range [][]string{sourceObsTypes, sourceActTypes, sourceOutTypes}[:1+rng.IntN(3)] {
				d := newDoc(rng, nextID(), jitter(rng, base), types[rng.IntN(len(types))], session, agent)
				d.TraceID = trace
				t.docs = append(t.docs, d)
			}
		default: // engram: turn_id, tenant, tool, success, latency
			turnID := fmt.Sprintf("turn-%03d", j)
			order := rng.IntN(10) // 0: equal timestamps, 1: inverted, else increasing
			phases := [][]string{obsTypes, actTypes, outTypes}
			if rng.IntN(4) == 0 {
				phases = append(phases, actTypes, outTypes) // a second step
			}
			phases = phases[:1+rng.IntN(len(phases))]
			for k, types := range phases {
				ts := base.Add(time.Duration(k) * 1500 * time.Millisecond)
				switch order {
				case 0:
					ts = base
				case 1:
					ts = base.Add(time.Duration(len(phases)-k) * 1500 * time.Millisecond)
				}
				d := newDoc(rng, nextID(), ts, types[rng.IntN(len(types))], session, agent)
				d.TurnID, d.TenantID = turnID, tenant
				if rng.IntN(3) == 0 {
					d.TraceID = fmt.Sprintf("trace-%03d", j)
				}
				if model.PhaseOf(d.EventType) != model.PhaseObservation {
					d.Tool = tools[rng.IntN(len(tools))]
					lat := int64(rng.IntN(2000))
					if rng.IntN(8) == 0 {
						lat = 500
					}
					d.LatencyMs = &lat
				}
				if model.PhaseOf(d.EventType) == model.PhaseOutcome {
					ok := rng.IntN(4) != 0
					d.Success = &ok
				}
				t.docs = append(t.docs, d)
			}
		}
		total += len(t.docs)
		turns = append(turns, t)
	}

	// The turn shared by a tenant's document and a source-system one.
	mid := &turns[len(turns)/2]
	base, _ := model.ParseTimestamp(mid.docs[0].Timestamp)
	a := newDoc(rng, nextID(), base, model.TypeUserInput, "sess-shared", "agent-a")
	a.TraceID, a.TenantID = sharedTrace, TenantA
	b := newDoc(rng, nextID(), base.Add(-time.Second), model.TypeToolResult, "sess-shared", "")
	b.TraceID = sharedTrace
	mid.docs = append(mid.docs, a, b)

	// Interleave: up to three turns in flight, each written in an order of
	// its own (sometimes the outcome before the observation).
	var out []*model.IndexDoc
	var flight [][]*model.IndexDoc
	next := 0
	for next < len(turns) || len(flight) > 0 {
		for len(flight) < 3 && next < len(turns) {
			ds := append([]*model.IndexDoc(nil), turns[next].docs...)
			if rng.IntN(3) == 0 {
				rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
			}
			flight = append(flight, ds)
			next++
		}
		i := rng.IntN(len(flight))
		out = append(out, flight[i][0])
		if flight[i] = flight[i][1:]; len(flight[i]) == 0 {
			flight = append(flight[:i], flight[i+1:]...)
		}
	}

	// Summaries with controlled words.
	pick := func(except int) int {
		for {
			if i := rng.IntN(len(out)); i != except {
				return i
			}
		}
	}
	top := pick(-1)
	out[top].Summary = "lantern quartz lantern summit lantern beacon"
	for range 5 {
		i := pick(top)
		out[i].Summary = strings.Replace(out[i].Summary, " ", " lantern ", 1)
	}
	markSources(out)
	u := pick(top)
	out[u].Summary += " zephyr"
	for k := range 12 {
		i := pick(top)
		if i == u {
			continue
		}
		if k%2 == 0 {
			out[i].Summary += ", falcon harbor."
		} else {
			out[i].Summary = "harbor " + out[i].Summary + " falcon"
		}
	}
	return out
}

// systemSession is the session of the source-system shaped documents
// markSources moves to a system session: no source field, so that
// source:system finds them by their session id alone.
const systemSession = "system:consolidation"

// markSources gives some of engram's documents a source (context.source)
// and moves a few source-system shaped ones (no extensions) into
// systemSession, by position, drawing nothing from the generator, so
// that the rest of the data set is what it was before sources.
func markSources(docs []*model.IndexDoc) {
	for i, d := range docs {
		switch {
		case d.IngestedAt == "" && d.TurnID == "" && d.TenantID == "" && i%9 == 4:
			d.SessionID = systemSession
		case d.TurnID == "":
		case i%7 == 1:
			d.Source = model.SourceSession
		case i%7 == 3:
			d.Source = model.SourceAmbient
			d.SessionID = "system:ambient:telemetry"
		case i%7 == 5:
			d.Source = model.SourceSystem
		}
	}
}

// jitter moves t by up to ±2 s.
func jitter(rng *rand.Rand, t time.Time) time.Time {
	return t.Add(time.Duration(rng.IntN(4000)-2000) * time.Millisecond)
}

const tsLayout = "2006-01-02T15:04:05.000Z07:00"

var zones = []*time.Location{time.UTC, time.FixedZone("", 2*3600), time.FixedZone("", -5*3600-1800)}

func newDoc(rng *rand.Rand, id string, ts time.Time, typ, session, agent string) *model.IndexDoc {
	words := make([]string, 5+rng.IntN(6))
	for i := range words {
		words[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	if rng.IntN(3) == 0 {
		words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	}
	stamp := ts.In(zones[rng.IntN(len(zones))]).Format(tsLayout)
	key, err := model.ArchiveKey(id, stamp)
	if err != nil {
		panic(err)
	}
	emb := make([]float64, 8)
	for i := range emb {
		emb[i] = math.Round((rng.Float64()*2-1)*1000) / 1000
	}
	var tags []string
	for _, tg := range tagPool {
		if rng.IntN(4) == 0 {
			tags = append(tags, tg)
		}
	}
	if tags == nil {
		tags = []string{}
	}
	imp := importances[rng.IntN(len(importances))]
	if rng.IntN(2) == 0 {
		imp = math.Round(rng.Float64()*1000) / 1000
	}
	d := &model.IndexDoc{
		EventID:          id,
		Timestamp:        stamp,
		EventType:        typ,
		SessionID:        session,
		AgentID:          agent,
		Summary:          strings.Join(words, " "),
		Embedding:        emb,
		Structured:       json.RawMessage(fmt.Sprintf(`{"n":%d}`, rng.IntN(100))),
		ImportanceScore:  imp,
		RewardScore:      0.5,
		Confidence:       0.5,
		DecayFactor:      1,
		ObjectStorageKey: key,
		Tags:             tags,
	}
	if rng.IntN(3) != 0 {
		d.RewardScore = math.Round(rng.Float64()*100) / 100
		d.Confidence = math.Round(rng.Float64()*100) / 100
	}
	if rng.IntN(4) == 0 {
		d.UserID = fmt.Sprintf("user-%d", rng.IntN(3))
	}
	return d
}
