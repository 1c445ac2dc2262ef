package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// From is where a Watch starts on each partition.
type From int

// Watch starting points.
const (
	FromEnd   From = iota // only records produced after NewWatch
	FromStart             // everything still stored
)

// WatchOptions say what a Watch reads.
type WatchOptions struct {
	Topics []string // required
	From   From
	// Last, when > 0, starts each partition this many records before its
	// end (or at its start, if it holds fewer): `tail -n`.
	Last int64
	// MaxBatch is the most records one Poll returns; default 500.
	MaxBatch int
	// KeepControl returns transaction markers too (Record.Control): a
	// reader that stops at an end offset needs them, as a marker may be
	// the last offset before it.
	KeepControl bool
	// At, when it names a partition, starts it at that offset (kept
	// within what the partition stores), whatever From and Last say.
	At map[string]map[int32]int64
}

// Watch reads topics without joining any consumer group and without
// committing anything: for live views and `engram tail --topic`. Its
// starting offsets are fixed when it is made (so FromEnd means "after
// NewWatch returned", with no race), from the partitions that exist then.
type Watch struct {
	cfg   Config
	cl    *kgo.Client
	codec *AvroCodec
	link  *link
	max   int
	from  map[string]map[int32]int64
}

// NewWatch looks up the starting offsets of every partition of the topics
// (an *Error if one does not exist) and starts reading there.
func NewWatch(ctx context.Context, cfg Config, opts WatchOptions) (*Watch, error) {
	if len(opts.Topics) == 0 {
		return nil, errors.New("kafka: watch: no topics")
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 500
	}
	admin, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	cfg = admin.cfg
	end, err := admin.EndOffsets(ctx, opts.Topics...)
	if err != nil {
		return nil, err
	}
	start, err := admin.StartOffsets(ctx, opts.Topics...)
	if err != nil {
		return nil, err
	}
	from := map[string]map[int32]int64{}
	parts := map[string]map[int32]kgo.Offset{}
	for t, ps := range end {
		from[t] = map[int32]int64{}
		parts[t] = map[int32]kgo.Offset{}
		for p, e := range ps {
			at := e
			switch {
			case opts.Last > 0:
				at = max(start[t][p], e-opts.Last)
			case opts.From == FromStart:
				at = start[t][p]
			}
			if o, ok := opts.At[t][p]; ok {
				at = min(max(o, start[t][p]), e)
			}
			from[t][p] = at
			parts[t][p] = kgo.NewOffset().At(at)
		}
	}
	base, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	l := newLink()
	base = append(base, kgo.ConsumePartitions(parts), kgo.WithHooks(l))
	if opts.KeepControl {
		base = append(base, kgo.KeepControlRecords())
	}
	codec, err := NewAvroCodec(cfg.Registry)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &Watch{cfg: cfg, cl: cl, codec: codec, link: l, max: opts.MaxBatch, from: from}, nil
}

// StartOffsets is where the watch started on each partition.
func (w *Watch) StartOffsets() map[string]map[int32]int64 { return w.from }

// Poll waits for the next records; ctx's error when ctx ends, ErrClosed
// after Close. A poll that brought no records returns the partitions'
// errors, or an unreachable broker's (Fatal tells those that retrying
// cannot fix); once every broker answers again it returns no records and
// no error.
func (w *Watch) Poll(ctx context.Context) ([]*Record, error) {
	fetches := w.link.poll(ctx, w.cl, w.max)
	if fetches.IsClientClosed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []*Record
	fetches.EachRecord(func(kr *kgo.Record) {
		r := fromKgo(kr)
		if !r.Control {
			w.codec.decodeValue(ctx, r) // Avro shown as its JSON; DecodeErr says why not
		}
		out = append(out, r)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	fetches.EachError(func(t string, p int32, err error) {
		// A context error is the poll cut short by the link, not a failure.
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", t, p, w.cfg.explain(joinBrokers(w.cfg), err)))
		}
	})
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("kafka: watch: %w", errors.Join(errs...))
	}
	if len(out) == 0 {
		if addr, _, err := w.link.failing(); err != nil {
			return nil, fmt.Errorf("kafka: watch: %w", w.cfg.explain(addr, err))
		}
	}
	return out, nil
}

// Close closes the connection.
func (w *Watch) Close() { w.cl.Close() }
