package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/querytest"
)

// memReader answers Document and Search over plain documents (what a
// source-system index gives); the rest of query.Reader is not used.
type memReader struct {
	query.Reader
	docs     []*model.IndexDoc
	searches atomic.Int32
}

func (r *memReader) Document(_ context.Context, id string) (*model.IndexDoc, error) {
	for _, d := range r.docs {
		if d.EventID == id {
			return d, nil
		}
	}
	return nil, backend.ErrNotFound
}

func (r *memReader) Search(_ context.Context, src string, _ query.Cursor, limit int) (query.Page, error) {
	r.searches.Add(1)
	e, err := expr.Parse(src)
	if err != nil {
		return query.Page{}, err
	}
	var p query.Page
	for i := len(r.docs) - 1; i >= 0 && len(p.Docs) < limit; i-- {
		if querytest.Match(e, r.docs[i], time.Now()) {
			p.Docs = append(p.Docs, r.docs[i])
		}
	}
	return p, nil
}

// memArchive holds archived events by key and counts the reads.
type memArchive struct {
	objs  map[string][]byte
	gets  atomic.Int32
	block chan struct{} // when set, Get waits for it or ctx
}

func (a *memArchive) Get(ctx context.Context, key string, _ int64) (*ingest.Object, error) {
	a.gets.Add(1)
	if a.block != nil {
		select {
		case <-a.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	b, ok := a.objs[key]
	if !ok {
		return nil, backend.ErrNotFound
	}
	return &ingest.Object{Key: key, Body: b, Size: int64(len(b))}, nil
}

func (a *memArchive) List(context.Context, string, func(string, int64) error) error { return nil }

type ev struct {
	id, typ, session, turn, trace, tool string
	at                                  time.Duration // after base
	ok                                  *bool
}

func fixture(t *testing.T, base time.Time, evs []ev) (*memReader, *memArchive) {
	r := &memReader{}
	a := &memArchive{objs: map[string][]byte{}}
	for _, x := range evs {
		ts := base.Add(x.at).UTC().Format("2006-01-02T15:04:05.000Z")
		key, err := model.ArchiveKey(x.id, ts)
		if err != nil {
			t.Fatal(err)
		}
		r.docs = append(r.docs, &model.IndexDoc{EventID: x.id, Timestamp: ts, EventType: x.typ, SessionID: x.session,
			Summary: "s", Embedding: []float64{}, Structured: json.RawMessage(`{}`), ObjectStorageKey: key, Tags: []string{}})
		e := map[string]any{"eventId": x.id, "timestamp": ts, "type": x.typ,
			"context": map[string]any{"sessionId": x.session, "turnId": x.turn, "traceId": x.trace},
			"input":   map[string]any{"text": "s"}}
		if x.tool != "" {
			e["action"] = map[string]any{"tool": x.tool}
		}
		if x.ok != nil {
			e["result"] = map[string]any{"output": "o", "success": *x.ok, "latencyMs": 1234.5}
		}
		a.objs[key], _ = json.Marshal(e)
	}
	return r, a
}

func TestArchiveTurns(t *testing.T) {
	no := false
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	r, a := fixture(t, base, []ev{
		{id: "e1", typ: model.TypeToolResult, session: "s1", turn: "turn-A", at: 0, ok: &no}, // outcome first in time
		{id: "e2", typ: model.TypeUserInput, session: "s1", turn: "turn-A", at: 0},
		{id: "e3", typ: model.TypeAgentAction, session: "s1", turn: "turn-A", tool: "kubectl", at: -time.Second},
		{id: "b1", typ: model.TypeUserInput, session: "s1", turn: "turn-B", at: 500 * time.Millisecond},
		{id: "x1", typ: model.TypeAgentAction, session: "s2", turn: "turn-A", at: 0},                 // another session
		{id: "late", typ: model.TypeToolResult, session: "s1", turn: "turn-A", at: 10 * time.Minute}, // beyond the window
		{id: "tr1", typ: model.TypeUserInput, session: "s1", trace: "trace-T", at: 3 * time.Second},
		{id: "tr2", typ: model.TypeToolResult, session: "s1", trace: "trace-T", at: 4 * time.Second},
		{id: "alone", typ: model.TypeUserInput, session: "s1", at: 5 * time.Second},
	})
	at := &query.ArchiveTurns{Reader: r, Archive: a}
	ctx := context.Background()
	turn, err := at.Find(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range turn.Docs {
		got = append(got, d.EventID)
	}
	if strings.Join(got, " ") != "e2 e3 e1" || turn.Key != "turn-A" {
		t.Fatalf("turn %q = %v, want turn-A = e2 e3 e1 (observation, action, outcome)", turn.Key, got)
	}
	if d := turn.Docs[1]; d.Tool != "kubectl" || d.TurnID != "turn-A" {
		t.Errorf("action from the archive: tool %q turn %q", d.Tool, d.TurnID)
	}
	if d := turn.Docs[2]; d.Success == nil || *d.Success || d.LatencyMs == nil || *d.LatencyMs != 1234 {
		t.Errorf("outcome from the archive: success %v latency %v", d.Success, d.LatencyMs)
	}
	// The session's documents within ±2m: e1 e2 e3 b1 tr1 tr2 alone.
	if turn.Candidates != 7 || turn.Window != query.DefaultTurnWindow || turn.Truncated {
		t.Errorf("window: %d candidates in %s (truncated %v)", turn.Candidates, turn.Window, turn.Truncated)
	}
	if !strings.Contains(turn.Searched, `session "s1" within 2m0s`) || !strings.Contains(turn.Searched, "3 belong to the turn") {
		t.Errorf("Searched = %q", turn.Searched)
	}
	// Cached for every member, and the archived objects for the window.
	gets, searches := a.gets.Load(), r.searches.Load()
	if again, err := at.Find(ctx, "e3"); err != nil || again != turn {
		t.Errorf("Find(e3) after Find(e1): %v, %v", again, err)
	}
	tr, err := at.Find(ctx, "tr2")
	if err != nil || len(tr.Docs) != 2 || tr.Key != "trace-T" {
		t.Fatalf("trace turn: %+v, %v", tr, err)
	}
	if a.gets.Load() != gets || r.searches.Load() != searches+1 {
		t.Errorf("cached: %d more archive reads, %d more searches; want 0 and 1", a.gets.Load()-gets, r.searches.Load()-searches)
	}
	if one, err := at.Find(ctx, "alone"); err != nil || len(one.Docs) != 1 || one.Key != "alone" {
		t.Errorf("event without turnId or traceId: %+v, %v", one, err)
	}
	if _, err := at.Find(ctx, "nosuch"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("unknown event: %v", err)
	}

	// TurnReader turns the index's lone plain document into the chain.
	tr2 := query.TurnReader{Reader: turnIndex{r}, Archived: at}
	if docs, err := tr2.Turn(ctx, "e2"); err != nil || len(docs) != 3 {
		t.Errorf("TurnReader.Turn(e2) = %d docs, %v", len(docs), err)
	}
}

// turnIndex answers Turn as a source-system index does: each event alone.
type turnIndex struct{ *memReader }

func (r turnIndex) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	d, err := r.Document(ctx, key)
	if err != nil {
		return nil, err
	}
	return []*model.IndexDoc{d}, nil
}

// TestArchiveTurnsBounds: a busy session halves the window until its
// documents fit, and a cancelled context stops the reads.
func TestArchiveTurnsBounds(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var evs []ev
	for i := range 100 {
		evs = append(evs, ev{id: fmt.Sprintf("e%03d", i), typ: model.TypeUserInput, session: "s", turn: fmt.Sprintf("t%d", i%10),
			at: time.Duration(i-50) * 2 * time.Second})
	}
	r, a := fixture(t, base, evs)
	at := &query.ArchiveTurns{Reader: r, Archive: a, MaxEvents: 30}
	turn, err := at.Find(context.Background(), "e050")
	if err != nil {
		t.Fatal(err)
	}
	// ±2m holds all 100, ±1m 61, ±30s 31, ±15s 15.
	if turn.Window != 15*time.Second || turn.Candidates != 15 || turn.Read != 15 {
		t.Errorf("window %s, %d candidates, %d read", turn.Window, turn.Candidates, turn.Read)
	}
	// t0's events are 20 s apart: the halved window holds only e050 (the
	// bound cuts the turn, and says which window it searched).
	if len(turn.Docs) != 1 || !strings.Contains(turn.Searched, "within 15s") {
		t.Errorf("turn t0 within ±15s: %d docs (%s)", len(turn.Docs), turn.Searched)
	}

	a.block = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := (&query.ArchiveTurns{Reader: r, Archive: a}).Find(ctx, "e010")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Find: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Find did not stop when cancelled")
	}
}
