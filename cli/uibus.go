package cli

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"engram/backend/kafka"
	"engram/model"
	"engram/ui/uikit"
)

// kafkaBus is the deployment's Kafka as the inspector watches it (the
// Topics view) and sends to it (the record form). Its watches join no
// group and commit nothing.
type kafkaBus struct {
	cfg   kafka.Config
	admin *kafka.Client
}

// newKafkaBus connects lazily: a broker down shows in the Topics view,
// it does not keep the inspector from starting.
func newKafkaBus(cfg kafka.Config) (*kafkaBus, error) {
	c, err := kafka.New(cfg)
	if err != nil {
		return nil, err
	}
	return &kafkaBus{cfg: c.Config(), admin: c}, nil
}

func (b *kafkaBus) Close() error { return b.admin.Close() }

func (b *kafkaBus) Where() string { return "kafka " + strings.Join(b.cfg.Brokers, ",") }

func (b *kafkaBus) TimeNote() string {
	return "time is each record's timestamp, as the producer (or the broker, by the topic's message.timestamp.type) set it"
}

func (b *kafkaBus) Topics() []uikit.BusTopic {
	t := b.cfg.Topics
	out := []uikit.BusTopic{{Name: t.Raw, Role: uikit.RoleRaw}, {Name: t.Enriched, Role: uikit.RoleEnriched}, {Name: t.Indexed, Role: uikit.RoleIndexed}}
	if t.Audit != "" {
		out = append(out, uikit.BusTopic{Name: t.Audit, Role: uikit.RoleAudit})
	}
	out = append(out, uikit.BusTopic{Name: t.Rejected, Role: uikit.RoleRejected})
	if t.Feedback != "" {
		out = append(out, uikit.BusTopic{Name: t.Feedback, Role: uikit.RoleFeedback})
	}
	return out
}

func (b *kafkaBus) names() []string {
	var out []string
	for _, t := range b.Topics() {
		out = append(out, t.Name)
	}
	return out
}

// Stats asks each topic apart, so that one missing topic leaves the
// others' numbers shown.
func (b *kafkaBus) Stats(ctx context.Context) (uikit.BusStats, error) {
	s := uikit.BusStats{Group: b.cfg.Group}
	lag, lerr := b.admin.GroupLag(ctx, b.cfg.Group)
	noGroup := kafka.NoGroup(lerr)
	switch {
	case noGroup:
		// No worker has joined yet: everything in the raw topic is to do.
		s.GroupState, lerr = "no worker yet", nil
	case lerr != nil:
		s.GroupErr = errors.New(strings.TrimPrefix(lerr.Error(), "kafka "))
	default:
		s.GroupState, s.Members = lag.State, lag.Members
	}
	for _, name := range b.names() {
		ts := uikit.TopicStats{Name: name, Lag: -1}
		end, err := b.admin.EndOffsets(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return s, ctx.Err()
			}
			ts.Err = err
			if kafka.IsProblem(err, kafka.ProblemMissingTopic) {
				ts.Err = errors.New("does not exist (engram kafka create-topics)")
				if name == b.cfg.Topics.Feedback {
					ts.Err = errors.New("does not exist (the source system's memory.feedback: written by its workers)")
				}
			}
		}
		ts.Partitions = len(end[name])
		ts.Ends = make([]int64, ts.Partitions)
		for p, e := range end[name] {
			ts.End += e
			if int(p) < len(ts.Ends) {
				ts.Ends[p] = e
			}
		}
		if noGroup && name == b.cfg.Topics.Raw && ts.Err == nil {
			ts.Lag = ts.End // less what retention dropped: never committed
		}
		if ps, ok := lag.Partitions[name]; ok && lerr == nil {
			ts.Lag = 0
			for _, p := range ps {
				ts.Lag += max(0, p.Lag)
			}
		}
		s.Topics = append(s.Topics, ts)
	}
	return s, nil
}

func (b *kafkaBus) Watch(ctx context.Context, last int) (uikit.BusWatch, error) {
	names := b.names()
	// memory.feedback is the source system's, and many deployments lack
	// it: a missing one is left out of the watch (its row says so) rather
	// than keep every topic from being watched.
	if f := b.cfg.Topics.Feedback; f != "" {
		if _, err := b.admin.EndOffsets(ctx, f); kafka.IsProblem(err, kafka.ProblemMissingTopic) {
			names = slices.DeleteFunc(names, func(n string) bool { return n == f })
		}
	}
	w, err := kafka.NewWatch(ctx, b.cfg, kafka.WatchOptions{Topics: names, From: kafka.FromEnd, Last: int64(last)})
	if err != nil {
		return nil, err
	}
	return kafkaWatch{w}, nil
}

type kafkaWatch struct{ w *kafka.Watch }

func (k kafkaWatch) Poll(ctx context.Context) ([]uikit.BusMessage, error) {
	recs, err := k.w.Poll(ctx)
	out := make([]uikit.BusMessage, len(recs))
	for i, r := range recs {
		out[i] = busMessage(r)
	}
	return out, err
}

func (k kafkaWatch) Close() { k.w.Close() }

func busMessage(r *kafka.Record) uikit.BusMessage {
	m := uikit.BusMessage{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Time: r.Timestamp, Key: string(r.Key), Value: r.Value}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, uikit.BusHeader{Key: h.Key, Value: string(h.Value)})
	}
	// An Avro value is shown as its decoded JSON (the Watch decoded it);
	// the view learns that it was Avro, under which schema, or why it
	// could not be decoded, from these two entries after the message's
	// own headers (never sent to Kafka).
	if r.Format == kafka.FormatAvro {
		m.Headers = append(m.Headers, uikit.BusHeader{Key: "(avro schema id)", Value: strconv.Itoa(r.SchemaID)})
		if r.DecodeErr != nil {
			m.Headers = append(m.Headers, uikit.BusHeader{Key: "(avro error)", Value: r.DecodeErr.Error()})
		}
	}
	return m
}

func (b *kafkaBus) CanSend() bool { return true }

// Send watches the notification topics from their ends, then produces:
// no notification can come before the watch is there to see it.
func (b *kafkaBus) Send(ctx context.Context, ev *model.Event, seen func(uikit.BusMessage)) error {
	t := b.cfg.Topics
	w, err := kafka.NewWatch(ctx, b.cfg, kafka.WatchOptions{Topics: []string{t.Enriched, t.Indexed}, From: kafka.FromEnd})
	if err != nil {
		return err
	}
	defer w.Close()
	value := ev.Raw()
	if value == nil {
		return errors.New("the event has no JSON to send")
	}
	rec := kafka.RawRecord{Key: []byte(ev.EventID), Value: value}
	if tp := kafka.TraceOf(ev).Traceparent(); tp != "" {
		rec.Headers = []kafka.Header{{Key: kafka.HeaderTraceparent, Value: []byte(tp)}}
	}
	out, err := b.admin.ProduceRaw(ctx, []kafka.RawRecord{rec})
	if err != nil {
		return err
	}
	seen(uikit.BusMessage{Topic: out[0].Topic, Partition: out[0].Partition, Offset: out[0].Offset, Key: ev.EventID, Hop: uikit.HopProduced})
	hops := map[string]uikit.Hop{t.Enriched: uikit.HopEnriched, t.Indexed: uikit.HopIndexed}
	for len(hops) > 0 {
		recs, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// The client retries a broker that went away: keep watching
			// (the record form shows the hop stuck when it is too late).
			time.Sleep(500 * time.Millisecond)
			continue
		}
		for _, r := range recs {
			if h, ok := hops[r.Topic]; ok && string(r.Key) == ev.EventID {
				m := busMessage(r)
				m.Hop = h
				seen(m)
				delete(hops, r.Topic)
			}
		}
	}
	return nil
}

// openUIBus is the bus the inspector watches: Kafka when kafka.brokers is
// set, else the topic files of the data directory (nil without one).
func openUIBus(conf *resolved, data string) (uikit.Bus, func() error, error) {
	kcfg, ok, err := kafkaConfig(conf)
	switch {
	case err != nil:
		return nil, nil, err
	case ok:
		b, err := newKafkaBus(kcfg)
		if err != nil {
			return nil, nil, errors.New(conf.redact(err.Error()))
		}
		return b, b.Close, nil
	case data != "":
		return newFileBus(filepath.Join(data, "topics")), func() error { return nil }, nil
	}
	return nil, nil, nil
}
