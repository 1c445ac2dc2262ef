package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers of a record produced to the rejected topic, beside the original
// record's own headers.
const (
	HeaderRejectReason    = "engram-reject-reason" // one header per reason
	HeaderSourceTopic     = "engram-source-topic"
	headerSourcePartition = "engram-source-partition"
	headerSourceOffset    = "engram-source-offset"
	headerRejectedAt      = "engram-rejected-at" // ISO-8601, UTC
)

// ErrClosed is returned by Poll after Close.
var ErrClosed = errors.New("kafka: consumer closed")

// ConsumerOptions tune a Consumer; the zero value is the worker's.
type ConsumerOptions struct {
	// Topics to consume; default the raw topic.
	Topics []string
	// MaxBatch is the most records one Poll returns; default 0: all that
	// the client holds (one fetch, of every partition this member owns).
	MaxBatch int
	// CommitInterval is how often finished records are committed in the
	// background; default 1 s. Close and a revoke commit them at once.
	CommitInterval time.Duration
	// SessionTimeout: a member that stops heartbeating (killed) is removed
	// from the group after this long, and its partitions move on; default
	// the broker's/franz-go's 45 s (the broker allows 6 s at least).
	SessionTimeout time.Duration
	// OnAssigned and OnRevoked, if set, are told of partitions assigned to
	// or taken from this member (revoked or lost), after the Consumer has
	// done its own work (for revokes: committed what was finished).
	OnAssigned, OnRevoked func(map[string][]int32)
}

// Consumer reads the raw topic in the worker's consumer group at least once:
// an offset is committed only once every record before it on its partition
// is marked Done, so a member killed or closed leaves unfinished records to
// the next. A handler must finish or reject every record: an unfinished one
// holds back its partition's commits for the life of this member.
type Consumer struct {
	cfg   Config
	opts  ConsumerOptions
	cl    *kgo.Client
	prod  *Client    // the same connection, for Reject
	codec *AvroCodec // decodes Avro values as they are polled
	link  *link

	mu       sync.Mutex
	pending  map[topicPartition][]*pendingRecord // handed out, in offset order
	assigned map[string][]int32
	closed   bool
}

type topicPartition struct {
	topic     string
	partition int32
}

type pendingRecord struct {
	kr   *kgo.Record
	done bool
}

// fetchMaxBytes bounds what a fetch brings (a quarter of it per
// partition). franz-go's default, 50 MiB, kept a worker's heap at ~78 MB
// of fetched records, which under its 128 MiB soft memory limit made the
// collector run every 25 MB allocated (53 collections in a 50,000-event
// drain, 8% of the CPU); at 1 MiB the heap holds ~35 MB, and the worker
// drained 50,000 events 6% faster with 10% less CPU per event. Kafka
// always returns at least one batch, however large, so nothing is stuck.
const fetchMaxBytes = 1 << 20

// NewConsumer joins the group (lazily, on the first Poll).
func NewConsumer(cfg Config, opts ConsumerOptions) (*Consumer, error) {
	cfg, err := cfg.prepare()
	if err != nil {
		return nil, err
	}
	if len(opts.Topics) == 0 {
		opts.Topics = []string{cfg.Topics.Raw}
	}
	if opts.CommitInterval <= 0 {
		opts.CommitInterval = time.Second
	}
	codec, err := NewAvroCodec(cfg.Registry)
	if err != nil {
		return nil, err
	}
	c := &Consumer{cfg: cfg, opts: opts, codec: codec, link: newLink(), pending: map[topicPartition][]*pendingRecord{}, assigned: map[string][]int32{}}
	base, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	popts, err := cfg.producerOpts()
	if err != nil {
		return nil, err
	}
	kopts := append(base, popts...)
	kopts = append(kopts,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(opts.Topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(fetchMaxBytes), kgo.FetchMaxPartitionBytes(fetchMaxBytes/4),
		// Commit only what Done marked; never what was merely polled.
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(opts.CommitInterval),
		// No revoke between a poll and the tracking of its records.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.WithHooks(c.link),
	)
	if opts.SessionTimeout > 0 {
		kopts = append(kopts, kgo.SessionTimeout(opts.SessionTimeout))
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	c.cl = cl
	c.prod = &Client{cfg: cfg, cl: cl}
	return c, nil
}

// Poll waits for the next records (at most MaxBatch) of this member's
// partitions, interleaved in produce order, each partition in offset order.
// An empty batch with a nil error is possible (also after an outage). Errors
// come only with no records; Fatal tells those that retrying cannot fix. It
// returns ctx's error when ctx ends, and ErrClosed after Close.
func (c *Consumer) Poll(ctx context.Context) ([]*Record, error) {
	fetches := c.link.poll(ctx, c.cl, c.opts.MaxBatch)
	defer c.cl.AllowRebalance()
	if fetches.IsClientClosed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	fetches.EachError(func(t string, p int32, err error) {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", t, p, c.cfg.explain(c.prod.seeds(), err)))
		}
	})
	krs := byProduceTime(fetches.Records())
	out := make([]*Record, len(krs))
	for i, kr := range krs {
		// Avro values are decoded here, before the records are tracked: a
		// schema lookup may take the registry's timeout, and a revoke
		// meanwhile must not find half a poll pending. A value that does
		// not decode is the record's own error (DecodeErr), for the
		// worker to reject; it never stops the poll.
		out[i] = fromKgo(kr)
		c.codec.decodeValue(ctx, out[i])
	}
	if err := ctx.Err(); err != nil {
		// A lookup cut short is no verdict on its record: none of the
		// poll is handed out (the records are read again).
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kr := range krs {
		tp := topicPartition{kr.Topic, kr.Partition}
		c.pending[tp] = append(c.pending[tp], &pendingRecord{kr: kr})
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("kafka: poll: %w", errors.Join(errs...))
	}
	if len(out) == 0 {
		if addr, _, err := c.link.failing(); err != nil {
			return nil, fmt.Errorf("kafka: poll: %w", c.cfg.explain(addr, err))
		}
	}
	return out, nil
}

// Done marks records finished: once every record before one on its
// partition is finished too, its offset is committed (in the background,
// on a revoke, on Close, or by Commit). Records of partitions this member
// no longer owns are ignored (their new owner reads them again).
func (c *Consumer) Done(recs ...*Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	touched := map[topicPartition]bool{}
	for _, r := range recs {
		if r == nil || r.kr == nil {
			continue
		}
		if p := c.pendingLocked(r); p != nil {
			p.done = true
			touched[topicPartition{r.Topic, r.Partition}] = true
		}
	}
	var marks []*kgo.Record
	for tp := range touched {
		list := c.pending[tp]
		n := 0
		for n < len(list) && list[n].done {
			n++
		}
		if n > 0 {
			marks = append(marks, list[n-1].kr)
			// Resliced, not shifted: a poll's worth of records finishing
			// one by one would otherwise copy the list once each.
			c.pending[tp] = list[n:]
		}
	}
	if len(marks) > 0 {
		c.cl.MarkCommitRecords(marks...)
	}
}

// Owns reports whether r is still this member's to finish: polled here,
// not finished, and its partition not revoked since. A record held in hand
// (a poll holds all the client had) whose partition moved to another
// member is that member's to read again; working on it here as well would
// only make a duplicate.
func (c *Consumer) Owns(r *Record) bool {
	if r == nil || r.kr == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pendingLocked(r)
	return p != nil && !p.done
}

// pendingLocked is r's entry in its partition's list of handed-out
// records, nil when it has none (committed past, or its partition gone).
func (c *Consumer) pendingLocked(r *Record) *pendingRecord {
	list := c.pending[topicPartition{r.Topic, r.Partition}]
	i := sort.Search(len(list), func(i int) bool { return list[i].kr.Offset >= r.Offset })
	if i < len(list) && list[i].kr == r.kr {
		return list[i]
	}
	return nil
}

// Pending is how many handed-out records are not finished yet.
func (c *Consumer) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, list := range c.pending {
		for _, p := range list {
			if !p.done {
				n++
			}
		}
	}
	return n
}

// Commit commits what is finished now and waits for the broker.
func (c *Consumer) Commit(ctx context.Context) error {
	if err := c.cl.CommitMarkedOffsets(ctx); err != nil {
		return fmt.Errorf("kafka: commit group %s: %w", c.cfg.Group, c.cfg.explain(c.prod.seeds(), err))
	}
	return nil
}

// Handler processes a batch of records; it calls Done on the Consumer for
// each record it has finished (now or later, from any goroutine).
type Handler func(ctx context.Context, batch []*Record) error

// Run polls and hands every non-empty batch to h until ctx ends (then it
// returns nil) or Poll or h fails (then it returns that error). It does not
// close the Consumer.
func (c *Consumer) Run(ctx context.Context, h Handler) error {
	for {
		recs, err := c.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		if err := h(ctx, recs); err != nil {
			return err
		}
	}
}

// Reject produces rec, as it is (key, value, headers), to the rejected
// topic with one HeaderRejectReason header per reason and the source topic,
// partition and offset, mirrored to the audit topic when one is set. It
// does not mark rec finished: call Done once Reject succeeded.
func (c *Consumer) Reject(ctx context.Context, rec *Record, reasons []string) error {
	now := time.Now().UTC()
	hs := toKgoHeaders(rec.Headers)
	for _, r := range reasons {
		hs = append(hs, kgo.RecordHeader{Key: HeaderRejectReason, Value: []byte(r)})
	}
	hs = append(hs,
		kgo.RecordHeader{Key: HeaderSourceTopic, Value: []byte(rec.Topic)},
		kgo.RecordHeader{Key: headerSourcePartition, Value: []byte(strconv.FormatInt(int64(rec.Partition), 10))},
		kgo.RecordHeader{Key: headerSourceOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
		kgo.RecordHeader{Key: headerRejectedAt, Value: []byte(now.Format(auditTime))},
	)
	krs, err := c.prod.withAudit([]*kgo.Record{{Topic: c.cfg.Topics.Rejected, Key: rec.Key, Value: rec.Stored(), Headers: hs}}, now, false)
	if err != nil {
		return err
	}
	if err := c.prod.produce(ctx, krs); err != nil {
		return fmt.Errorf("reject %s[%d]@%d: %w", rec.Topic, rec.Partition, rec.Offset, err)
	}
	return nil
}

// Assigned is the partitions this member owns now.
func (c *Consumer) Assigned() map[string][]int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]int32, len(c.assigned))
	for t, ps := range c.assigned {
		out[t] = slices.Clone(ps)
	}
	return out
}

// Close commits what is finished, leaves the group (its partitions move to
// the other members at once) and closes the connection. Unfinished records
// are not committed.
func (c *Consumer) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DeliveryTimeout)
	defer cancel()
	err := c.Commit(ctx)
	c.cl.CloseAllowingRebalance()
	return err
}

func (c *Consumer) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.mu.Lock()
	for t, ps := range assigned {
		c.assigned[t] = slices.Compact(slices.Sorted(slices.Values(append(c.assigned[t], ps...))))
	}
	c.mu.Unlock()
	if c.opts.OnAssigned != nil {
		c.opts.OnAssigned(maps.Clone(assigned))
	}
}

// onRevoked commits what is finished on the partitions going away (the
// marks were made by Done), then forgets their unfinished records: their
// next owner starts at the commit.
func (c *Consumer) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.DeliveryTimeout)
	defer cancel()
	c.mu.Lock()
	c.forgetLocked(revoked)
	c.mu.Unlock()
	// Marks made before forgetting are committed; Done after it ignores
	// the records of these partitions.
	_ = cl.CommitMarkedOffsets(cctx) // a failed commit only means a re-read
	if c.opts.OnRevoked != nil {
		c.opts.OnRevoked(maps.Clone(revoked))
	}
}

// onLost: the partitions are gone without a chance to commit.
func (c *Consumer) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.mu.Lock()
	c.forgetLocked(lost)
	c.mu.Unlock()
	if c.opts.OnRevoked != nil {
		c.opts.OnRevoked(maps.Clone(lost))
	}
}

func (c *Consumer) forgetLocked(parts map[string][]int32) {
	for t, ps := range parts {
		for _, p := range ps {
			delete(c.pending, topicPartition{t, p})
		}
		c.assigned[t] = slices.DeleteFunc(c.assigned[t], func(p int32) bool { return slices.Contains(ps, p) })
		if len(c.assigned[t]) == 0 {
			delete(c.assigned, t)
		}
	}
}
