package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"engram/backend/kafka"
	"engram/ingest/gen"
	"engram/model"
)

// BenchmarkKafkaSingleEventLatency is one event at a time through the
// real broker and a real `engram worker` (in this process, into the
// embedded stores of a temporary data directory): the time from the
// produce to experience.raw until its memory.indexed message is read, and
// until its experience.enriched one. Each event is produced only once the
// previous one was announced, so nothing queues. Run with -benchtime=Nx.
func BenchmarkKafkaSingleEventLatency(b *testing.B) {
	cfg, kargs := testKafka(b)
	cfg.Group = fmt.Sprintf("engram-bench-lat-%08x", rand.Uint32())
	kargs = append(kargs, "--kafka-group", cfg.Group)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, err := kafka.NewWatch(ctx, cfg, kafka.WatchOptions{Topics: []string{cfg.Topics.Enriched, cfg.Topics.Indexed}, From: kafka.FromEnd})
	if err != nil {
		b.Fatal(err)
	}
	defer watch.Close()
	client, err := kafka.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	done, _ := startWorker(ctx, b.TempDir(), kargs)
	defer func() { cancel(); <-done }()

	events := gen.Events(gen.Config{Seed: 11, Prefix: cfg.Group + "-"}, b.N+1)
	// The first event warms the worker up (its group join, the first
	// batch): it is not measured.
	if _, _, err := produceAndWait(ctx, client, watch, cfg, events[0]); err != nil {
		b.Fatal(err)
	}
	var indexed, enriched []time.Duration
	b.ResetTimer()
	for _, raw := range events[1:] {
		e, i, err := produceAndWait(ctx, client, watch, cfg, raw)
		if err != nil {
			b.Fatal(err)
		}
		enriched, indexed = append(enriched, e), append(indexed, i)
	}
	b.StopTimer()
	for name, lat := range map[string][]time.Duration{"indexed": indexed, "enriched": enriched} {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(ms(lat[len(lat)/2]), name+"-p50-ms")
		b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), name+"-p99-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startWorker runs `engram worker` with kargs into the data directory
// data, in this process, until ctx ends; done is closed once it has
// stopped; stderr is what it printed.
func startWorker(ctx context.Context, data string, kargs []string) (done chan struct{}, stderr *syncBuffer) {
	done, stderr = make(chan struct{}), &syncBuffer{}
	go func() {
		defer close(done)
		e := &env{strings.NewReader(""), &syncBuffer{}, stderr, func(k string) string {
			return map[string]string{"DISABLE_HEALTH_SERVER": "true"}[k]
		}}
		run(ctx, e, append([]string{"worker", "--data", data, "--status-every", "1h"}, kargs...))
	}()
	return done, stderr
}

// produceAndWait produces one event and reads the notification topics
// until both announced it: the times from the produce to each.
func produceAndWait(ctx context.Context, c *kafka.Client, w *kafka.Watch, cfg kafka.Config, raw []byte) (enriched, indexed time.Duration, err error) {
	ev, err := model.Decode(raw, model.DecodeOptions{})
	if err != nil {
		return 0, 0, err
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := c.ProduceRaw(wctx, []kafka.RawRecord{{Key: []byte(ev.EventID), Value: raw}}); err != nil {
		return 0, 0, err
	}
	for enriched == 0 || indexed == 0 {
		recs, err := w.Poll(wctx)
		if err != nil {
			return 0, 0, fmt.Errorf("waiting for %s: %w", ev.EventID, err)
		}
		at := time.Since(start)
		for _, r := range recs {
			switch {
			case string(r.Key) != ev.EventID:
			case r.Topic == cfg.Topics.Indexed:
				indexed = at
			case r.Topic == cfg.Topics.Enriched:
				enriched = at
			}
		}
	}
	return enriched, indexed, nil
}
