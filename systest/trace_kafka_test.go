package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"engram/backend/kafka"
)

// The trace crosses the Kafka hop: an event produced with a traceparent is
// ingested by a worker whose experience.ingest span is a child of the
// producer's span, in the producer's trace (read back from the real
// Jaeger), and the worker's notification on experience.enriched carries
// that trace on to the next consumer.
func TestTraceThroughKafka(t *testing.T) {
	brokers := kafkaBrokers(t)
	otlp, jaegerURL := os.Getenv("ENGRAM_TEST_OTLP_ENDPOINT"), os.Getenv("ENGRAM_TEST_JAEGER_URL")
	if otlp == "" || jaegerURL == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_OTLP_ENDPOINT or ENGRAM_TEST_JAEGER_URL is not set")
		}
		t.Skip("set ENGRAM_TEST_OTLP_ENDPOINT and ENGRAM_TEST_JAEGER_URL (see .ci/services) to run against a real Jaeger")
	}
	bin := engramBinary(t)
	kargs, kcfg := kafkaArgs(t, brokers)
	runEngram(t, bin, append([]string{"kafka", "create-topics", "--partitions", "1"}, kargs...)...)
	traceID, parent := fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64()), fmt.Sprintf("%016x", rand.Uint64())
	event := strings.TrimSpace(string(mustRead(t, writeEvents(t, 1, fmt.Sprintf("tk%d-", time.Now().UnixNano())))))
	var id struct{ EventID string }
	if err := json.Unmarshal([]byte(event), &id); err != nil {
		t.Fatal(err)
	}
	c, err := kafka.New(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ProduceRaw(ctx, []kafka.RawRecord{{Key: []byte(id.EventID), Value: []byte(event),
		Headers: []kafka.Header{{Key: kafka.HeaderTraceparent, Value: []byte("00-" + traceID + "-" + parent + "-01")}}}}); err != nil {
		t.Fatal(err)
	}

	service := fmt.Sprintf("engram-systest-%08x", rand.Uint32())
	w := startWorker(t, bin, t.TempDir(), append(append([]string{}, kargs...), "--otel-endpoint", otlp, "--otel-service-name", service))
	waitUntil(t, time.Minute, "the worker to ingest the event", func() bool { return w.ingested() == 1 })
	w.cmd.Process.Signal(syscall.SIGTERM) // exit flushes the spans
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, w.log.String())
	}

	var root *jSpan
	waitUntil(t, 30*time.Second, "the ingestion's spans in Jaeger", func() bool {
		root = findSpan(jaegerURL, traceID, "experience.ingest")
		return root != nil
	})
	if root.parent() != parent {
		t.Errorf("experience.ingest %s is not a child of the producer's span %s: %+v", root.SpanID, parent, root.References)
	}
	tp := enrichedTraceparent(t, kcfg, id.EventID)
	if want := "00-" + traceID + "-" + root.SpanID + "-"; !strings.HasPrefix(tp, want) {
		t.Errorf("experience.enriched traceparent %q, want the ingestion span's %s…", tp, want)
	}
}

// findSpan is the span named op in trace id, nil until Jaeger has it.
func findSpan(base, traceID, op string) *jSpan {
	spans := jaegerSpans(base + "/api/traces/" + traceID)
	for i := range spans {
		if spans[i].OperationName == op {
			return &spans[i]
		}
	}
	return nil
}

// enrichedTraceparent is the traceparent header of eventID's
// experience.enriched notification.
func enrichedTraceparent(t *testing.T, cfg kafka.Config, eventID string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp := ""
	err := kafka.Scan(ctx, cfg, cfg.Topics.Enriched, func(r *kafka.Record) error {
		if string(r.Key) == eventID {
			tp, _ = r.Header(kafka.HeaderTraceparent)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
