package verify

import (
	"context"
	"engram/model"
	"fmt"
	"sort"
)

// isNotificationKind reports whether a kind of disagreement is about the
// notifications rather than the archive and the index.
func isNotificationKind(kind string) bool {
	switch kind {
	case unannounced, notIndexed, badNotice, cutNoticeLines:
		return true
	}
	return false
}

// Kinds of disagreement about notifications.
const (
	unannounced    = "unannounced"           // an indexed event missing from a topic
	notIndexed     = "announced-not-indexed" // a notification of an event the index does not hold
	badNotice      = "bad-notification"      // a topic message that cannot be read
	cutNoticeLines = "cut-notification-line" // a topic file ending in a cut line (skipped)
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

// announcements is what the topics hold, by event id: one bit per topic.
type announcements struct {
	names []string
	bits  map[string]uint16
	keys  map[string]string
}

// loadTopics reads every topic, reporting what cannot be read. Memory is
// one map entry per announced event.
func loadTopics(ctx context.Context, c *collector, topics []TopicSource, from, to string) (*announcements, error) {
	if len(topics) > 16 {
		return nil, fmt.Errorf("verify: at most 16 topics")
	}
	a := &announcements{bits: map[string]uint16{}, keys: map[string]string{}}
	for i, t := range topics {
		a.names = append(a.names, t.Name)
		err := t.Scan(ctx, func(n Notice) error {
			switch {
			case n.Cut:
				c.add(Diff{cutNoticeLines, n.Where, n.EventID, "a cut last line (a write the disk or a crash cut short), skipped"})
			case n.Err != nil:
				c.add(Diff{badNotice, n.Where, n.EventID, n.Err.Error()})
			case n.Key >= from && (to == "" || n.Key < to):
				c.mu.Lock()
				c.rep.Notifications.Messages++
				c.mu.Unlock()
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

// noteIndexed remembers an indexed event for checkNotifications.
func (c *collector) noteIndexed(key string, d *model.IndexDoc) {
	if c.indexed == nil {
		return
	}
	c.mu.Lock()
	c.indexed[d.EventID] = key
	c.mu.Unlock()
}

// checkNotifications checks that each indexed event is on every topic and
// that nothing else is. The order makes it exact during a live ingest: an
// event is held in an outbox from before its index commit until after its
// publish, so reading the outboxes after the scan and the topics after the
// outboxes finds every unannounced event the scan saw either held (in
// flight) or truly unannounced.
func (c *collector) checkNotifications(ctx context.Context, opt Options, from, to string) error {
	held := map[string]bool{}
	if opt.Held != nil {
		var err error
		if held, err = opt.Held(); err != nil {
			return fmt.Errorf("reading the outboxes: %w", err)
		}
	}
	n := &Notifications{}
	for _, t := range opt.Topics {
		n.Topics = append(n.Topics, t.Name)
	}
	c.rep.Notifications = n
	a, err := loadTopics(ctx, c, opt.Topics, from, to)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(c.indexed))
	for id := range c.indexed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		key, b := c.indexed[id], a.bits[id]
		delete(a.bits, id)
		var missing []string
		for i, name := range a.names {
			if b&(1<<i) == 0 {
				missing = append(missing, name)
			}
		}
		n.Indexed++
		switch {
		case len(missing) == 0:
			n.Announced++
		case held[id]:
			c.inFlight()
		default:
			n.Unannounced++
			for _, name := range missing {
				c.add(Diff{unannounced, key, id, "indexed but never announced on " + name})
			}
		}
	}
	c.unclaimed(ctx, a)
	return nil
}

// unclaimed reports the notifications of events the index does not hold
// (after looking again: one indexed since the scan passed it is in flight).
func (c *collector) unclaimed(ctx context.Context, a *announcements) {
	ids := make([]string, 0, len(a.bits))
	for id := range a.bits {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if c.getter != nil {
			if _, err := c.getter.Get(ctx, id); err == nil {
				c.inFlight()
				continue
			}
		}
		c.add(Diff{notIndexed, a.keys[id], id, "announced, but the index has no document for it"})
	}
}
