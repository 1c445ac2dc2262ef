package cli

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/model"
	"engram/ui/uikit"
)

// The inspector's Kafka bus against the real broker, with a real worker:
// the topics' numbers and the group's lag, a watch that sees the raw
// message with its key and traceparent, and a send whose every Kafka hop
// is reported (produced with its partition and offset, then both
// notifications).
func TestKafkaBusWithWorker(t *testing.T) {
	cfg, kargs := testKafka(t)
	cfg.Group = fmt.Sprintf("engram-uibus-%08x", rand.Uint32())
	kargs = append(kargs, "--kafka-group", cfg.Group)
	bus, err := newKafkaBus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	s, err := bus.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.GroupState != "no worker yet" || s.GroupErr != nil {
		t.Fatalf("before any worker: group %q, err %v", s.GroupState, s.GroupErr)
	}
	for _, ts := range s.Topics {
		if ts.Err != nil || ts.Partitions != 2 || ts.End != 0 {
			t.Fatalf("%s: %+v, want 2 empty partitions", ts.Name, ts)
		}
	}

	w, err := bus.Watch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// The worker ingests into a data directory of its own.
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone, werr := startWorker(wctx, t.TempDir(), kargs)
	defer func() { stopWorker(); <-workerDone }()

	ev, err := model.Decode([]byte(strings.TrimSpace(demoLines(1))), model.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var hops []uikit.BusMessage
	if err := bus.Send(ctx, ev, func(m uikit.BusMessage) { hops = append(hops, m) }); err != nil {
		t.Fatalf("send: %v (worker: %s)", err, werr.String())
	}
	seen := map[uikit.Hop]uikit.BusMessage{}
	for _, h := range hops {
		seen[h.Hop] = h
	}
	if p := seen[uikit.HopProduced]; p.Topic != cfg.Topics.Raw || p.Offset != 0 || p.Key != ev.EventID {
		t.Fatalf("produced hop %+v", p)
	}
	for h, topic := range map[uikit.Hop]string{uikit.HopEnriched: cfg.Topics.Enriched, uikit.HopIndexed: cfg.Topics.Indexed} {
		if m, ok := seen[h]; !ok || m.Topic != topic || m.Key != ev.EventID {
			t.Fatalf("%s hop: %+v (all: %+v)", h, m, hops)
		}
	}

	// The watch saw the raw message as produced, and its notifications.
	got := map[string]uikit.BusMessage{}
	for len(got) < 3 {
		ms, err := w.Poll(ctx)
		if err != nil {
			t.Fatalf("poll: %v (so far %v)", err, got)
		}
		for _, m := range ms {
			got[m.Topic] = m
		}
	}
	raw := got[cfg.Topics.Raw]
	if raw.Key != ev.EventID || !strings.HasPrefix(raw.Header("traceparent"), "00-"+ev.Context.TraceID+"-") || string(raw.Value) != string(ev.Raw()) {
		t.Fatalf("raw message: key %q, traceparent %q, value %s", raw.Key, raw.Header("traceparent"), raw.Value)
	}

	// Once the worker commits, the group has no lag and one member.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err = bus.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Topics[0].End == 1 && s.Topics[0].Lag == 0 && s.Members == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group never caught up: %+v", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if s.Topics[1].End != 1 || s.Topics[2].End != 1 || s.Topics[1].Lag != -1 {
		t.Fatalf("notification topics: %+v", s.Topics)
	}
}

// A topic the deployment lacks is said per topic, in a few words; the
// others are still counted.
func TestKafkaBusMissingTopic(t *testing.T) {
	cfg, _ := testKafka(t)
	cfg.Topics.Rejected = cfg.Topics.Raw + ".nowhere"
	bus, err := newKafkaBus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := bus.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := s.Topics[len(s.Topics)-1]
	if last.Name != cfg.Topics.Rejected || last.Err == nil || !strings.Contains(last.Err.Error(), "does not exist") {
		t.Fatalf("missing topic: %+v", last)
	}
	if s.Topics[0].Err != nil || s.Topics[0].Partitions != 2 {
		t.Fatalf("raw topic: %+v", s.Topics[0])
	}
	if _, err := bus.Watch(ctx, 5); err == nil {
		t.Fatal("a watch over a missing topic started")
	}
}

// The topic files: counted by complete lines, watched from the last ones,
// a line still being written left for later.
func TestFileBus(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, model.TopicIndexed+".jsonl")
	var lines strings.Builder
	for i := range 8 {
		fmt.Fprintf(&lines, `{"eventId":"ev-%d","index":"experiences"}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(lines.String()+`{"eventId":"ev-cut`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newFileBus(dir)
	ctx := context.Background()
	s, _ := b.Stats(ctx)
	if en, ix := s.Topics[0], s.Topics[1]; en.Err == nil || ix.Err != nil || ix.End != 8 || ix.Partitions != 1 {
		t.Fatalf("stats: enriched %+v, indexed %+v", en, ix)
	}
	w, _ := b.Watch(ctx, 3)
	ms, err := w.Poll(ctx)
	if err != nil || len(ms) != 3 || ms[0].Key != "ev-5" || ms[0].Offset != 5 || ms[2].Key != "ev-7" {
		t.Fatalf("first poll: %v %+v", err, ms)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString(`"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ms, err = w.Poll(ctx)
	if err != nil || len(ms) != 1 || ms[0].Key != "ev-cut" || ms[0].Offset != 8 || ms[0].Time.IsZero() {
		t.Fatalf("after the line was finished: %v %+v", err, ms)
	}
	if s, _ := b.Stats(ctx); s.Topics[1].End != 9 {
		t.Fatalf("count after the append: %d", s.Topics[1].End)
	}
	if b.CanSend() || b.Send(ctx, nil, nil) == nil {
		t.Fatal("the topic files took a raw event")
	}
}

// uiDeps opens the inspector's services as `engram` does, on c's data.
func uiDeps(t *testing.T, c *cli, args ...string) (uikit.Deps, *uiOpts) {
	t.Helper()
	e := &env{strings.NewReader(""), new(bytes.Buffer), new(bytes.Buffer), func(k string) string { return c.env[k] }}
	fs, o := uiFlags(e)
	if err := fs.Parse(append([]string{"--data", c.data}, args...)); err != nil {
		t.Fatal(err)
	}
	d, closeAll := openUIDeps(context.Background(), o, fs, e)
	t.Cleanup(closeAll)
	return d, o
}

// The topic files hold no time: the lines already there when the watch
// starts get the time their event was indexed (ingested_at), those
// appended while it runs the time the watch saw them.
func TestFileBusTimes(t *testing.T) {
	c := newCLI(t)
	c.run(demoLines(4), "ingest")
	d, _ := uiDeps(t, c)
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	ctx := context.Background()
	w, err := d.Bus.Watch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ms, err := w.Poll(ctx)
	if err != nil || len(ms) != 8 {
		t.Fatalf("first poll: %v, %d messages, want 8", err, len(ms))
	}
	for i, m := range ms {
		// Line by line, each event's two notifications side by side.
		if m.Offset != int64(i/2) || m.Key != ms[i&^1].Key {
			t.Fatalf("message %d is %s@%d of %s, want line %d beside its pair", i, m.Topic, m.Offset, m.Key, i/2)
		}
		doc, err := d.Reader.Document(ctx, m.Key)
		if err != nil {
			t.Fatal(err)
		}
		want, err := time.Parse(time.RFC3339Nano, doc.IngestedAt)
		if err != nil || !m.Time.Equal(want) {
			t.Fatalf("%s@%d (%s): time %v, want its ingested_at %q", m.Topic, m.Offset, m.Key, m.Time, doc.IngestedAt)
		}
	}
	before := time.Now()
	c.run(demoLines(6), "ingest") // 2 new events, their 4 lines
	ms, err = w.Poll(ctx)
	after := time.Now()
	if err != nil || len(ms) != 4 {
		t.Fatalf("after the ingest: %v, %d messages, want 4", err, len(ms))
	}
	for _, m := range ms {
		if m.Time.Before(before) || m.Time.After(after) {
			t.Fatalf("%s@%d: time %v, want when the watch saw it (between %v and %v)", m.Topic, m.Offset, m.Time, before, after)
		}
	}
}

// The inspector takes ui.hop_timeout; a bad one is shown, naming it.
func TestInspectorHopTimeout(t *testing.T) {
	c := newCLI(t)
	if d, o := uiDeps(t, c, "--hop-timeout", "90s"); d.Err != nil || o.hopTimeout != 90*time.Second {
		t.Fatalf("--hop-timeout 90s: err %v, timeout %v", d.Err, o.hopTimeout)
	}
	c.env["ENGRAM_HOP_TIMEOUT"] = "later"
	if d, _ := uiDeps(t, c); d.Err == nil || !strings.Contains(d.Err.Error(), `ui.hop_timeout = "later" (env ENGRAM_HOP_TIMEOUT)`) {
		t.Fatalf("ENGRAM_HOP_TIMEOUT=later: err %v", d.Err)
	}
}
