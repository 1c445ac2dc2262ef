package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Client is a producer and admin connection: the start-up check, topic
// creation, offsets and lag, and producing raw records. It is safe for
// concurrent use.
type Client struct {
	cfg Config
	cl  *kgo.Client
	adm *kadm.Client
}

// New connects lazily (the first request dials): use Check to find out
// whether the brokers can be used.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.prepare()
	if err != nil {
		return nil, err
	}
	opts, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	popts, err := cfg.producerOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, popts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &Client{cfg: cfg, cl: cl, adm: kadm.NewClient(cl)}, nil
}

// Config is the configuration in use, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// Close closes the connections; buffered records are not waited for (every
// produce of this package waits for its records itself).
func (c *Client) Close() error {
	c.cl.Close()
	return nil
}

func (c *Client) seeds() string { return joinBrokers(c.cfg) }

func joinBrokers(c Config) string { return strings.Join(c.Brokers, ",") }

// TopicNames lists the configured topics (Audit only when set).
func (c Config) TopicNames() []string {
	names := []string{c.Topics.Raw, c.Topics.Enriched, c.Topics.Indexed, c.Topics.Rejected}
	if c.Topics.Audit != "" {
		names = append(names, c.Topics.Audit)
	}
	return slices.DeleteFunc(names, func(s string) bool { return s == "" })
}

// Check is the start-up check: a seed broker is reachable (one that is down
// while others answer is not an error: the client copes), every reachable
// one passes the TLS handshake, the brokers accept our SASL credentials,
// and every configured topic exists. Each failure is one *Error line naming
// the broker and the likely fix. Topics are never created here.
func (c *Client) Check(ctx context.Context) error {
	return c.CheckTopics(ctx, c.cfg.TopicNames()...)
}

// CheckTopics is Check for the given topics only (a publisher needs no raw
// topic, a tail only the topic it reads).
func (c *Client) CheckTopics(ctx context.Context, topics ...string) error {
	var down error
	reachable := 0
	for _, b := range c.cfg.Brokers {
		err := c.cfg.dialCheck(ctx, b)
		switch {
		case err == nil:
			reachable++
		case IsProblem(err, problemUnreachable):
			if down == nil {
				down = err
			}
		default:
			return err
		}
	}
	if reachable == 0 {
		return down
	}
	mctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout+5*time.Second)
	defer cancel()
	if len(topics) == 0 {
		// Still authenticate: a metadata request without topics.
		_, err := c.adm.BrokerMetadata(mctx)
		return c.cfg.explain(c.seeds(), err)
	}
	details, err := c.adm.ListTopics(mctx, topics...)
	if err != nil {
		return c.cfg.explain(c.seeds(), err)
	}
	var missing []string
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			missing = append(missing, t)
		case d.Err != nil:
			return c.cfg.explain(c.seeds(), fmt.Errorf("topic %s: %w", t, d.Err))
		}
	}
	if len(missing) > 0 {
		return &Error{Broker: c.seeds(), Problem: ProblemMissingTopic, Topics: missing, Err: kerr.UnknownTopicOrPartition,
			Fix: "topics are never auto-created: create them first (CreateTopics / the create-topics command)"}
	}
	return nil
}

// TopicSpec is how a topic is created.
type TopicSpec struct {
	Name       string
	Partitions int32
	Retention  time.Duration // 0: the broker's default
}

// TopicSpecs are the configured topics as the source system creates them
// (docs/data-contract.md, Kafka, as the source system runs it): raw and
// enriched 12 partitions, 7 days; indexed 6 partitions, 30 days. Audit and rejected are not in the source system's
// list: engram gives the audit topic 12 partitions (it takes a copy of
// both notification topics) and the rejected one 6, both 30 days, so a
// rejection can still be looked at weeks later.
func (c Config) TopicSpecs() []TopicSpec {
	const day = 24 * time.Hour
	specs := []TopicSpec{
		{c.Topics.Raw, 12, 7 * day},
		{c.Topics.Enriched, 12, 7 * day},
		{c.Topics.Indexed, 6, 30 * day},
		{c.Topics.Rejected, 6, 30 * day},
	}
	if c.Topics.Audit != "" {
		specs = append(specs, TopicSpec{c.Topics.Audit, 12, 30 * day})
	}
	return specs
}

// CreateTopics creates each topic of specs that does not exist yet, with
// the given replication factor (3 in production, 1 on a single broker),
// and returns the names it created. Existing topics are left as they are.
func (c *Client) CreateTopics(ctx context.Context, specs []TopicSpec, replicationFactor int16) ([]string, error) {
	var created []string
	for _, s := range specs {
		if err := validTopic(s.Name); err != nil {
			return created, fmt.Errorf("kafka: %w", err)
		}
		var configs map[string]*string
		if s.Retention > 0 {
			configs = map[string]*string{"retention.ms": kadm.StringPtr(strconv.FormatInt(s.Retention.Milliseconds(), 10))}
		}
		resp, err := c.adm.CreateTopic(ctx, s.Partitions, replicationFactor, configs, s.Name)
		if err == nil {
			err = resp.Err
			if err != nil && resp.ErrMessage != "" {
				err = fmt.Errorf("%w (%s)", err, resp.ErrMessage)
			}
		}
		switch {
		case err == nil:
			created = append(created, s.Name)
		case errors.Is(err, kerr.TopicAlreadyExists):
		default:
			return created, fmt.Errorf("kafka %s: create topic %s (%d partitions, replication %d): %w",
				c.seeds(), s.Name, s.Partitions, replicationFactor, c.cfg.explain(c.seeds(), err))
		}
	}
	return created, c.waitForTopics(ctx, specs)
}

// waitForTopics waits until the metadata shows every partition of specs:
// a topic is only usable (by Check, a producer) once it does.
func (c *Client) waitForTopics(ctx context.Context, specs []TopicSpec) error {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	for {
		details, err := c.adm.ListTopics(ctx, names...)
		ready := err == nil
		for _, s := range specs {
			if d, ok := details[s.Name]; !ok || d.Err != nil || len(d.Partitions) < int(s.Partitions) {
				ready = false
			} else {
				for _, p := range d.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka %s: topics %v created but not all ready: %w", c.seeds(), names, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DeleteTopics deletes topics (a missing one is not an error).
func (c *Client) DeleteTopics(ctx context.Context, topics ...string) error {
	resps, err := c.adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return c.cfg.explain(c.seeds(), err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("kafka %s: delete topic %s: %w", c.seeds(), r.Topic, r.Err)
		}
	}
	return nil
}

// DeleteGroup deletes a consumer group and its committed offsets (a
// missing one is not an error). The group must have no members.
func (c *Client) DeleteGroup(ctx context.Context, group string) error {
	resps, err := c.adm.DeleteGroups(ctx, group)
	if err != nil {
		return c.cfg.explain(c.seeds(), err)
	}
	if r, ok := resps[group]; ok && r.Err != nil && !errors.Is(r.Err, kerr.GroupIDNotFound) {
		return fmt.Errorf("kafka %s: delete group %s: %w", c.seeds(), group, r.Err)
	}
	return nil
}

// ProduceRaw produces records to the raw topic (test events, a replay) and
// returns where each was stored, in order. It returns once the broker has
// acknowledged every record, or an error naming how many failed.
func (c *Client) ProduceRaw(ctx context.Context, recs []RawRecord) ([]Produced, error) {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: c.cfg.Topics.Raw, Key: r.Key, Value: r.Value, Headers: toKgoHeaders(r.Headers)}
	}
	if err := c.produce(ctx, krs); err != nil {
		return nil, err
	}
	out := make([]Produced, len(krs))
	for i, kr := range krs {
		out[i] = Produced{kr.Topic, kr.Partition, kr.Offset}
	}
	return out, nil
}

// produce sends records and waits for every acknowledgement, no longer than
// the delivery timeout (plus a margin for the last request in flight).
func (c *Client) produce(ctx context.Context, krs []*kgo.Record) error {
	if len(krs) == 0 {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.DeliveryTimeout+5*time.Second)
	defer cancel()
	var failed int
	var first error
	var missing []string
	for _, r := range c.cl.ProduceSync(pctx, krs...) {
		if r.Err == nil {
			continue
		}
		failed++
		if first == nil {
			first = fmt.Errorf("topic %s: %w", r.Record.Topic, r.Err)
		}
		if errors.Is(r.Err, kerr.UnknownTopicOrPartition) && !slices.Contains(missing, r.Record.Topic) {
			missing = append(missing, r.Record.Topic)
		}
	}
	if first == nil {
		return nil
	}
	e := c.cfg.explain(c.seeds(), first)
	var ke *Error
	if errors.As(e, &ke) && ke.Problem == ProblemMissingTopic {
		ke.Topics = missing
	}
	return fmt.Errorf("kafka: %d of %d records not acknowledged: %w", failed, len(krs), e)
}

// EndOffsets returns the end offset (the offset the next record will get)
// of every partition of topics.
func (c *Client) EndOffsets(ctx context.Context, topics ...string) (map[string]map[int32]int64, error) {
	return c.listOffsets(ctx, c.adm.ListEndOffsets, topics)
}

// StartOffsets returns the first offset still stored of every partition of
// topics.
func (c *Client) StartOffsets(ctx context.Context, topics ...string) (map[string]map[int32]int64, error) {
	return c.listOffsets(ctx, c.adm.ListStartOffsets, topics)
}

func (c *Client) listOffsets(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), topics []string) (map[string]map[int32]int64, error) {
	listed, err := list(ctx, topics...)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			var missing []string
			for _, t := range topics {
				if _, ok := listed[t]; !ok || listed[t][-1].Err != nil {
					missing = append(missing, t)
				}
			}
			return nil, &Error{Broker: c.seeds(), Problem: ProblemMissingTopic, Topics: missing, Err: err,
				Fix: "topics are never auto-created: create them first (CreateTopics / the create-topics command)"}
		}
		return nil, c.cfg.explain(c.seeds(), err)
	}
	out := make(map[string]map[int32]int64, len(listed))
	listed.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	return out, nil
}

// PartitionLag is how far a group is behind on one partition.
type PartitionLag struct {
	Committed int64 // the group's committed offset, -1 if none
	End       int64 // the partition's end offset
	Lag       int64 // records not yet committed by the group
}

// Lag is how far a consumer group is behind, per topic and partition.
type Lag struct {
	Group      string
	State      string // Empty, Stable, PreparingRebalance, Dead...
	Members    int
	Total      int64
	Partitions map[string]map[int32]PartitionLag
}

// GroupLag describes the group's members, committed offsets and lag.
func (c *Client) GroupLag(ctx context.Context, group string) (Lag, error) {
	lags, err := c.adm.Lag(ctx, group)
	if err != nil {
		return Lag{}, c.cfg.explain(c.seeds(), err)
	}
	gl, ok := lags[group]
	if !ok {
		return Lag{}, fmt.Errorf("kafka %s: group %s not described", c.seeds(), group)
	}
	if err := gl.Error(); err != nil {
		return Lag{}, fmt.Errorf("kafka %s: group %s: %w", c.seeds(), group, c.cfg.explain(c.seeds(), err))
	}
	out := Lag{Group: group, State: gl.State, Members: len(gl.Members), Partitions: map[string]map[int32]PartitionLag{}}
	for topic, ps := range gl.Lag {
		for p, l := range ps {
			if out.Partitions[topic] == nil {
				out.Partitions[topic] = map[int32]PartitionLag{}
			}
			committed := l.Commit.At
			if l.Commit.At < 0 {
				committed = -1
			}
			pl := PartitionLag{Committed: committed, End: l.End.Offset, Lag: l.Lag}
			out.Partitions[topic][p] = pl
			if pl.Lag > 0 {
				out.Total += pl.Lag
			}
		}
	}
	return out, nil
}
