package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"engram/ui/topics"
	"engram/ui/uikit"
)

// feedbackBus is the fake bus of a deployment that has the source
// system's memory.feedback topic (kafka.topic_feedback).
type feedbackBus struct{ *fakeBus }

func (b feedbackBus) Topics() []uikit.BusTopic {
	return append(b.fakeBus.Topics(), uikit.BusTopic{Name: "memory.feedback", Role: uikit.RoleFeedback})
}

// TestGoldenTopicsFeedback: the Topics view lists memory.feedback with its
// role and numbers, and shows its messages beside the others'.
func TestGoldenTopicsFeedback(t *testing.T) {
	r, a := goldenWorld()
	d := testDeps(r, a)
	b := newFakeBus()
	b.stats.Topics = append(b.stats.Topics, uikit.TopicStats{Name: "memory.feedback", Partitions: 3, End: 4120, Lag: -1})
	d.Bus = feedbackBus{b}
	m := newTestModel(t, d, testOpts(t), 80, 24)
	press(t, m, "shift+tab")
	msgs := append(busMessages(testNow), uikit.BusMessage{Topic: "memory.feedback", Partition: 2, Offset: 41, Time: testNow.Add(2 * time.Second),
		Key: "ev-0003", Value: []byte(`{"eventId":"ev-0003","feedback":"helpful","score":0.9}`)})
	feed(t, m, b, msgs)
	send(t, m, topics.StatsMsg{Stats: grown(b.stats, 12, 8), At: testNow.Add(4 * time.Second)})
	out := screen(m)
	if !strings.Contains(out, "memory.feedback") {
		t.Fatalf("no memory.feedback row:\n%s", out)
	}
	golden.RequireEqual(t, []byte(out))
}
