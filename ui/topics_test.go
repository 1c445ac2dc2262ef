package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"engram/model"
	"engram/ui/record"
	"engram/ui/stream"
	"engram/ui/topics"
	"engram/ui/uikit"
)

// fakeBus is a bus whose messages the test pushes; its Send produces to
// partition 3 and reports the notifications the test lets through.
type fakeBus struct {
	mu     sync.Mutex
	stats  uikit.BusStats
	feed   chan []uikit.BusMessage
	send   bool
	hops   []uikit.Hop // the hops Send reports after the produce
	sentEv *model.Event
}

func newFakeBus() *fakeBus {
	return &fakeBus{feed: make(chan []uikit.BusMessage, 16), send: true, hops: []uikit.Hop{uikit.HopIndexed, uikit.HopEnriched},
		stats: uikit.BusStats{Group: "ingestion-workers", GroupState: "Stable", Members: 2, Topics: []uikit.TopicStats{
			{Name: "experience.raw", Partitions: 12, End: 120345, Lag: 17, Ends: []int64{10029, 10028, 10030, 10027, 10029, 10028, 10030, 10029, 10031, 10028, 10027, 10029}},
			{Name: "experience.enriched", Partitions: 12, End: 120328, Lag: -1},
			{Name: "memory.indexed", Partitions: 6, End: 120328, Lag: -1},
			{Name: "audit.events", Partitions: 12, End: 240656, Lag: -1},
			{Name: "experience.raw.rejected", Err: fmt.Errorf("does not exist (engram kafka create-topics)")},
		}}}
}

func (b *fakeBus) Where() string    { return "kafka broker-1:9092" }
func (b *fakeBus) TimeNote() string { return "time is the fake broker's" }
func (b *fakeBus) Topics() []uikit.BusTopic {
	return []uikit.BusTopic{{Name: "experience.raw", Role: uikit.RoleRaw}, {Name: "experience.enriched", Role: uikit.RoleEnriched},
		{Name: "memory.indexed", Role: uikit.RoleIndexed}, {Name: "audit.events", Role: uikit.RoleAudit},
		{Name: "experience.raw.rejected", Role: uikit.RoleRejected}}
}
func (b *fakeBus) Stats(context.Context) (uikit.BusStats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats, nil
}
func (b *fakeBus) Watch(context.Context, int) (uikit.BusWatch, error) { return fakeWatch{b.feed}, nil }
func (b *fakeBus) CanSend() bool                                      { return b.send }

// Send reports the produce and then each hop of b.hops; it then waits
// (parked, as a broker with no worker would keep it) until ctx ends.
func (b *fakeBus) Send(ctx context.Context, ev *model.Event, seen func(uikit.BusMessage)) error {
	b.mu.Lock()
	b.sentEv = ev
	b.mu.Unlock()
	seen(uikit.BusMessage{Topic: "experience.raw", Partition: 3, Offset: 4711, Key: ev.EventID, Hop: uikit.HopProduced})
	for _, h := range b.hops {
		seen(uikit.BusMessage{Topic: h.String(), Key: ev.EventID, Hop: h})
	}
	if len(b.hops) == 2 {
		return nil
	}
	// Parked: this command, and the one waiting for its next hop.
	p := parkedIn(ctx)
	p.Add(2)
	defer p.Add(-2)
	<-ctx.Done()
	return ctx.Err()
}

type fakeWatch struct{ feed chan []uikit.BusMessage }

// Poll waits, parked, for what the test pushes.
func (w fakeWatch) Poll(ctx context.Context) ([]uikit.BusMessage, error) {
	p := parkedIn(ctx)
	p.Add(1)
	defer p.Add(-1)
	select {
	case ms := <-w.feed:
		return ms, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (fakeWatch) Close() {}

// busMessages are one of each topic: a raw event carrying a terminal
// escape, its notifications, and a rejection.
func busMessages(at time.Time) []uikit.BusMessage {
	raw := `{"eventId":"ev-0003","type":"observation","context":{"sessionId":"s1"},"input":{"text":"evil \u001b]0;pwned\u0007 title"}}`
	tp := []uikit.BusHeader{{Key: "traceparent", Value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	return []uikit.BusMessage{
		{Topic: "experience.raw", Partition: 3, Offset: 4710, Time: at, Key: "ev-0003", Headers: tp, Value: []byte(raw)},
		{Topic: "experience.enriched", Partition: 5, Offset: 88, Time: at.Add(80 * time.Millisecond), Key: "ev-0003", Headers: tp,
			Value: []byte(`{"eventId":"ev-0003","importanceScore":0.4,"embeddingDimension":384}`)},
		{Topic: "memory.indexed", Partition: 1, Offset: 12, Time: at.Add(90 * time.Millisecond), Key: "ev-0003", Headers: tp,
			Value: []byte(`{"eventId":"ev-0003","index":"experiences"}`)},
		{Topic: "experience.raw.rejected", Partition: 0, Offset: 2, Time: at.Add(time.Second), Key: "x\x1b[2J",
			Headers: []uikit.BusHeader{{Key: "engram-reasons", Value: "not JSON"}}, Value: []byte("not json \x1b[31mred")},
	}
}

// ctrlP sends the record form's event to the raw topic.
var ctrlP = tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl}

func topicsModel(t *testing.T, w, h int) (*Model, *fakeBus) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	b := newFakeBus()
	d.Bus = b
	m := newTestModel(t, d, testOpts(t), w, h)
	press(t, m, "shift+tab") // Topics is the last tab
	if m.focus != viewTopics {
		t.Fatalf("shift+tab from the stream went to %s, want Topics", m.table[m.focus].name)
	}
	return m, b
}

func feed(t *testing.T, m *Model, b *fakeBus, ms []uikit.BusMessage) {
	t.Helper()
	b.feed <- ms
	settle(t, m)
}

// stepClock is a clock that moves step on at every reading: the hops'
// latencies are then fixed (Update reads it in a fixed order).
func stepClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	at := testNow
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(step)
		return at
	}
}

func TestGoldenTopics(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("topics_%dx%d", size[0], size[1]), func(t *testing.T) {
			m, b := topicsModel(t, size[0], size[1])
			feed(t, m, b, busMessages(testNow))
			// A second reading 4 s after the first: the rates show.
			send(t, m, topics.StatsMsg{Stats: grown(b.stats, 12, 8), At: testNow.Add(4 * time.Second)})
			golden.RequireEqual(t, []byte(screen(m)))
		})
		t.Run(fmt.Sprintf("message_%dx%d", size[0], size[1]), func(t *testing.T) {
			m, b := topicsModel(t, size[0], size[1])
			feed(t, m, b, busMessages(testNow))
			press(t, m, "end", "enter") // the oldest: the raw event
			golden.RequireEqual(t, []byte(screen(m)))
		})
		t.Run(fmt.Sprintf("send_%dx%d", size[0], size[1]), func(t *testing.T) {
			m := sendModel(t, size[0], size[1], nil)
			send(t, m, ctrlP)
			golden.RequireEqual(t, []byte(screen(m)))
		})
		t.Run(fmt.Sprintf("stuck_%dx%d", size[0], size[1]), func(t *testing.T) {
			m := sendModel(t, size[0], size[1], []uikit.Hop{uikit.HopEnriched})
			send(t, m, ctrlP)
			send(t, m, record.HopTickMsg{Run: 1})
			golden.RequireEqual(t, []byte(screen(m)))
		})
	}
}

// sendModel is the record form, filled in, over a fake bus letting hops
// through after the produce and an index holding the sent event once
// asked for it.
func sendModel(t *testing.T, w, h int, hops []uikit.Hop) *Model {
	r, a := goldenWorld()
	d := testDeps(r, a)
	b := newFakeBus()
	if hops != nil {
		b.hops = hops
	}
	d.Bus = b
	d.Recorder = PipelineRecorder{}
	d.Now = stepClock(15 * time.Millisecond)
	// The index has the sent event as soon as the bus has it.
	d.Reader = sentReader{memReader: r, bus: b, archive: a}
	o := testOpts(t)
	o.HopTimeout = 10 * time.Millisecond // the clock passes it at each reading
	m := newTestModel(t, d, o, w, h)
	press(t, m, "R")
	typeText(t, m, "s-send")
	press(t, m, "down", "down", "down", "down")
	typeText(t, m, "sent to the deployment")
	return m
}

// sentReader finds the event the fake bus was sent, as the deployment's
// worker would have indexed and archived it.
type sentReader struct {
	*memReader
	bus     *fakeBus
	archive *memArchive
}

func (r sentReader) Document(ctx context.Context, id string) (*model.IndexDoc, error) {
	r.bus.mu.Lock()
	ev := r.bus.sentEv
	r.bus.mu.Unlock()
	if ev != nil && ev.EventID == id && r.bus.hops != nil && len(r.bus.hops) == 2 {
		ev.ObjectStorageKey, _ = model.ArchiveKey(ev.EventID, ev.Timestamp)
		body, _ := ev.ArchiveJSON()
		r.archive.put(ev.ObjectStorageKey, body)
		return model.NewIndexDoc(ev, 0), nil
	}
	return r.memReader.Document(ctx, id)
}

// Every hop is shown as it comes, each with its own latency; the raw
// topic's partition and offset under the produce.
func TestSendShowsEveryHop(t *testing.T) {
	m := sendModel(t, 120, 40, nil)
	send(t, m, ctrlP)
	s := screen(m)
	mustContain(t, s, "Deployment trace", "experience.raw[3]@4711", "✓ produced", "✓ enriched", "✓ indexed", "✓ in index", "✓ archived", "✓ through the deployment")
	mustNotContain(t, s, "+-") // the notifications came in the other order: no negative step
	if m.record.Busy() {
		t.Fatal("the send is still busy after its last hop")
	}
}

// A hop that does not come within the timeout is shown stuck, with what
// is known and what to look at.
func TestSendStuckAtHop(t *testing.T) {
	m := sendModel(t, 120, 40, []uikit.Hop{uikit.HopEnriched})
	send(t, m, ctrlP)
	mustContain(t, screen(m), "✓ enriched", "waiting for indexed")
	send(t, m, record.HopTickMsg{Run: 1})
	s := screen(m)
	mustContain(t, s, "✗ stuck at indexed after", "is a worker consuming")
	if m.record.Busy() {
		t.Fatal("a stuck send still counts as busy")
	}
}

// Without Kafka the form offers no send, and ctrl+p says what it needs.
func TestSendNeedsKafka(t *testing.T) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	d.Recorder = PipelineRecorder{}
	b := newFakeBus()
	b.send = false
	d.Bus = b
	m := newTestModel(t, d, testOpts(t), 100, 30)
	press(t, m, "R")
	mustNotContain(t, screen(m), "send to")
	send(t, m, ctrlP)
	mustContain(t, screen(m), "sending needs Kafka")
}

// Messages arrive newest first; space holds new ones while paused; t
// shows one topic; every string from a message is cleaned.
func TestTopicsFollowPauseAndFilter(t *testing.T) {
	m, b := topicsModel(t, 120, 40)
	feed(t, m, b, busMessages(testNow))
	s := screen(m)
	mustContain(t, s, "experience.raw", "120,345", "17", "Stable, 2 members", "does not exist (engram kafka create-topics)", "4 messages", "● following")
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\x1b[31m"} {
		if strings.Contains(m.View().Content, bad) {
			t.Fatalf("a message's %q reached the terminal", bad)
		}
	}
	if sel := m.topics.Selected(); sel == nil || sel.Topic != "experience.raw.rejected" {
		t.Fatalf("selected %+v, want the newest (the rejection)", sel)
	}
	press(t, m, "space")
	feed(t, m, b, busMessages(testNow.Add(time.Minute))[:1])
	mustContain(t, screen(m), "‖ paused · 1 new", "4 messages")
	press(t, m, "space")
	mustContain(t, screen(m), "5 messages", "● following")
	press(t, m, "t", "t", "t")
	mustContain(t, screen(m), "1 of 1 message of memory.indexed")
}

// Enter on a notification opens its event's detail; on a raw event its
// JSON here, which esc closes.
func TestTopicsEnter(t *testing.T) {
	m, b := topicsModel(t, 120, 40)
	msgs := busMessages(testNow)
	// A notification of an event the index holds.
	id := m.stream.Selected().EventID
	msgs[2].Key = id
	feed(t, m, b, msgs)
	press(t, m, "down", "enter")
	if m.focus != viewDetail || m.detail.Doc() == nil || m.detail.Doc().EventID != id {
		t.Fatalf("enter on memory.indexed: focus %s", m.table[m.focus].name)
	}
	press(t, m, "esc")
	if m.focus != viewTopics {
		t.Fatalf("esc from the detail went to %s", m.table[m.focus].name)
	}
	press(t, m, "end", "enter")
	s := screen(m)
	mustContain(t, s, "Message · experience.raw[3]@4710", `"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`, `"eventId": "ev-0003"`)
	press(t, m, "esc")
	if m.focus != viewTopics || strings.Contains(screen(m), "Message ·") {
		t.Fatal("esc did not close the message")
	}
	// A notification of an event the index lacks: its message, and why.
	press(t, m, "home", "down", "down", "enter")
	mustContain(t, screen(m), "Message · experience.enriched", "showing its message")
}

// Without a bus, no Topics tab; the view itself says what it needs.
func TestTopicsWithoutBus(t *testing.T) {
	r, a := goldenWorld()
	m := newTestModel(t, testDeps(r, a), testOpts(t), 100, 30)
	for _, id := range m.views() {
		if id == viewTopics {
			t.Fatal("a Topics tab without a bus")
		}
	}
	v := topics.New(m.c)
	v.SetSize(100, 20)
	mustContain(t, ansi.Strip(v.View()), "No event bus to watch", "kafka.brokers")
}

// The Topics view live in a real program: messages show as the bus
// brings them, and the help explains every key.
func TestTopicsFlow(t *testing.T) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	b := newFakeBus()
	d.Bus = b
	tm, p := flow(t, d)
	tm.Send(keyMsg("shift+tab"))
	teatest.WaitFor(t, tm.Output(), func([]byte) bool {
		return strings.Contains(p.screen(), "starting the watch") || strings.Contains(p.screen(), "no message yet")
	},
		teatest.WithDuration(10*time.Second))
	b.feed <- busMessages(time.Now())
	teatest.WaitFor(t, tm.Output(), func([]byte) bool { return strings.Contains(p.screen(), "4 messages") }, teatest.WithDuration(10*time.Second))
	tm.Send(keyMsg("?"))
	teatest.WaitFor(t, tm.Output(), func([]byte) bool {
		s := p.screen()
		return strings.Contains(s, "Keys · Topics") && strings.Contains(s, "one topic / all") && strings.Contains(s, "pause/follow")
	}, teatest.WithDuration(10*time.Second))
}

// The send in a real program: the hops are drawn as they come, with the
// hop timer running, until the event is through.
func TestSendFlow(t *testing.T) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	b := newFakeBus()
	d.Bus, d.Recorder, d.Now = b, PipelineRecorder{}, time.Now
	d.Reader = sentReader{memReader: r, bus: b, archive: a}
	tm, p := flow(t, d)
	tm.Send(keyMsg("R"))
	teatest.WaitFor(t, tm.Output(), func([]byte) bool { return strings.Contains(p.screen(), "send to experience.raw") },
		teatest.WithDuration(10*time.Second))
	tm.Type("flow-session")
	for range 4 {
		tm.Send(keyMsg("down"))
	}
	tm.Type("sent by the flow")
	tm.Send(ctrlP)
	teatest.WaitFor(t, tm.Output(), func([]byte) bool {
		s := p.screen()
		return strings.Contains(s, "experience.raw[3]@4711") && strings.Contains(s, "✓ archived") && strings.Contains(s, "✓ through the deployment in")
	}, teatest.WithDuration(10*time.Second))
}

// A watch that cannot start says why where the messages would be, is
// tried again, and r tries at once.
func TestTopicsWatchFails(t *testing.T) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	fb := &failingBus{fakeBus: newFakeBus()}
	d.Bus = fb
	m := newTestModel(t, d, testOpts(t), 100, 30)
	press(t, m, "shift+tab")
	mustContain(t, screen(m), "the watch could not start", `topic "experience.raw" does not exist`, "r now", "r start the watch again")
	press(t, m, "r")
	if fb.tries != 2 {
		t.Fatalf("r: %d watches started, want 2", fb.tries)
	}
}

type failingBus struct {
	*fakeBus
	tries int
}

func (b *failingBus) Watch(context.Context, int) (uikit.BusWatch, error) {
	b.tries++
	return nil, fmt.Errorf(`kafka broker-1:9092: topic "experience.raw" does not exist`)
}

// grown is s with every readable topic's end n messages on, the audit
// topic's audit more.
func grown(s uikit.BusStats, n, audit int64) uikit.BusStats {
	out := s
	out.Topics = append([]uikit.TopicStats(nil), s.Topics...)
	for i, t := range out.Topics {
		if t.Err == nil {
			out.Topics[i].End += n
			if t.Name == "audit.events" {
				out.Topics[i].End += audit
			}
		}
	}
	return out
}

// rateOf is the rate/s column of topic's line of the Topics view.
func rateOf(t *testing.T, m *Model, topic string) string {
	t.Helper()
	for _, l := range strings.Split(screen(m), "\n") {
		if f := strings.Fields(l); len(f) >= 5 && f[0] == topic {
			return f[3]
		}
	}
	t.Fatalf("no line of %s in\n%s", topic, screen(m))
	return ""
}

// The rate is what a topic gained over the last RateWindow, per second:
// a pipeline announcing a batch of 3 every 2 s shows 1.5 between the
// batches too, not 0.0 and then a burst; a topic that stops falls to 0.0
// once the window has passed; a topic recreated (its end going back)
// starts again.
func TestTopicsRateOverWindow(t *testing.T) {
	m, b := topicsModel(t, 120, 40)
	const topic = "experience.enriched"
	if r := rateOf(t, m, topic); r != "—" {
		t.Fatalf("one reading: rate %s, want —", r)
	}
	at := testNow
	var added int64
	for sec := 1; sec <= 30; sec++ {
		if sec%2 == 0 {
			added += 3
		}
		send(t, m, topics.StatsMsg{Stats: grown(b.stats, added, 0), At: at.Add(time.Duration(sec) * time.Second)})
		if sec >= 11 {
			if r := rateOf(t, m, topic); r != "1.5" && r != "1.4" && r != "1.6" {
				t.Fatalf("second %d: rate %s, want 1.5 (batches of 3 every 2 s)", sec, r)
			}
		}
	}
	for sec := 31; sec <= 41; sec++ { // the pipeline stops
		send(t, m, topics.StatsMsg{Stats: grown(b.stats, added, 0), At: at.Add(time.Duration(sec) * time.Second)})
	}
	if r := rateOf(t, m, topic); r != "0.0" {
		t.Fatalf("10 s without a message: rate %s, want 0.0", r)
	}
	send(t, m, topics.StatsMsg{Stats: grown(b.stats, 0, 0), At: at.Add(42 * time.Second)})
	if r := rateOf(t, m, topic); r != "—" {
		t.Fatalf("after the end went back: rate %s, want — (counted afresh)", r)
	}
	press(t, m, "?")
	mustContain(t, screen(m), "time is the fake broker's", "rate/s: messages per second over the last 10s")
}

// Once the index has the event sent to the raw topic, the stream selects
// it, as it does an event recorded in this process; an event stuck
// before the index is not selected.
func TestSentEventSelectedInStream(t *testing.T) {
	for _, hops := range [][]uikit.Hop{nil, {uikit.HopEnriched}} {
		m := sendModel(t, 120, 40, hops)
		send(t, m, ctrlP)
		b := m.c.Deps.Bus.(*fakeBus)
		r := m.c.Deps.Reader.(sentReader)
		through := hops == nil
		if through != strings.Contains(screen(m), "selected in the stream") {
			t.Fatalf("hops %v: the form says selected %v, want %v", hops, !through, through)
		}
		// The deployment indexed it (or, stuck, has not yet) and then
		// another: the tail brings both either way, so only the send can
		// have kept the selection on it.
		r.memReader.add(model.NewIndexDoc(b.sentEv, 0))
		send(t, m, stream.TickMsg{})
		later := *model.NewIndexDoc(b.sentEv, 0)
		later.EventID, later.Summary = "agent-later", "what an agent did next"
		r.memReader.add(&later)
		send(t, m, stream.TickMsg{})
		press(t, m, "esc")
		if m.focus != viewStream {
			t.Fatalf("esc from the form went to %s", m.table[m.focus].name)
		}
		got := m.stream.Selected().EventID
		switch {
		case through && got != "new-001":
			t.Fatalf("through the deployment: the stream selects %s, want the sent new-001", got)
		case !through && got == "new-001":
			t.Fatalf("stuck at indexed: the stream selects the sent event, which the index was not seen to have")
		}
		if through {
			mustContain(t, screen(m), "sent to the deployment")
		}
	}
}

// A long key is cut in the middle at 80 columns: event ids share their
// start, and its end tells the messages apart.
func TestTopicsKeyKeepsItsEnd(t *testing.T) {
	m, b := topicsModel(t, 80, 24)
	ms := busMessages(testNow)[1:3]
	ms[0].Key, ms[1].Key = "agent-e-000219-obs", "agent-e-000219-act"
	feed(t, m, b, ms)
	s := screen(m)
	mustContain(t, s, "…0219-obs", "…0219-act")
}
