package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recsAt builds records of partition p at the given millisecond timestamps,
// with offsets from off on.
func recsAt(topic string, p int32, off int64, ms ...int) []*kgo.Record {
	out := make([]*kgo.Record, len(ms))
	for i, m := range ms {
		out[i] = &kgo.Record{Topic: topic, Partition: p, Offset: off + int64(i), Timestamp: time.UnixMilli(int64(m))}
	}
	return out
}

func names(rs []*kgo.Record) string {
	s := ""
	for _, r := range rs {
		s += fmt.Sprintf("%s%d@%d ", r.Topic, r.Partition, r.Offset)
	}
	return s
}

func TestByProduceTime(t *testing.T) {
	var in []*kgo.Record
	in = append(in, recsAt("a", 0, 10, 1, 4, 7)...)
	in = append(in, recsAt("a", 1, 20, 2, 5, 3)...) // a partition's clock going back stays in offset order
	in = append(in, recsAt("b", 0, 30, 3, 6)...)    // another topic's partition 0 is a run of its own
	in = append(in, recsAt("a", 0, 13, 8)...)       // a second fetch of a0: after its first
	got := names(byProduceTime(in))
	want := "a0@10 a1@20 b0@30 a0@11 a1@21 a1@22 b0@31 a0@12 a0@13 "
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	one := recsAt("a", 2, 0, 5, 1, 3)
	if got := names(byProduceTime(one)); got != "a2@0 a2@1 a2@2 " {
		t.Errorf("one partition reordered: %s", got)
	}
	if got := byProduceTime(nil); len(got) != 0 {
		t.Errorf("nil: %v", got)
	}
}

// A backlog over several partitions comes out of each Poll in the order it
// was produced, not one partition's records after another's.
func TestPollInterleavesPartitions(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 3, cfg.Topics.Raw)
	produceN(t, admin, 3000)
	c, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mixed := false
	for n := 0; n < 3000; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		parts := map[int32]bool{}
		for i, r := range recs {
			parts[r.Partition] = true
			if i > 0 && r.Timestamp.Before(recs[i-1].Timestamp) {
				t.Fatalf("poll of %d records: %s[%d]@%d (%s) after one produced later (%s)", len(recs), r.Topic, r.Partition, r.Offset,
					r.Timestamp.Format(time.StampMilli), recs[i-1].Timestamp.Format(time.StampMilli))
			}
		}
		mixed = mixed || len(parts) > 1
		n += len(recs)
		c.Done(recs...)
	}
	if !mixed {
		t.Error("no poll brought records of more than one partition: nothing was interleaved")
	}
}
