package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestScanFrom reads only what was produced after EndOffsets, up to the
// end of the moment it starts, and returns where the next read begins.
func TestScanFrom(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 2, cfg.Topics.Raw)
	produceN(t, admin, 6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mark, err := EndOffsets(ctx, cfg, cfg.Topics.Raw)
	if err != nil || len(mark) != 2 {
		t.Fatalf("EndOffsets: %v, %v", mark, err)
	}
	var recs []RawRecord
	for i := range 4 {
		recs = append(recs, RawRecord{Key: []byte(fmt.Sprintf("after-%d", i)), Value: []byte(`{}`)})
	}
	if _, err := admin.ProduceRaw(ctx, recs); err != nil {
		t.Fatal(err)
	}
	var got []string
	end, err := ScanFrom(ctx, cfg, cfg.Topics.Raw, mark, func(r *Record) error {
		got = append(got, string(r.Key))
		return nil
	})
	if err != nil || len(got) != 4 {
		t.Fatalf("ScanFrom after the mark: %v, %v", got, err)
	}
	for _, k := range got {
		if len(k) < 6 || k[:6] != "after-" {
			t.Errorf("read %q, produced before the mark", k)
		}
	}
	if end[0]+end[1] != mark[0]+mark[1]+4 {
		t.Errorf("end %v, mark %v: want 4 records further", end, mark)
	}
	n := 0
	again, err := ScanFrom(ctx, cfg, cfg.Topics.Raw, end, func(*Record) error { n++; return nil })
	if err != nil || n != 0 || again[0] != end[0] || again[1] != end[1] {
		t.Errorf("ScanFrom at the end: %d records, %v, %v", n, again, err)
	}
}

// TestScanEndsAfterTransaction: a topic whose last offset is a
// transaction's commit marker (another producer of the deployment may be
// transactional) is read to its end: Scan used to wait for a record at
// that offset, which never comes.
func TestScanEndsAfterTransaction(t *testing.T) {
	cfg := testConfig(t)
	topic := cfg.Topics.Indexed
	setup(t, cfg, 1, topic)
	opts, err := cfg.clientOpts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.TransactionalID(topic+"-tx"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(`{}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	scanCtx, cancelScan := context.WithTimeout(ctx, 20*time.Second)
	defer cancelScan()
	var keys []string
	err = Scan(scanCtx, cfg, topic, func(r *Record) error {
		keys = append(keys, string(r.Key))
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v (read %v)", err, keys)
	}
	if fmt.Sprint(keys) != "[0 1 2 3 4]" {
		t.Fatalf("read %v, want the 5 records and no marker", keys)
	}
}
