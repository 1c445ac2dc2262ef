package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/themes"
	"engram/ui/uikit"
)

// memReader is an index in memory: documents in the order indexed, the
// tail's cursor their position, and filters of the one form agent:NAME
// ("bad:" is refused, as an index may refuse a filter that parsed).
type memReader struct {
	uikit.Reader // the methods the stream does not call
	mu           sync.Mutex
	docs         []*model.IndexDoc
}

func (r *memReader) add(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range n {
		i := len(r.docs)
		r.docs = append(r.docs, &model.IndexDoc{
			EventID:   fmt.Sprintf("ev-%03d", i),
			EventType: "action",
			AgentID:   []string{"planner", "coder", "tester", "critic"}[i%4],
			Summary:   fmt.Sprintf("step %d", i),
			Timestamp: time.Date(2026, 5, 8, 10, 0, i, 0, time.UTC).Format(time.RFC3339Nano),
		})
	}
}

func matches(expr string, d *model.IndexDoc) (bool, error) {
	switch {
	case expr == "":
		return true, nil
	case strings.HasPrefix(expr, "bad:"):
		return false, errors.New("refused")
	}
	return "agent:"+d.AgentID == expr, nil
}

func (r *memReader) Recent(_ context.Context, expr string, after query.Cursor, limit int) (query.Page, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := len(r.docs)
	if after != "" {
		from, _ = strconv.Atoi(string(after))
	}
	var p query.Page
	for i := from - 1; i >= 0; i-- {
		ok, err := matches(expr, r.docs[i])
		if err != nil {
			return query.Page{}, err
		}
		if !ok {
			continue
		}
		if len(p.Docs) == limit {
			p.Next = query.Cursor(strconv.Itoa(i + 1))
			break
		}
		p.Docs = append(p.Docs, r.docs[i])
	}
	return p, nil
}

func (r *memReader) TailStart(context.Context) (query.Cursor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return query.Cursor(strconv.Itoa(len(r.docs))), nil
}

func (r *memReader) Tail(_ context.Context, after query.Cursor, limit int) (query.Page, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from, err := strconv.Atoi(string(after))
	if err != nil {
		return query.Page{}, err
	}
	to := min(len(r.docs), from+limit)
	return query.Page{Docs: append([]*model.IndexDoc(nil), r.docs[from:to]...), Next: query.Cursor(strconv.Itoa(to))}, nil
}

func (r *memReader) Match(_ context.Context, expr string, ids []string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, d := range r.docs {
		ok, err := matches(expr, d)
		if err != nil {
			return nil, err
		}
		if ok {
			out[d.EventID] = true
		}
	}
	for id := range out {
		keep := false
		for _, w := range ids {
			keep = keep || w == id
		}
		if !keep {
			delete(out, id)
		}
	}
	return out, nil
}

func (r *memReader) Count(context.Context) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.docs)), nil
}

// clock is the test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// newTailModel is a stream over r whose timers are real but instant
// (Poll 1µs), so that a test sees every tick the model arms as a TickMsg
// among the messages its commands return.
func newTailModel(r *memReader, clk *clock) *Model {
	c := &uikit.Common{Styles: uikit.NewStyles(themes.Dark()), Keys: uikit.DefaultKeyMap(), Ctx: context.Background()}
	c.Deps.Reader = r
	c.Deps.Now = clk.now
	c.Opts = uikit.Options{PageSize: 50, BufferRows: 200, Poll: time.Microsecond, Location: time.UTC}
	v := New(c)
	v.SetSize(100, 20)
	return v
}

// run executes cmd, batches flattened, and returns the messages, in order.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	return []tea.Msg{msg}
}

// deliver hands msgs to the model and returns what its commands answer.
func deliver(v *Model, msgs ...tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, m := range msgs {
		out = append(out, run(v.Update(m))...)
	}
	return out
}

func ticks(msgs []tea.Msg) (n int) {
	for _, m := range msgs {
		if _, ok := m.(TickMsg); ok {
			n++
		}
	}
	return n
}

// only keeps the stream's own answers (the root takes counts and statuses).
func only[T any](msgs []tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, m := range msgs {
		if _, ok := m.(T); ok {
			out = append(out, m)
		}
	}
	return out
}

func rowIDs(v *Model) []string {
	var ids []string
	for _, d := range v.Rows().All() {
		ids = append(ids, d.AgentID+"/"+d.EventID)
	}
	return ids
}

// TestTailStartsNoLaterThanTheFilteredRows: a filter entered before the
// start-up load has answered lands first; then documents are indexed; then
// the start-up answer comes, its tail start read after them. The tail
// must start from where the filtered rows were read, or those documents
// are in neither and the stream, following, never shows them.
func TestTailStartsNoLaterThanTheFilteredRows(t *testing.T) {
	r := &memReader{}
	r.add(12)
	v := newTailModel(r, &clock{time.Unix(0, 0)})
	startup := v.Init() // its answer is late: not run yet
	got := deliver(v, run(v.SetFilter("agent:critic"))...)
	if v.Rows().Len() != 3 {
		t.Fatalf("filtered rows %v, want the 3 of critic", rowIDs(v))
	}
	r.add(12)
	got = append(got, deliver(v, run(startup)...)...)
	if n := ticks(got); n != 1 {
		t.Fatalf("%d ticks armed once the tail started, want 1", n)
	}
	deliver(v, only[tailMsg](deliver(v, TickMsg{}))...)
	if v.Rows().Len() != 6 {
		t.Fatalf("after the tail: rows %v, want the 6 of critic", rowIDs(v))
	}
}

// TestTailSurvivesStaleAnswers: a tick while a poll is out is dropped, and
// that poll's answer, stale for a filter entered meanwhile, must arm the
// next tick; its documents are counted once, by the poll that takes them.
func TestTailSurvivesStaleAnswers(t *testing.T) {
	r := &memReader{}
	r.add(8)
	v := newTailModel(r, &clock{time.Unix(0, 0)})
	if n := ticks(deliver(v, run(v.Init())...)); n != 1 {
		t.Fatalf("%d ticks armed by the start, want 1", n)
	}
	poll := v.Update(TickMsg{})
	if poll == nil {
		t.Fatal("a tick did not poll the tail")
	}
	if cmd := v.Update(TickMsg{}); cmd != nil {
		t.Fatal("a second poll went out while one was out")
	}
	r.add(4)
	stale := run(poll) // read before the filter: 4 new, unfiltered
	head := run(v.SetFilter("agent:critic"))
	if n := ticks(deliver(v, stale...)); n != 1 {
		t.Fatalf("the stale answer armed %d ticks, want 1 (else the follow stops)", n)
	}
	if v.Seen() != 0 {
		t.Fatalf("seen %d after a stale answer, want 0 (its poll is read again)", v.Seen())
	}
	deliver(v, head...)
	answers := deliver(v, TickMsg{})
	if n := ticks(deliver(v, only[tailMsg](answers)...)); n != 1 {
		t.Fatalf("the poll after the head armed %d ticks, want 1", n)
	}
	if v.Rows().Len() != 3 || v.Seen() != 4 {
		t.Fatalf("rows %v, seen %d: want the 3 of critic, 4 seen", rowIDs(v), v.Seen())
	}
}

// TestTailStaleWhileHeadLoads: the poll answers while the filter's head is
// still loading (a head answer the tail must not be taken past), and the
// head then lands: the re-armed poll brings what came.
func TestTailStaleWhileHeadLoads(t *testing.T) {
	r := &memReader{}
	r.add(8)
	v := newTailModel(r, &clock{time.Unix(0, 0)})
	deliver(v, run(v.Init())...)
	head := v.SetFilter("agent:coder")
	r.add(8)
	answers := deliver(v, TickMsg{}) // polled under the new filter, head out
	if n := ticks(deliver(v, only[tailMsg](answers)...)); n != 1 {
		t.Fatalf("an answer during the head load armed %d ticks, want 1", n)
	}
	deliver(v, run(head)...)
	deliver(v, only[tailMsg](deliver(v, TickMsg{}))...)
	if v.Rows().Len() != 4 {
		t.Fatalf("rows %v, want the 4 of coder", rowIDs(v))
	}
}

// TestTailNeverStopsUnderAnyOrder runs the stream against an index that
// grows while its filter changes, answering its commands in random orders
// and at random times, with ticks sometimes late: at every step a tick or a
// poll is still to come, and in the end the rows are every match.
func TestTailNeverStopsUnderAnyOrder(t *testing.T) {
	filters := []string{"", "agent:critic", "agent:coder", "bad:x"}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		r := &memReader{}
		r.add(rng.IntN(10))
		v := newTailModel(r, &clock{time.Unix(0, 0)})
		pool := []tea.Cmd{v.Init()}
		push := func(cmd tea.Cmd) {
			if cmd != nil {
				pool = append(pool, cmd)
			}
		}
		for step := 0; step < 400; step++ {
			if len(pool) == 0 {
				t.Fatalf("seed %d step %d: nothing left to come: the tail stopped", seed, step)
			}
			switch x := rng.IntN(20); {
			case x == 0 && step < 300 && len(r.docs) < 45: // within a page
				r.add(1 + rng.IntN(3))
				continue
			case x == 1 && step < 300:
				push(v.SetFilter(filters[rng.IntN(len(filters))]))
				continue
			}
			i := rng.IntN(len(pool))
			cmd := pool[i]
			pool = append(pool[:i], pool[i+1:]...)
			msg := cmd()
			if b, ok := msg.(tea.BatchMsg); ok {
				pool = append(pool, b...)
				continue
			}
			switch msg.(type) {
			case headMsg, tailMsg, olderMsg, newerMsg, TickMsg:
				push(v.Update(msg))
			}
		}
		// Let everything land, the ticks last, until the tail is quiet.
		for range 200 {
			var next []tea.Cmd
			for _, cmd := range pool {
				for _, msg := range run(cmd) {
					switch msg.(type) {
					case headMsg, tailMsg, olderMsg, newerMsg, TickMsg:
						if c := v.Update(msg); c != nil {
							next = append(next, c)
						}
					}
				}
			}
			if len(next) == 0 {
				t.Fatalf("seed %d: nothing left to come once settled: the tail stopped", seed)
			}
			pool = next
		}
		want, wantN := v.Filter(), 0
		for _, d := range r.docs {
			if ok, _ := matches(want, d); ok {
				wantN++
			}
		}
		if v.Shown() != want || v.Rows().Len() != wantN {
			t.Fatalf("seed %d: filter %q shown %q, rows %d %v, want %d", seed, want, v.Shown(), v.Rows().Len(), rowIDs(v), wantN)
		}
	}
}

// TestStalledShowsAFollowWithNoAnswer: LastPoll is when the tail last
// answered; once no answer has come for StallAfter the follow is stalled.
func TestStalledShowsAFollowWithNoAnswer(t *testing.T) {
	r := &memReader{}
	r.add(3)
	clk := &clock{time.Unix(1000, 0)}
	v := newTailModel(r, clk)
	if v.Stalled(clk.t.Add(time.Hour)) || !v.LastPoll().IsZero() {
		t.Fatal("stalled, or a last poll, before the tail started")
	}
	deliver(v, run(v.Init())...)
	if !v.LastPoll().Equal(clk.t) {
		t.Fatalf("last poll %v once started, want %v", v.LastPoll(), clk.t)
	}
	poll := v.Update(TickMsg{})
	clk.t = clk.t.Add(v.StallAfter() - time.Millisecond)
	if v.Stalled(clk.t) {
		t.Fatal("stalled within StallAfter")
	}
	clk.t = clk.t.Add(2 * time.Millisecond)
	if !v.Stalled(clk.t) {
		t.Fatal("not stalled with a poll out for longer than StallAfter")
	}
	deliver(v, run(poll)...)
	if !v.LastPoll().Equal(clk.t) || v.Stalled(clk.t) {
		t.Fatalf("last poll %v, stalled %v after the answer at %v", v.LastPoll(), v.Stalled(clk.t), clk.t)
	}
}

// TestRefusedFilterBeforeAnyRowsLoadsThem: the index refuses the first
// filter while the start-up rows are moot: the rows load unfiltered.
func TestRefusedFilterBeforeAnyRowsLoadsThem(t *testing.T) {
	r := &memReader{}
	r.add(5)
	v := newTailModel(r, &clock{time.Unix(0, 0)})
	startup := v.Init()
	refused := deliver(v, run(v.SetFilter("bad:x"))...)
	if len(only[FilterRefusedMsg](refused)) != 1 {
		t.Fatalf("no FilterRefusedMsg among %v", refused)
	}
	deliver(v, only[headMsg](refused)...)
	deliver(v, run(startup)...)
	if v.Filter() != "" || v.Rows().Len() != 5 {
		t.Fatalf("filter %q, rows %v: want none and the 5 rows", v.Filter(), rowIDs(v))
	}
}
