package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"engram/backend/kafka"
	"engram/ui/uikit"
)

// The Topics view's memory.feedback row against the real broker: listed
// with its role; missing, it says so and the watch of the other topics
// still starts; once there, its messages are watched like the others'.
func TestKafkaBusFeedback(t *testing.T) {
	cfg, _ := testKafka(t)
	cfg.Topics.Feedback = cfg.Topics.Raw + ".feedback"
	bus, err := newKafkaBus(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	topics := bus.Topics()
	if last := topics[len(topics)-1]; last.Name != cfg.Topics.Feedback || last.Role != uikit.RoleFeedback {
		t.Fatalf("topics %+v", topics)
	}
	s, err := bus.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := s.Topics[len(s.Topics)-1]
	if last.Name != cfg.Topics.Feedback || last.Err == nil || !strings.Contains(last.Err.Error(), "memory.feedback") {
		t.Fatalf("missing feedback topic: %+v", last)
	}
	w, err := bus.Watch(ctx, 5)
	if err != nil {
		t.Fatalf("a missing memory.feedback kept the watch from starting: %v", err)
	}
	w.Close()

	if _, err := bus.admin.CreateTopics(ctx, []kafka.TopicSpec{{Name: cfg.Topics.Feedback, Partitions: 1}}, 1); err != nil {
		t.Fatal(err)
	}
	defer bus.admin.DeleteTopics(context.Background(), cfg.Topics.Feedback)
	w, err = bus.Watch(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	value := `{"eventId":"ev-1","feedback":"helpful","score":0.9}`
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: cfg.Topics.Feedback, Key: []byte("ev-1"), Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		msgs, err := w.Poll(ctx)
		if err != nil {
			t.Fatalf("no feedback message watched: %v", err)
		}
		for _, m := range msgs {
			if m.Topic == cfg.Topics.Feedback && m.Key == "ev-1" && string(m.Value) == value {
				return
			}
		}
	}
}
