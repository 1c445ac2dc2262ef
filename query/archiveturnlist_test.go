package query_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/querytest"
)

// Recent is the documents newest first (the slice is in writing order);
// the cursor is a position.
func (r *memReader) Recent(_ context.Context, src string, after query.Cursor, limit int) (query.Page, error) {
	e, err := expr.Parse(src)
	if err != nil {
		return query.Page{}, err
	}
	start := len(r.docs) - 1
	if after != "" {
		n, _ := strconv.Atoi(string(after))
		start = n - 1
	}
	var p query.Page
	i := start
	for ; i >= 0 && len(p.Docs) < limit; i-- {
		if querytest.Match(e, r.docs[i], time.Now()) {
			p.Docs = append(p.Docs, r.docs[i])
		}
	}
	if i >= 0 {
		p.Next = query.Cursor(strconv.Itoa(i + 1))
	}
	return p, nil
}

// coveredIndex is a source-system index that says so: every document
// lacks the turn key.
type coveredIndex struct{ turnIndex }

func (r coveredIndex) Coverage(context.Context) (query.Coverage, error) {
	n := int64(len(r.docs))
	return query.Coverage{Total: n, Plain: n, Lacking: map[string]int64{"turn_id": n, "tool": n}}, nil
}

func (r coveredIndex) Turns(context.Context, string, query.Cursor, int) (query.TurnPage, error) {
	return query.TurnPage{}, fmt.Errorf("the index's Turns was asked")
}

// TestArchiveTurnList: the Turns of an index without turn keys are the
// archive's turns, each listed once across pages (a turn straddling a
// page is listed where its newest document is met, with all its events),
// newest first, and their chains open by the key listed.
func TestArchiveTurnList(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var evs []ev
	types := []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult}
	// 12 turns of three events written interleaved by two sessions: turn
	// k's events at k*10s, +1s, +2s; sessions alternate.
	for k := range 12 {
		for i, typ := range types {
			evs = append(evs, ev{id: fmt.Sprintf("t%02d-%d", k, i), typ: typ, session: fmt.Sprintf("s%d", k%2),
				turn: fmt.Sprintf("turn-%02d", k), at: time.Duration(k*10+i) * time.Second})
		}
	}
	// Written out of order: turn 5's outcome lands after turn 6's events,
	// so in the index's order (ingestion) turn 5 is the newer.
	evs[17], evs[18], evs[19], evs[20] = evs[18], evs[19], evs[20], evs[17]
	r, a := fixture(t, base, evs)
	at := &query.ArchiveTurns{Reader: r, Archive: a}
	tr := query.TurnReader{Reader: coveredIndex{turnIndex{r}}, Archived: at}
	ctx := context.Background()
	var keys []string
	var after query.Cursor
	pages := 0
	for {
		p, err := tr.Turns(ctx, "", after, 4) // 4 documents a page: turns straddle pages
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if !strings.Contains(p.Note, "from the archive") {
			t.Errorf("page %d: note %q", pages, p.Note)
		}
		for _, s := range p.Turns {
			if s.Events != 3 {
				t.Errorf("%s: %d events, want 3", s.Key, s.Events)
			}
			keys = append(keys, s.Key)
		}
		if p.Next == "" {
			break
		}
		if !query.IsArchiveTurnsCursor(p.Next) {
			t.Fatalf("cursor %q", p.Next)
		}
		after = p.Next
	}
	var want []string
	for _, k := range []int{11, 10, 9, 8, 7, 5, 6, 4, 3, 2, 1, 0} {
		want = append(want, fmt.Sprintf("turn-%02d", k))
	}
	if strings.Join(keys, " ") != strings.Join(want, " ") || pages < 3 {
		t.Fatalf("turns over %d pages:\n got %v\nwant %v", pages, keys, want)
	}
	docs, err := tr.Turn(ctx, "turn-05")
	if err != nil || len(docs) != 3 || docs[0].EventID != "t05-0" || docs[2].EventID != "t05-2" {
		t.Errorf("Turn(turn-05) = %v, %v", docs, err)
	}
	if _, err := tr.Turn(ctx, "turn-unknown"); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "around one of its events") {
		t.Errorf("a turn key the index cannot look up: %v", err)
	}
	// A filter walks only the matching documents; the rows are still the
	// whole turns.
	p, err := tr.Turns(ctx, "type:agent_action session:s1", "", 50)
	if err != nil || len(p.Turns) != 6 || p.Turns[0].Key != "turn-11" || p.Turns[0].Events != 3 {
		t.Errorf("filtered: %+v, %v", p.Turns, err)
	}
	if _, err := tr.Turns(ctx, "", "12", 4); err == nil || !strings.Contains(err.Error(), "index's Turns") {
		t.Errorf("an index cursor goes to the index: %v", err)
	}
	if _, err := at.Turns(ctx, "", "archive:%%%", 4); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("a bad cursor: %v", err)
	}
}

// TestArchiveTurnListEngramIndex: an index whose documents carry the turn
// key answers Turns itself.
func TestArchiveTurnListEngramIndex(t *testing.T) {
	r, a := fixture(t, time.Now(), []ev{{id: "e1", typ: model.TypeUserInput, session: "s", turn: "t"}})
	tr := query.TurnReader{Reader: fullIndex{coveredIndex{turnIndex{r}}}, Archived: &query.ArchiveTurns{Reader: r, Archive: a}}
	if _, err := tr.Turns(context.Background(), "", "", 10); err == nil || !strings.Contains(err.Error(), "index's Turns") {
		t.Errorf("engram index: %v", err)
	}
}

type fullIndex struct{ coveredIndex }

func (fullIndex) Coverage(context.Context) (query.Coverage, error) {
	return query.Coverage{Total: 1, Lacking: map[string]int64{}}, nil
}

// TestArchiveTurnRowOpensAfterTheCacheTurnsOver: the chain of a row listed
// long ago opens though its turn has left the turn cache (bounded): it is
// found again from an event of it.
func TestArchiveTurnRowOpensAfterTheCacheTurnsOver(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var evs []ev
	for k := range 400 { // 400 turns × 4 cache entries: past the bound
		for i, typ := range []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult} {
			evs = append(evs, ev{id: fmt.Sprintf("t%03d-%d", k, i), typ: typ, session: fmt.Sprintf("s%03d", k),
				turn: fmt.Sprintf("turn-%03d", k), at: time.Duration(k*3+i) * time.Second})
		}
	}
	r, a := fixture(t, base, evs)
	at := &query.ArchiveTurns{Reader: r, Archive: a}
	tr := query.TurnReader{Reader: coveredIndex{turnIndex{r}}, Archived: at}
	ctx := context.Background()
	var after query.Cursor
	n := 0
	for {
		p, err := tr.Turns(ctx, "", after, 50)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Turns)
		if after = p.Next; after == "" {
			break
		}
	}
	if n != 400 || at.Cached("turn-399") != nil {
		t.Fatalf("%d turns listed; the first still cached: %v", n, at.Cached("turn-399") != nil)
	}
	docs, err := tr.Turn(ctx, "turn-399")
	if err != nil || len(docs) != 3 || docs[0].EventID != "t399-0" {
		t.Errorf("Turn(turn-399) after the cache turned over: %d docs, %v", len(docs), err)
	}
}
