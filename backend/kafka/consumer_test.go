package kafka

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// produceN produces n raw records keyed k0..k(n-1), value v<i>.
func produceN(t *testing.T, c *Client, n int) []Produced {
	t.Helper()
	recs := make([]RawRecord, n)
	for i := range recs {
		recs[i] = RawRecord{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := c.ProduceRaw(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != n {
		t.Fatalf("ProduceRaw: %d results for %d records", len(out), n)
	}
	return out
}

type pos struct {
	p int32
	o int64
}

// pollUntil polls c until it has read want records (or fails the test).
func pollUntil(t *testing.T, c *Consumer, want int) []*Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []*Record
	for len(got) < want {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d records: %v", len(got), want, err)
		}
		got = append(got, recs...)
	}
	return got
}

// finishPrefix marks finished, per partition, the records before the
// middle one, and one record after it; it returns the positions that must
// not be read again (the finished prefix).
func finishPrefix(c *Consumer, recs []*Record) map[pos]bool {
	byPart := map[int32][]*Record{}
	for _, r := range recs {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	committed := map[pos]bool{}
	for _, rs := range byPart {
		mid := len(rs) / 2
		for _, r := range rs[:mid] {
			committed[pos{r.Partition, r.Offset}] = true
			c.Done(r)
		}
		if mid+1 < len(rs) {
			c.Done(rs[mid+1]) // finished, but after an unfinished one: not committed
		}
	}
	return committed
}

func TestConsumerAtLeastOnce(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 3, cfg.Topics.Raw)
	produced := produceN(t, admin, 30)

	// First member: reads everything, finishes a prefix of each partition.
	a, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := pollUntil(t, a, len(produced))
	committed := finishPrefix(a, got)
	if n := a.Pending(); n != len(produced)-len(committed)-3 {
		t.Errorf("Pending %d, want %d", n, len(produced)-len(committed)-3)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lag, err := admin.GroupLag(ctx, cfg.Group)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Total != int64(len(produced)-len(committed)) {
		t.Errorf("group lag %d, want %d (%+v)", lag.Total, len(produced)-len(committed), lag)
	}

	// Second member, same group: exactly the unfinished ones again. It
	// finishes nothing and closes.
	b, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again := pollUntil(t, b, len(produced)-len(committed))
	checkRedelivered(t, again, produced, committed)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// Third member: still the same ones (nothing was finished); it
	// finishes all, so the lag drops to 0.
	c, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	third := pollUntil(t, c, len(produced)-len(committed))
	checkRedelivered(t, third, produced, committed)
	c.Done(third...)
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	lag, err = admin.GroupLag(ctx, cfg.Group)
	if err != nil || lag.Total != 0 {
		t.Errorf("group lag after finishing all: %+v, %v", lag, err)
	}
	ends, err := admin.EndOffsets(ctx, cfg.Topics.Raw)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for p, e := range ends[cfg.Topics.Raw] {
		total += e
		if l := lag.Partitions[cfg.Topics.Raw][p]; l.Committed != e {
			t.Errorf("partition %d: committed %d, end %d", p, l.Committed, e)
		}
	}
	if total != int64(len(produced)) {
		t.Errorf("end offsets sum to %d, want %d", total, len(produced))
	}
}

// checkRedelivered: got is every produced record not in committed, once.
func checkRedelivered(t *testing.T, got []*Record, produced []Produced, committed map[pos]bool) {
	t.Helper()
	seen := map[pos]int{}
	for _, r := range got {
		p := pos{r.Partition, r.Offset}
		if committed[p] {
			t.Errorf("%d@%d was finished and committed, but read again", r.Partition, r.Offset)
		}
		seen[p]++
	}
	for _, pr := range produced {
		p := pos{pr.Partition, pr.Offset}
		if !committed[p] && seen[p] != 1 {
			t.Errorf("unfinished %d@%d read %d times, want once", p.p, p.o, seen[p])
		}
	}
}

// TestConsumerKilled kills (SIGKILL) a member in another process after it
// finished and committed a prefix of each partition: the next member reads
// every record from there on, none before.
func TestConsumerKilled(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 3, cfg.Topics.Raw)
	produced := produceN(t, admin, 30)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestConsumerChild$", "-test.v")
	cfgJSON, _ := json.Marshal(map[string]any{"brokers": cfg.Brokers, "group": cfg.Group, "raw": cfg.Topics.Raw, "n": len(produced)})
	cmd.Env = append(os.Environ(), "ENGRAM_KAFKA_TEST_CHILD="+string(cfgJSON))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	committed := map[pos]bool{}
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "committed "); ok {
			var part int32
			var off int64
			if _, err := fmt.Sscanf(p, "%d %d", &part, &off); err != nil {
				t.Fatalf("child said %q: %v", line, err)
			}
			committed[pos{part, off}] = true
		}
		if line == "ready" {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatalf("the child consumer ended before it was ready")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(committed) == 0 || len(committed) >= len(produced) {
		t.Fatalf("child committed %d of %d", len(committed), len(produced))
	}

	// The killed member never left: the new one gets its partitions once the
	// broker drops it (session timeout 6 s).
	b, err := NewConsumer(cfg, ConsumerOptions{SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := pollUntil(t, b, len(produced)-len(committed))
	checkRedelivered(t, got, produced, committed)
}

// TestConsumerChild is the member TestConsumerKilled kills; it does nothing
// in a normal run.
func TestConsumerChild(t *testing.T) {
	spec := os.Getenv("ENGRAM_KAFKA_TEST_CHILD")
	if spec == "" {
		t.Skip("run by TestConsumerKilled only")
	}
	var s struct {
		Brokers []string
		Group   string
		Raw     string
		N       int
	}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Brokers: s.Brokers, Group: s.Group, Topics: Topics{Raw: s.Raw}}
	c, err := NewConsumer(cfg, ConsumerOptions{SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := pollUntil(t, c, s.N)
	committed := finishPrefix(c, got)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for p := range committed {
		fmt.Printf("committed %d %d\n", p.p, p.o)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute) // killed here
}

func TestReject(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 1, cfg.Topics.Raw, cfg.Topics.Rejected, cfg.Topics.Audit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ProduceRaw(ctx, []RawRecord{{Key: []byte("bad-1"), Value: []byte("not json {"), Headers: []Header{{"traceparent", []byte("00-abc-def-01")}}}}); err != nil {
		t.Fatal(err)
	}
	c, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := pollUntil(t, c, 1)[0]
	if v, _ := rec.Header("traceparent"); v != "00-abc-def-01" || string(rec.Key) != "bad-1" {
		t.Fatalf("read back %s with headers %v", rec.Key, headerMap(rec))
	}
	reasons := []string{"not JSON: invalid character 'o' in literal null", "missing eventId"}
	if err := c.Reject(ctx, rec, reasons); err != nil {
		t.Fatal(err)
	}
	c.Done(rec)

	got := readAll(t, cfg, 2, cfg.Topics.Rejected, cfg.Topics.Audit)
	if len(got[cfg.Topics.Rejected]) != 1 || len(got[cfg.Topics.Audit]) != 1 {
		t.Fatalf("rejected %d, audit %d records; want 1 and 1", len(got[cfg.Topics.Rejected]), len(got[cfg.Topics.Audit]))
	}
	rj := got[cfg.Topics.Rejected][0]
	if string(rj.Key) != "bad-1" || string(rj.Value) != "not json {" {
		t.Errorf("rejected record %s = %q, want the raw record as it was", rj.Key, rj.Value)
	}
	h := headerMap(rj)
	if !slices.Equal(h[HeaderRejectReason], reasons) {
		t.Errorf("reason headers %q, want %q", h[HeaderRejectReason], reasons)
	}
	for k, want := range map[string]string{
		HeaderSourceTopic: cfg.Topics.Raw, headerSourcePartition: "0",
		headerSourceOffset: strconv.FormatInt(rec.Offset, 10), "traceparent": "00-abc-def-01",
	} {
		if len(h[k]) != 1 || h[k][0] != want {
			t.Errorf("header %s = %q, want %q", k, h[k], want)
		}
	}
	if at, err := time.Parse(time.RFC3339, firstOr(h[headerRejectedAt])); err != nil || time.Since(at) > time.Minute {
		t.Errorf("header %s = %q", headerRejectedAt, h[headerRejectedAt])
	}
	var a auditRecord
	if err := json.Unmarshal(got[cfg.Topics.Audit][0].Value, &a); err != nil {
		t.Fatal(err)
	}
	var payload string
	if err := json.Unmarshal(a.Payload, &payload); err != nil || payload != "not json {" || a.OriginalTopic != cfg.Topics.Rejected {
		t.Errorf("audit of the rejection: %+v (payload %s)", a, a.Payload)
	}
}

func firstOr(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func TestTwoConsumersSharePartitions(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 6, cfg.Topics.Raw)
	var members [2]*Consumer
	for i := range members {
		c, err := NewConsumer(cfg, ConsumerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		members[i] = c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	got := [2][]*Record{}
	var wg sync.WaitGroup
	for i, c := range members {
		wg.Go(func() {
			_ = c.Run(ctx, func(_ context.Context, batch []*Record) error {
				mu.Lock()
				got[i] = append(got[i], batch...)
				mu.Unlock()
				c.Done(batch...)
				return nil
			})
		})
	}
	// Wait until the group is balanced: both own partitions, all 6 owned.
	deadline := time.Now().Add(30 * time.Second)
	var owned [2][]int32
	for {
		for i, c := range members {
			owned[i] = c.Assigned()[cfg.Topics.Raw]
		}
		all := slices.Sorted(slices.Values(append(slices.Clone(owned[0]), owned[1]...)))
		if len(owned[0]) > 0 && len(owned[1]) > 0 && slices.Equal(all, []int32{0, 1, 2, 3, 4, 5}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group not balanced after 30s: %v / %v", owned[0], owned[1])
		}
		time.Sleep(100 * time.Millisecond)
	}
	produced := produceN(t, admin, 60)
	parts := map[int32]bool{}
	for _, p := range produced {
		parts[p.Partition] = true
	}
	if len(parts) != 6 {
		t.Fatalf("60 keys landed on %d partitions, want 6", len(parts))
	}
	for {
		mu.Lock()
		n := len(got[0]) + len(got[1])
		mu.Unlock()
		if n >= len(produced) {
			break
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("read %d of %d records", n, len(produced))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	for i := range members {
		if len(got[i]) == 0 {
			t.Errorf("member %d read nothing", i)
		}
		for _, r := range got[i] {
			if !slices.Contains(owned[i], r.Partition) {
				t.Errorf("member %d read partition %d, which member %d owns (%v / %v)", i, r.Partition, 1-i, owned[0], owned[1])
			}
		}
	}
	if len(got[0])+len(got[1]) != len(produced) {
		t.Errorf("read %d+%d records, want %d", len(got[0]), len(got[1]), len(produced))
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 2, cfg.Topics.Raw)
	produceN(t, admin, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fromEnd, err := NewWatch(ctx, cfg, WatchOptions{Topics: []string{cfg.Topics.Raw}})
	if err != nil {
		t.Fatal(err)
	}
	defer fromEnd.Close()
	last, err := NewWatch(ctx, cfg, WatchOptions{Topics: []string{cfg.Topics.Raw}, Last: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	newer, err := admin.ProduceRaw(ctx, []RawRecord{{Key: []byte("new"), Value: []byte(`{"new":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := fromEnd.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || string(recs[0].Key) != "new" || recs[0].Offset != newer[0].Offset {
		t.Errorf("watch from the end read %d records (first %v), want only the new one", len(recs), recs)
	}
	// Last 2 of each of the 2 partitions, plus the new one.
	var tail []*Record
	for len(tail) < 5 {
		rs, err := last.Poll(ctx)
		if err != nil {
			t.Fatalf("tail: %d records, then %v", len(tail), err)
		}
		tail = append(tail, rs...)
	}
	starts := last.StartOffsets()[cfg.Topics.Raw]
	for _, r := range tail {
		if r.Offset < starts[r.Partition] {
			t.Errorf("tail read %d@%d, before its start %d", r.Partition, r.Offset, starts[r.Partition])
		}
	}

	// No group was joined or committed by either watch.
	groups, err := admin.adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, "engram-test-testwatch-") {
			t.Errorf("a watch made group %s", g)
		}
	}

	if _, err := NewWatch(ctx, cfg, WatchOptions{Topics: []string{cfg.Topics.Raw + "-missing"}}); !IsProblem(err, ProblemMissingTopic) {
		t.Errorf("watch of a missing topic: %v", err)
	}
}

// Records held in hand stop being a member's once their partition moves to
// another member (the worker then drops them instead of ingesting them a
// second time), and once they are finished.
func TestOwnsAfterRevoke(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	admin := setup(t, cfg, 6, cfg.Topics.Raw)
	produceN(t, admin, 600)
	a, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got := pollUntil(t, a, 600)
	for _, r := range got {
		if !a.Owns(r) {
			t.Fatalf("%s[%d]@%d: not owned right after its poll", r.Topic, r.Partition, r.Offset)
		}
	}
	a.Done(got[0])
	if a.Owns(got[0]) {
		t.Errorf("a finished record is still owned")
	}
	b, err := NewConsumer(cfg, ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range []*Consumer{a, b} {
		wg.Go(func() {
			for ctx.Err() == nil {
				recs, _ := c.Poll(ctx)
				c.Done(recs...)
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(a.Assigned()[cfg.Topics.Raw]) == 6 || len(b.Assigned()[cfg.Topics.Raw]) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no rebalance after 30s: %v / %v", a.Assigned(), b.Assigned())
		}
		time.Sleep(50 * time.Millisecond)
	}
	kept := a.Assigned()[cfg.Topics.Raw]
	moved := 0
	for _, r := range got[1:] {
		if want := slices.Contains(kept, r.Partition); a.Owns(r) != want {
			t.Errorf("%s[%d]@%d: Owns %v, want %v (a keeps %v)", r.Topic, r.Partition, r.Offset, !want, want, kept)
		} else if !want {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no record held in hand was of a partition that moved (a keeps %v)", kept)
	}
	cancel()
	wg.Wait()
}
