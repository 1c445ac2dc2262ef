package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
