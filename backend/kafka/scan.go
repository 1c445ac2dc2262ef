package kafka

import (
	"context"
	"fmt"
)

// Scan calls fn for every record of topic stored when Scan starts, from the
// first offset still stored to the end offsets of that moment, without
// joining a group or committing: what verify reads of a notification topic.
func Scan(ctx context.Context, cfg Config, topic string, fn func(*Record) error) error {
	w, err := NewWatch(ctx, cfg, WatchOptions{Topics: []string{topic}, From: FromStart, KeepControl: true})
	if err != nil {
		return err
	}
	defer w.Close()
	admin, err := New(cfg)
	if err != nil {
		return err
	}
	end, err := admin.EndOffsets(ctx, topic)
	admin.Close()
	if err != nil {
		return err
	}
	left := map[int32]int64{} // partition → records still to read
	for p, e := range end[topic] {
		if n := e - w.StartOffsets()[topic][p]; n > 0 {
			left[p] = e
		}
	}
	for len(left) > 0 {
		recs, err := w.Poll(ctx)
		if err != nil {
			return fmt.Errorf("reading %s: %w", topic, err)
		}
		for _, r := range recs {
			e, ok := left[r.Partition]
			if !ok || r.Offset >= e {
				continue
			}
			if !r.Control {
				if err := fn(r); err != nil {
					return err
				}
			}
			if r.Offset+1 >= e {
				delete(left, r.Partition)
			}
		}
	}
	return nil
}
