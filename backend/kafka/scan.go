package kafka

import (
	"context"
	"fmt"
)

// Scan calls fn for every record of topic stored when Scan starts, from the
// first offset still stored to the end offsets of that moment, without
// joining a group or committing: what verify reads of a notification topic.
func Scan(ctx context.Context, cfg Config, topic string, fn func(*Record) error) error {
	_, err := ScanFrom(ctx, cfg, topic, nil, fn)
	return err
}

// EndOffsets is the end offset of each partition of topic now: what a
// later ScanFrom starts from to read only the records produced after.
func EndOffsets(ctx context.Context, cfg Config, topic string) (map[int32]int64, error) {
	admin, err := New(cfg)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	end, err := admin.EndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	return end[topic], nil
}

// ScanFrom is Scan from the offsets from (a partition it does not name,
// one created since: from its first record still stored) to the end
// offsets of the moment it starts, which it returns: where the next
// ScanFrom begins.
func ScanFrom(ctx context.Context, cfg Config, topic string, from map[int32]int64, fn func(*Record) error) (map[int32]int64, error) {
	w, err := NewWatch(ctx, cfg, WatchOptions{Topics: []string{topic}, From: FromStart, At: map[string]map[int32]int64{topic: from}, KeepControl: true})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	ends, err := EndOffsets(ctx, cfg, topic)
	if err != nil {
		return nil, err
	}
	end := map[string]map[int32]int64{topic: ends}
	left := map[int32]int64{} // partition → records still to read
	for p, e := range end[topic] {
		if n := e - w.StartOffsets()[topic][p]; n > 0 {
			left[p] = e
		}
	}
	for len(left) > 0 {
		recs, err := w.Poll(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", topic, err)
		}
		for _, r := range recs {
			e, ok := left[r.Partition]
			if !ok || r.Offset >= e {
				continue
			}
			if !r.Control {
				if err := fn(r); err != nil {
					return nil, err
				}
			}
			if r.Offset+1 >= e {
				delete(left, r.Partition)
			}
		}
	}
	return ends, nil
}
