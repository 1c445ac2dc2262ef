package kafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// testBrokers returns the brokers of the real test broker, skipping the
// test when none is configured (failing instead under
// ENGRAM_REQUIRE_SERVICES=1) or when it does not answer.
func testBrokers(t *testing.T) []string {
	t.Helper()
	v := os.Getenv("ENGRAM_TEST_KAFKA_BROKERS")
	require := os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1"
	if v == "" {
		if require {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_KAFKA_BROKERS is not set (bash .ci/services/up.sh && source .ci/services/.env)")
		}
		t.Skip("set ENGRAM_TEST_KAFKA_BROKERS=127.0.0.1:9092 (bash .ci/services/kafka.sh start) to run the Kafka tests")
	}
	brokers := strings.Split(v, ",")
	conn, err := net.DialTimeout("tcp", brokers[0], 3*time.Second)
	if err != nil {
		if require {
			t.Fatalf("ENGRAM_REQUIRE_SERVICES=1 but the Kafka broker %s does not answer: %v", brokers[0], err)
		}
		t.Skipf("the Kafka broker %s (ENGRAM_TEST_KAFKA_BROKERS) does not answer: %v", brokers[0], err)
	}
	conn.Close()
	return brokers
}

var nonName = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// testConfig is a config with topic and group names of this test only.
func testConfig(t *testing.T) Config {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.ToLower(nonName.ReplaceAllString(t.Name(), "-"))
	if len(name) > 40 {
		name = name[:40]
	}
	p := "engram-test-" + name + "-" + hex.EncodeToString(b[:])
	return Config{
		Brokers: testBrokers(t),
		Group:   p + "-group",
		Topics: Topics{
			Raw: p + ".raw", Enriched: p + ".enriched", Indexed: p + ".indexed",
			Audit: p + ".audit", Rejected: p + ".rejected",
		},
		DeliveryTimeout: 20 * time.Second,
	}.WithDefaults()
}

// setup creates the given topics (partitions each) of cfg, and deletes
// them and the group when the test ends. It returns an admin client.
func setup(t *testing.T, cfg Config, partitions int32, topics ...string) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var specs []TopicSpec
	for _, name := range topics {
		specs = append(specs, TopicSpec{Name: name, Partitions: partitions, Retention: time.Hour})
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.DeleteTopics(ctx, cfg.TopicNames()...); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if groups, err := c.adm.ListGroups(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		} else if groups.Groups() != nil && slices.Contains(groups.Groups(), cfg.Group) {
			if err := c.DeleteGroup(ctx, cfg.Group); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		c.Close()
	})
	created, err := c.CreateTopics(ctx, specs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != len(topics) {
		t.Fatalf("created %v, want %v", created, topics)
	}
	return c
}

// readAll reads topics from the start with a Watch until want records came
// (or the deadline), and returns them by topic.
func readAll(t *testing.T, cfg Config, want int, topics ...string) map[string][]*Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := NewWatch(ctx, cfg, WatchOptions{Topics: topics, From: FromStart})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got := map[string][]*Record{}
	n := 0
	for n < want {
		recs, err := w.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d records: %v", n, want, err)
		}
		for _, r := range recs {
			got[r.Topic] = append(got[r.Topic], r)
		}
		n += len(recs)
	}
	return got
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func headerMap(r *Record) map[string][]string {
	m := map[string][]string{}
	for _, h := range r.Headers {
		m[h.Key] = append(m[h.Key], string(h.Value))
	}
	return m
}

// notifier sets up cfg's notification topics (one partition each, no
// audit mirror) and returns a Publisher on them, closed when the test ends.
func notifier(t *testing.T, cfg Config) *Publisher {
	t.Helper()
	setup(t, cfg, 1, cfg.Topics.Enriched, cfg.Topics.Indexed)
	cfg.Topics.Audit = ""
	p, err := NewPublisher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
