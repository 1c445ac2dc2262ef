package verify

import (
	"context"
	"fmt"
	"sort"
)

// Kinds of disagreement about notifications.
const (
	Unannounced    = "unannounced"           // an indexed event missing from a topic
	NotIndexed     = "announced-not-indexed" // a notification of an event the index does not hold
	BadNotice      = "bad-notification"      // a topic message that cannot be read
	CutNoticeLines = "cut-notification-line" // a topic file ending in a cut line (skipped)
)

// Notice is one message of a notification topic, as a TopicSource reads it.
type Notice struct {
	EventID, Key string
	Where        string // file:line or topic/partition/offset, for people
	Err          error  // the message cannot be read (Cut: it is a cut last line)
	Cut          bool
}

// TopicSource reads every message of one notification topic.
type TopicSource struct {
	Name string
	Scan func(ctx context.Context, fn func(Notice) error) error
}

// announcements is what the topics hold, by event id: one bit per topic,
// and a last bit once an indexed event claimed it.
type announcements struct {
	names []string
	bits  map[string]uint16
	keys  map[string]string
}

const claimed = uint16(1) << 15

// loadTopics reads every topic, reporting what cannot be read. Memory is
// one map entry per announced event.
func loadTopics(ctx context.Context, c *collector, topics []TopicSource, from, to string) (*announcements, error) {
	if len(topics) > 15 {
		return nil, fmt.Errorf("verify: at most 15 topics")
	}
	a := &announcements{bits: map[string]uint16{}, keys: map[string]string{}}
	for i, t := range topics {
		a.names = append(a.names, t.Name)
		err := t.Scan(ctx, func(n Notice) error {
			switch {
			case n.Cut:
				c.add(Diff{CutNoticeLines, n.Where, n.EventID, "a cut last line (a write the disk or a crash cut short), skipped"})
			case n.Err != nil:
				c.add(Diff{BadNotice, n.Where, n.EventID, n.Err.Error()})
			case n.Key >= from && (to == "" || n.Key < to):
				a.bits[n.EventID] |= 1 << i
				a.keys[n.EventID] = n.Key
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading topic %s: %w", t.Name, err)
		}
	}
	return a, nil
}

// claim checks that an indexed event is on every topic. Called with c.mu
// not held.
func (c *collector) claim(key, eventID string) bool {
	a := c.topics
	if a == nil {
		return true
	}
	c.mu.Lock()
	b := a.bits[eventID]
	a.bits[eventID] = b | claimed
	c.mu.Unlock()
	ok := true
	for i, name := range a.names {
		if b&(1<<i) == 0 {
			c.add(Diff{Unannounced, key, eventID, "indexed but never announced on " + name})
			ok = false
		}
	}
	return ok
}

// unclaimed reports the notifications of events the index does not hold.
func (c *collector) unclaimed() {
	a := c.topics
	if a == nil {
		return
	}
	var ids []string
	for id, b := range a.bits {
		if b&claimed == 0 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		c.add(Diff{NotIndexed, a.keys[id], id, "announced, but the index has no document for it"})
	}
}
