package kafka

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"engram/model"
)

func TestCheckMissingTopic(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	c := setup(t, cfg, 1, cfg.Topics.Raw, cfg.Topics.Enriched, cfg.Topics.Audit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	err := c.Check(ctx)
	if !IsProblem(err, ProblemMissingTopic) {
		t.Fatalf("Check: %v, want a missing topic error", err)
	}
	msg := err.Error()
	for _, want := range []string{cfg.Brokers[0], cfg.Topics.Indexed, cfg.Topics.Rejected, "never auto-created", "create"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, cfg.Topics.Raw+`"`) || strings.Contains(msg, "\n") {
		t.Errorf("Check error %q names an existing topic or is not one line", msg)
	}
	if err := c.CheckTopics(ctx, cfg.Topics.Raw, cfg.Topics.Enriched); err != nil {
		t.Errorf("CheckTopics of existing topics: %v", err)
	}
	// One seed down while another answers: still usable.
	oneDown := cfg
	oneDown.Brokers = []string{freePort(t), cfg.Brokers[0]}
	od, err := New(oneDown)
	if err != nil {
		t.Fatal(err)
	}
	defer od.Close()
	if err := od.CheckTopics(ctx, cfg.Topics.Raw); err != nil {
		t.Errorf("CheckTopics with one of two seeds down: %v", err)
	}

	// Publishing to the missing topic fails (quickly) and creates nothing.
	p, err := NewPublisher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	err = p.PublishPayloads(ctx, []model.Enriched{{EventID: "e1", Tags: []string{}}}, []model.Indexed{{EventID: "e1"}})
	if !IsProblem(err, ProblemMissingTopic) || !strings.Contains(err.Error(), cfg.Topics.Indexed) {
		t.Fatalf("Publish to a missing topic: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Publish to a missing topic took %v", d)
	}
	topics, err := kadm.NewClient(c.cl).ListTopics(ctx, cfg.Topics.Indexed)
	if err != nil {
		t.Fatal(err)
	}
	if d := topics[cfg.Topics.Indexed]; d.Err == nil {
		t.Errorf("topic %s was auto-created by producing to it", cfg.Topics.Indexed)
	}
}

func TestUnreachableBroker(t *testing.T) {
	t.Parallel()
	testBrokers(t) // a broker only for the rules on skipping; this test uses none
	addr := freePort(t)
	cfg := Config{Brokers: []string{addr}, DeliveryTimeout: 2 * time.Second, DialTimeout: time.Second}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	err = c.Check(ctx)
	if !IsProblem(err, problemUnreachable) {
		t.Fatalf("Check: %v, want unreachable", err)
	}
	if msg := err.Error(); !strings.Contains(msg, addr) || !strings.Contains(msg, "is Kafka running") || strings.Contains(msg, "\n") {
		t.Errorf("Check error %q should name %s and the fix on one line", msg, addr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Check took %v", d)
	}

	// A publish through the outage is an error within the delivery
	// timeout, not a hang.
	p, err := NewPublisher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start = time.Now()
	err = p.PublishPayloads(ctx, []model.Enriched{{EventID: "e1", Tags: []string{}}}, nil)
	if err == nil {
		t.Fatal("Publish to an unreachable broker succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Publish failed only after %v (delivery timeout 2s)", d)
	}
	if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "not acknowledged") {
		t.Errorf("Publish error %q should name the broker", err)
	}
}

func TestCheckTLSAgainstPlaintextListener(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.TLS.Enabled = true
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = c.Check(ctx)
	if !IsProblem(err, problemTLS) {
		t.Fatalf("Check with TLS on a plaintext listener: %v, want a TLS failure", err)
	}
	if msg := err.Error(); !strings.Contains(msg, cfg.Brokers[0]) || !strings.Contains(msg, "not speak TLS") {
		t.Errorf("Check error %q should name the broker and say the listener does not speak TLS", msg)
	}
}

func TestCreateTopicsAsSpecified(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Cleanup(func() {
		if err := c.DeleteTopics(context.Background(), cfg.TopicNames()...); err != nil {
			t.Error(err)
		}
		c.Close()
	})
	created, err := c.CreateTopics(ctx, cfg.TopicSpecs(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 5 {
		t.Errorf("created %v, want the 5 topics", created)
	}
	if err := c.Check(ctx); err != nil {
		t.Errorf("Check after CreateTopics: %v", err)
	}
	again, err := c.CreateTopics(ctx, cfg.TopicSpecs(), 1)
	if err != nil || len(again) != 0 {
		t.Errorf("second CreateTopics: created %v, %v; want nothing, no error", again, err)
	}
	adm := kadm.NewClient(c.cl)
	details, err := adm.ListTopics(ctx, cfg.TopicNames()...)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, cfg.TopicNames()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.TopicSpecs() {
		if n := len(details[s.Name].Partitions); n != int(s.Partitions) {
			t.Errorf("%s: %d partitions, want %d", s.Name, n, s.Partitions)
		}
		rc, err := configs.On(s.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var retention string
		for _, kv := range rc.Configs {
			if kv.Key == "retention.ms" && kv.Value != nil {
				retention = *kv.Value
			}
		}
		if want := strconv.FormatInt(s.Retention.Milliseconds(), 10); retention != want {
			t.Errorf("%s: retention.ms %s, want %s", s.Name, retention, want)
		}
	}
	want := map[string]int32{cfg.Topics.Raw: 12, cfg.Topics.Enriched: 12, cfg.Topics.Indexed: 6}
	for _, s := range cfg.TopicSpecs() {
		if n, ok := want[s.Name]; ok && s.Partitions != n {
			t.Errorf("spec %s: %d partitions, docs/data-contract.md says %d", s.Name, s.Partitions, n)
		}
	}
}
