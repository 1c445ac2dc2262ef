package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/querytest"
)

// sourceIndex is an index the source system wrote: plain documents (no
// turn_id, trace_id, ingested_at, tool, success, latency), each its own
// turn, newest first. The archive holds the full events.
type sourceIndex struct {
	query.Reader
	docs []*model.IndexDoc // oldest first
}

func (r *sourceIndex) Document(_ context.Context, id string) (*model.IndexDoc, error) {
	for _, d := range r.docs {
		if d.EventID == id {
			return d, nil
		}
	}
	return nil, backend.ErrNotFound
}

func (r *sourceIndex) match(src string, limit int) (query.Page, error) {
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

func (r *sourceIndex) Search(_ context.Context, src string, _ query.Cursor, limit int) (query.Page, error) {
	return r.match(src, limit)
}

func (r *sourceIndex) Recent(_ context.Context, src string, _ query.Cursor, limit int) (query.Page, error) {
	return r.match(src, limit)
}

// Turn is the index's answer without turn keys: the lone document of an
// event id.
func (r *sourceIndex) Turn(ctx context.Context, key string) ([]*model.IndexDoc, error) {
	d, err := r.Document(ctx, key)
	if err != nil {
		return nil, err
	}
	return []*model.IndexDoc{d}, nil
}

func (r *sourceIndex) Coverage(context.Context) (query.Coverage, error) {
	n := int64(len(r.docs))
	return query.Coverage{Total: n, Plain: n, Lacking: map[string]int64{"turn_id": n, "trace_id": n}}, nil
}

func (r *sourceIndex) Describe() string { return "the source index" }

type objects map[string][]byte

func (o objects) Get(_ context.Context, key string, _ int64) (*ingest.Object, error) {
	b, ok := o[key]
	if !ok {
		return nil, backend.ErrNotFound
	}
	return &ingest.Object{Key: key, Body: b, Size: int64(len(b))}, nil
}

func (o objects) List(context.Context, string, func(string, int64) error) error { return nil }

// sourceFixture is two turns of session s-1 (t-a: observation, action,
// outcome ok; t-b: observation, outcome failed) as the source system
// writes them.
func sourceFixture(t *testing.T) (*sourceIndex, objects) {
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	r, a := &sourceIndex{}, objects{}
	for _, x := range []struct {
		id, typ, turn, tool, text string
		at                        time.Duration
		ok                        *bool
		lat                       float64
	}{
		{"a1", "user_input", "t-a", "", "where is the café?", 0, nil, 0},
		{"a2", "agent_action", "t-a", "search", "look it up", time.Second, nil, 0},
		{"a3", "tool_result", "t-a", "search", "found it", 2 * time.Second, ptrTo(true), 120},
		{"b1", "user_input", "t-b", "", "where is the café now?", 30 * time.Second, nil, 0},
		{"b2", "tool_result", "t-b", "search", "timed out", 35 * time.Second, ptrTo(false), 4000},
	} {
		ts := base.Add(x.at).Format("2006-01-02T15:04:05.000Z")
		key, _ := model.ArchiveKey(x.id, ts)
		r.docs = append(r.docs, &model.IndexDoc{EventID: x.id, Timestamp: ts, EventType: x.typ, SessionID: "s-1", Summary: x.text,
			Embedding: []float64{}, Structured: json.RawMessage(`{}`), ObjectStorageKey: key, Tags: []string{}, RewardScore: 0.5, Confidence: 0.5})
		ev := map[string]any{"eventId": x.id, "timestamp": ts, "type": x.typ,
			"context": map[string]any{"sessionId": "s-1", "turnId": x.turn}, "input": map[string]any{"text": x.text}}
		if x.tool != "" {
			ev["action"] = map[string]any{"tool": x.tool}
		}
		if x.ok != nil {
			ev["result"] = map[string]any{"output": x.text, "success": *x.ok, "latencyMs": x.lat}
		}
		a[key], _ = json.Marshal(ev)
	}
	return r, a
}

func ptrTo[T any](v T) *T { return &v }

// On an index the source system wrote, diff --turn finds both turns in the
// archive from one event of each.
func TestDiffTurnsSourceIndex(t *testing.T) {
	r, a := sourceFixture(t)
	var out, errb bytes.Buffer
	e := &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}
	if err := diffTurns(context.Background(), e, &diffOpts{}, r, a, "a2", "b1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"left   turn t-a  session s-1", "right  turn t-b  session s-1", "3 events  outcome ok", "2 events  outcome failed",
		"step 2  action  only in the left turn", "step 3  outcome  differs", "latency_ms   120   4000   +3880 (+3233%)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

// engram session on the same index: the turns come from the archive.
func TestSessionSourceIndex(t *testing.T) {
	r, a := sourceFixture(t)
	s, err := readSession(context.Background(), r, true, query.TurnReader{Reader: r, Archived: &query.ArchiveTurns{Reader: r, Archive: a}}, "s-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 2 || s.Turns[0].Key != "t-a" || s.Turns[1].Key != "t-b" || s.Turns[0].Events != 3 ||
		s.Turns[1].Outcome != "failed" || s.Turns[1].IdleBeforeMs != 28000 || s.Note == "" {
		t.Errorf("session %+v", s)
	}
	var b strings.Builder
	writeSession(&b, s, 120, false)
	if !strings.Contains(b.String(), "t-b") {
		t.Errorf("session text:\n%s", b.String())
	}
}
