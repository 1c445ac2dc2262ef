package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"engram/backend/kafka"
)

func testKafka(t testing.TB) (kafka.Config, []string) {
	t.Helper()
	b := os.Getenv("ENGRAM_TEST_KAFKA_BROKERS")
	if b == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_KAFKA_BROKERS is not set")
		}
		t.Skip("set ENGRAM_TEST_KAFKA_BROKERS (see .ci/services) to run against a real Kafka broker")
	}
	p := fmt.Sprintf("engram-cli-%08x", rand.Uint32())
	cfg := kafka.Config{Brokers: []string{b}, Topics: kafka.Topics{Raw: p + ".raw", Enriched: p + ".enriched", Indexed: p + ".indexed", Rejected: p + ".rejected"}}.WithDefaults()
	c, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	specs := cfg.TopicSpecs()
	for i := range specs {
		specs[i].Partitions = 2
	}
	if _, err := c.CreateTopics(ctx, specs, 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c.DeleteTopics(ctx, cfg.TopicNames()...)
		cancel()
		c.Close()
	})
	args := []string{"--kafka-brokers", b, "--kafka-topic-raw", cfg.Topics.Raw, "--kafka-topic-enriched", cfg.Topics.Enriched,
		"--kafka-topic-indexed", cfg.Topics.Indexed, "--kafka-topic-audit", "", "--kafka-topic-rejected", cfg.Topics.Rejected}
	return cfg, args
}

// Commands that need Kafka say so, in one line, when it is not configured.
func TestKafkaCommandsNeedBrokers(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{{"worker"}, {"produce"}, {"kafka", "create-topics"}, {"tail", "--topic", "raw"}} {
		_, stderr, code := c.run("", args...)
		if code != 1 || !strings.Contains(stderr, "needs Kafka: set kafka.brokers") {
			t.Errorf("%v: code %d, %s", args, code, stderr)
		}
	}
}

// produce sends what ingest would accept and reports the rest as ingest
// does; tail --topic shows each new message as one JSON line.
func TestProduceAndTailTopic(t *testing.T) {
	_, kargs := testKafka(t)
	c := newCLI(t)
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e := &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}
		run(ctx, e, append([]string{"tail", "--topic", "raw", "--limit", "3"}, kargs...))
	}()
	time.Sleep(2 * time.Second) // the watch starts at the end of the topic
	input := demoLines(3) + `{"eventId":"bad","type":"x"}` + "\n"
	_, stderr, code := c.run(input, append([]string{"produce"}, kargs...)...)
	if code != 1 || !strings.Contains(stderr, "produced 3 to") || !strings.Contains(stderr, "rejected 1") || !strings.Contains(stderr, "stdin:4: type:") {
		t.Fatalf("produce: code %d, %s", code, stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(out.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("tail printed %d lines, want 3: %s %s", len(lines), out.String(), errb.String())
	}
	for _, l := range lines {
		var m struct {
			Key   string
			Value struct{ EventID string }
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Key == "" || m.Key != m.Value.EventID {
			t.Errorf("tail line %s: %v", l, err)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
