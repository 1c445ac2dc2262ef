package systest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"engram/backend/kafka"
	"engram/ingest/gen"
)

// TestSoak: faults together, under load, for a bounded time. Two
// `engram worker`s in one consumer group, fed by `engram
// produce` (and, one batch in four, by `engram ingest` straight into the
// stores), write to S3 (a private versitygw) and OpenSearch with Kafka
// notifications (a private broker), while the real inspector follows the
// index in tmux and `engram tail` prints what is indexed. A driver
// injects faults at random, two at a time at most: kill -9 of a worker
// (restarted), an S3 outage (the server killed and started again), an
// OpenSearch outage (its path cut), a broker restart, a full disk under
// the workers' data directories (a tmpfs filled to the last block) and
// slow storage under the archive (every chunk on the S3 path delayed).
// Then everything drains, and verify must agree on the three layers with
// every event produced archived once, indexed once and announced.
//
// The short form (CI, not under -short) injects faults for 30 s after 8 s
// of quiet (70 to 140 s in all with the broker's start and the drain);
// ENGRAM_SOAK=10m runs them for ten minutes. ENGRAM_SOAK_REPORT=FILE
// appends the figures as a Markdown table row to FILE.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the fault-injection soak (a private Kafka broker, two workers, a minute and more)")
	}
	soak := 30 * time.Second
	if v := os.Getenv("ENGRAM_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Second {
			t.Fatalf("ENGRAM_SOAK=%q: want a duration of 10s or more, like 10m", v)
		}
		soak = d
	}
	long := soak > 2*time.Minute
	stores := serviceArgs(t) // skips without the services
	osURL := os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")
	if os.Getenv("ENGRAM_TEST_KAFKA_BROKERS") == "" {
		kafkaBrokers(t) // skips, or fails under ENGRAM_REQUIRE_SERVICES
	}
	t0 := time.Now()

	// The broker starts (14 s here) while the binary builds.
	type kres struct {
		k   *privateKafka
		err error
	}
	kch := make(chan kres, 1)
	go func() { k, err := startPrivateKafka(t); kch <- kres{k, err} }()
	bin := engramBinary(t)
	s3 := startVersitygw(t)
	s3p := newFaultProxy(t, s3.addr)
	osp := newFaultProxy(t, strings.TrimPrefix(osURL, "http://"))
	stores = removeFlag(stores, "--data")
	stores = replaceFlag(stores, "--s3-endpoint", "http://"+s3p.addr)
	stores = replaceFlag(stores, "--opensearch-url", "http://"+osp.addr)
	// Outages are waited out, never given up on; a request stuck on a
	// cut path is abandoned after 30 s.
	stores = replaceFlag(stores, "--opensearch-timeout", "30s")
	index := flagValueOf(stores, "--opensearch-index")

	// The workers' data directories on a small tmpfs the driver can fill.
	disk := filepath.Join(t.TempDir(), "disk")
	if err := os.MkdirAll(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	kinds := []string{"kill9", "s3-outage", "opensearch-outage", "broker-restart", "disk-full", "slow-disk"}
	if v := os.Getenv("ENGRAM_SOAK_KINDS"); v != "" { // a subset, to look at one kind
		kinds = strings.Split(v, ",")
	}
	if err := mountTmpfs(t, disk, "64m"); err != nil {
		t.Logf("soak: no disk-full faults: %v", err)
		kinds = removeString(kinds, "disk-full")
	}

	kr := <-kch
	if kr.err != nil {
		t.Fatalf("private Kafka broker: %v", kr.err)
	}
	broker := kr.k
	t.Logf("soak: broker, versitygw, proxies and binary ready in %s", time.Since(t0).Round(100*time.Millisecond))
	prefix := fmt.Sprintf("engram-soak-%08x", rand.Uint32())
	kcfg := kafka.Config{Brokers: []string{broker.addr}, Group: prefix + "-workers", Topics: kafka.Topics{
		Raw: prefix + ".raw", Enriched: prefix + ".enriched", Indexed: prefix + ".indexed", Audit: prefix + ".audit", Rejected: prefix + ".rejected",
	}}.WithDefaults()
	kargs := []string{"--kafka-brokers", broker.addr, "--kafka-group", kcfg.Group,
		"--kafka-topic-raw", kcfg.Topics.Raw, "--kafka-topic-enriched", kcfg.Topics.Enriched, "--kafka-topic-indexed", kcfg.Topics.Indexed,
		"--kafka-topic-audit", kcfg.Topics.Audit, "--kafka-topic-rejected", kcfg.Topics.Rejected}
	runEngram(t, bin, append([]string{"kafka", "create-topics", "--partitions", "4"}, kargs...)...)
	args := append(append([]string{}, stores...), kargs...)

	workers := make([]*soakWorker, 2)
	for i := range workers {
		dir := filepath.Join(disk, fmt.Sprintf("worker%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		workers[i] = newSoakWorker(t, bin, dir, args)
		if err := workers[i].start(); err != nil {
			t.Fatal(err)
		}
		// One at a time: the first makes the bucket and the index.
		waitUntil(t, 2*time.Minute, fmt.Sprintf("worker %d to serve /health", i), workers[i].healthy)
	}

	// The followers: the inspector in tmux (through the same fault
	// proxies) and engram tail.
	ui, err := startTmuxInspector(t, bin, args)
	if err != nil {
		t.Fatalf("the inspector in tmux: %v", err)
	}
	tf := startTailFollower(bin, args)
	defer tf.stop()

	fd := &soakFeeder{bin: bin, args: args, kargs: kargs, dir: t.TempDir(), ingestData: t.TempDir(),
		prefix: prefix, batch: 400, backlog: 3000, osURL: osURL, index: index, done: make(chan struct{})}
	fctx, stopFeed := context.WithCancel(context.Background())
	defer stopFeed()
	go fd.run(fctx)

	var mask atomic.Int64 // bit i: a fault of kinds[i] is on
	sm := &soakSampler{osURL: osURL, index: index, mask: &mask, ui: ui, fd: fd}
	sctx, stopSample := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() { sm.run(sctx); close(sampled) }()
	defer func() { stopSample(); <-sampled }()

	// Quiet first: the rate without faults.
	warm := 8 * time.Second
	if long {
		warm = 30 * time.Second
	}
	time.Sleep(warm)
	t.Logf("soak: %s quiet, %d indexed; faults for %s, kinds %v", warm, osCount(osURL, index), soak, kinds)

	dr := &soakDriver{t: t, kinds: kinds, mask: &mask, workers: workers, broker: broker, s3: s3, s3p: s3p, osp: osp, disk: disk, long: long}
	dr.run(time.Now().Add(soak))
	faultsEnd := time.Now()
	t.Logf("soak: faults over; %d injected, %d indexed, %d produced", len(dr.faults), osCount(osURL, index), fd.produced.Load())

	// Drain: the feeder finishes its batch, the group's lag reaches 0, the
	// index holds every event.
	stopFeed()
	<-fd.done
	total := fd.produced.Load()
	drainLimit := 4 * time.Minute
	if long {
		drainLimit = 10 * time.Minute
	}
	admin, err := kafka.New(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// Gives up early when nothing moves for a minute with no lag: events
	// the workers finished without indexing (rejected) never come.
	lastN, lastMove := int64(-1), time.Now()
	drained := pollUntilOK(drainLimit, 500*time.Millisecond, func() bool {
		dr.supervise()
		n := osCount(osURL, index)
		if n != lastN {
			lastN, lastMove = n, time.Now()
		}
		if n < total && time.Since(lastMove) < time.Minute {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lag, err := admin.GroupLag(ctx, kcfg.Group)
		return err == nil && lag.Total == 0
	}) && osCount(osURL, index) >= total
	drainTime := time.Since(faultsEnd)
	if !drained {
		for i, w := range workers {
			t.Logf("worker %d:\n%s", i, tail([]byte(w.log.String())))
		}
		t.Errorf("not drained after %s: %d of %d indexed", drainLimit, osCount(osURL, index), total)
	}
	t.Logf("soak: drained %d events in %s after the faults", total, drainTime.Round(100*time.Millisecond))

	// The followers saw it all: the inspector still follows, engram tail
	// printed every event.
	uiOK := pollUntilOK(30*time.Second, time.Second, func() bool {
		s := ui.screen()
		return strings.Contains(s, "following") && !strings.Contains(s, "stalled")
	})
	if !uiOK {
		t.Errorf("the inspector does not show it follows after the drain:\n%s", ui.screen())
	}
	tailOK := pollUntilOK(30*time.Second, 500*time.Millisecond, func() bool { return int64(tf.count()) >= total })
	tf.stop()

	for i, w := range workers {
		if !w.running() {
			continue
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(40 * time.Second):
			t.Errorf("worker %d did not stop within 40 s of SIGTERM", i)
		}
		if !strings.Contains(w.log.String(), "engram worker: stopped:") {
			t.Errorf("worker %d did not stop cleanly:\n%s", i, tail([]byte(w.log.String())))
		}
	}

	// Three layers: verify on a fresh data directory (no journal, no outbox).
	vout, verr := exec.Command(bin, append([]string{"verify", "--json", "--data", t.TempDir()}, args...)...).Output()
	var rep struct {
		Objects       int64            `json:"archivedObjects"`
		Docs          int64            `json:"indexDocuments"`
		Agreeing      int64            `json:"agreeing"`
		InFlight      int64            `json:"inFlight"`
		Counts        map[string]int64 `json:"differences"`
		Notifications *struct {
			Indexed, Announced, Unannounced, Messages int64
		} `json:"notifications"`
	}
	if err := json.Unmarshal(vout, &rep); err != nil {
		t.Fatalf("verify: %v %v\n%s", verr, err, tail(vout))
	}
	if verr != nil || rep.Objects != total || rep.Docs != total || rep.Agreeing != total || rep.Notifications == nil ||
		rep.Notifications.Announced != total || len(rep.Counts) != 0 {
		t.Errorf("verify: %v: want %d archived, indexed, agreeing and announced:\n%s", verr, total, tail(vout))
	}

	// Notifications: every event on both topics, duplicates counted.
	dups := map[string]int64{}
	missing := map[string]int64{}
	ids := fd.ids()
	var rejected int64
	for _, topic := range []string{kcfg.Topics.Raw, kcfg.Topics.Enriched, kcfg.Topics.Indexed, kcfg.Topics.Rejected} {
		seen := map[string]int64{}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := kafka.Scan(ctx, kcfg, topic, func(r *kafka.Record) error { seen[string(r.Key)]++; return nil })
		cancel()
		if err != nil {
			t.Errorf("scan %s: %v", topic, err)
		}
		for _, n := range seen {
			dups[topic] += n - 1
		}
		for _, id := range ids {
			if seen[id] == 0 {
				missing[topic]++
			}
		}
		if topic == kcfg.Topics.Rejected {
			// Every event is valid: one here was given up on (failed for
			// good) by a worker, its offset committed.
			if len(seen) > 0 {
				t.Errorf("%d valid events are on the rejected topic %s", len(seen), topic)
			}
			rejected = int64(len(seen))
			continue
		}
		if topic != kcfg.Topics.Raw && missing[topic] > 0 {
			t.Errorf("%d events produced are not on %s", missing[topic], topic)
		}
	}
	lost := total - rep.Docs
	if lost < 0 {
		lost = 0
	}

	res := soakResult{
		soak: soak, warm: warm, total: total, faults: dr.faults, kinds: kinds, samples: sm.snapshot(), drain: drainTime,
		lost: lost, dupIndexed: max(0, rep.Docs-total), dupNotices: dups[kcfg.Topics.Enriched] + dups[kcfg.Topics.Indexed],
		dupRaw: dups[kcfg.Topics.Raw], rejected: rejected, selfExits: dr.selfExits, feedRetries: fd.retries.Load(),
		uiStalled: sm.stalled, uiShots: sm.shots, tailSeen: int64(tf.count()), tailExits: tf.exits,
	}
	res.log(t)
	if !tailOK {
		t.Logf("soak: engram tail printed %d of %d events (it exits on a failed poll and, restarted, starts from the end: the events indexed meanwhile are not printed)", tf.count(), total)
	}
	if f := os.Getenv("ENGRAM_SOAK_REPORT"); f != "" && !t.Failed() {
		if err := res.appendRow(f); err != nil {
			t.Error(err)
		}
	}
	if lost != 0 || res.dupIndexed != 0 {
		t.Errorf("lost %d, duplicates indexed %d: want 0 and 0", lost, res.dupIndexed)
	}
	if t.Failed() || os.Getenv("ENGRAM_SOAK_LOGS") != "" {
		dir := os.Getenv("ENGRAM_SOAK_LOGS")
		if dir == "" {
			dir = os.TempDir()
		}
		for i, w := range workers {
			p := filepath.Join(dir, fmt.Sprintf("engram-soak-%s-worker%d.log", prefix, i))
			if err := os.WriteFile(p, []byte(w.log.String()), 0o644); err == nil {
				t.Logf("worker %d log: %s", i, p)
			}
		}
	}
}

func removeFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == name && i+1 < len(args) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func removeString(list []string, s string) []string {
	var out []string
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

// pollUntilOK is pollUntil that reports instead of failing.
func pollUntilOK(limit, every time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// soakFeeder keeps the workers busy: while fewer than backlog events wait
// to be indexed it writes a batch and hands it to `engram produce` (three
// batches in four) or `engram ingest` (the fourth), retrying a batch until
// it is accepted whole (a retry puts some events on the raw topic twice:
// the workers must count them as duplicates).
type soakFeeder struct {
	bin                          string
	args, kargs                  []string
	dir, ingestData, prefix      string
	batch                        int
	backlog                      int64
	osURL, index                 string
	produced, retries, ingestRun atomic.Int64
	mu                           sync.Mutex
	batches                      []string // the batch files accepted
	done                         chan struct{}
}

func (f *soakFeeder) run(ctx context.Context) {
	defer close(f.done)
	for i := 0; ctx.Err() == nil; i++ {
		for ctx.Err() == nil {
			if n := osCount(f.osURL, f.index); n >= 0 && f.produced.Load()-n < f.backlog {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ctx.Err() != nil {
			return
		}
		path := filepath.Join(f.dir, fmt.Sprintf("batch%05d.jsonl", i))
		if err := writeBatch(path, f.batch, fmt.Sprintf("%s-b%05d-", f.prefix, i)); err != nil {
			return
		}
		viaIngest := i%4 == 3
		// Bounded: a batch that cannot be accepted in 60 tries (minutes of
		// outage) is a failure the drain reports (produced falls short).
		for attempt := range 60 {
			var cmd *exec.Cmd
			cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			if viaIngest {
				cmd = exec.CommandContext(cctx, f.bin, append(append([]string{"ingest", "--data", f.ingestData}, f.args...), path)...)
			} else {
				cmd = exec.CommandContext(cctx, f.bin, append(append([]string{"produce"}, f.kargs...), path)...)
			}
			out, err := cmd.CombinedOutput()
			cancel()
			if err == nil {
				break
			}
			f.retries.Add(1)
			if attempt == 59 {
				fmt.Fprintf(os.Stderr, "soak feeder: batch %d not accepted: %v\n%s\n", i, err, tail(out))
				return
			}
			time.Sleep(time.Second)
		}
		if viaIngest {
			f.ingestRun.Add(1)
		}
		f.mu.Lock()
		f.batches = append(f.batches, path)
		f.mu.Unlock()
		f.produced.Add(int64(f.batch))
	}
}

// ids are the event ids of every batch accepted.
func (f *soakFeeder) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, p := range f.batches {
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var v struct {
				EventID string `json:"eventId"`
			}
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				ids = append(ids, v.EventID)
			}
		}
		fh.Close()
	}
	return ids
}

func writeBatch(path string, n int, prefix string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(fh)
	g := gen.New(gen.Config{Seed: rand.Uint64(), Prefix: prefix})
	for range n {
		_, _ = w.Write(g.Next()) // a write error comes back from Flush
		_ = w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// soakSample is the index's document count at an instant, with the faults
// on then and what the feeder had had accepted.
type soakSample struct {
	at       time.Time
	count    int64
	mask     int64
	produced int64
}

type soakSampler struct {
	osURL, index string
	mask         *atomic.Int64
	ui           *tmuxInspector
	fd           *soakFeeder
	mu           sync.Mutex
	samples      []soakSample
	shots        int // inspector screens read
	stalled      int // of them, showing a stalled follow
	lastScreen   string
}

func (s *soakSampler) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m := s.mask.Load()
		c := osCount(s.osURL, s.index)
		if c >= 0 {
			s.mu.Lock()
			s.samples = append(s.samples, soakSample{at: time.Now(), count: c, mask: m, produced: s.fd.produced.Load()})
			s.mu.Unlock()
		}
		if i%4 == 0 {
			sc := s.ui.screen()
			s.mu.Lock()
			s.shots++
			if strings.Contains(sc, "stalled") {
				s.stalled++
			}
			s.lastScreen = sc
			s.mu.Unlock()
		}
	}
}

func (s *soakSampler) snapshot() []soakSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]soakSample{}, s.samples...)
}

// soakFault is one fault injected: when it began and when the thing it
// broke was back (the worker restarted, the server answering, the disk
// freed, the delay gone).
type soakFault struct {
	kind       string
	start, end time.Time
	detail     string
}

type soakDriver struct {
	t         *testing.T
	kinds     []string
	mask      *atomic.Int64
	workers   []*soakWorker
	broker    *privateKafka
	s3        *versitygw
	s3p, osp  *faultProxy
	disk      string
	long      bool
	faults    []soakFault
	selfExits []string // workers that exited with no kill -9 (restarted)
	killed    map[int]bool
}

type activeFault struct {
	f     soakFault
	until time.Time
	stop  func() error // undoes the fault (nil: async)
	async chan error   // a broker restart reports here
	bit   int64        // its bit in mask
	kill  int          // the worker killed, kill9 only
}

// run injects faults until deadline, then undoes those still on.
func (d *soakDriver) run(deadline time.Time) {
	d.killed = map[int]bool{}
	var active []*activeFault
	deck := []string{}
	next := time.Now()
	maxDur, maxGap := 6*time.Second, 4*time.Second
	if d.long {
		maxDur, maxGap = 12*time.Second, 8*time.Second
	}
	end := func(a *activeFault, err error) {
		a.f.end = time.Now()
		if err != nil {
			a.f.detail += "; undo: " + err.Error()
			d.t.Errorf("soak: undoing %s: %v", a.f.kind, err)
		}
		d.faults = append(d.faults, a.f)
		d.mask.And(^a.bit)
		if a.f.kind == "kill9" {
			delete(d.killed, a.kill)
		}
		d.t.Logf("soak: %-17s %s → %s (%s) %s", a.f.kind, a.f.start.Format("15:04:05.0"), a.f.end.Format("15:04:05.0"),
			a.f.end.Sub(a.f.start).Round(100*time.Millisecond), a.f.detail)
	}
	finish := func(final bool) {
		keep := active[:0]
		for _, a := range active {
			switch {
			case a.async != nil:
				if final {
					end(a, <-a.async)
					continue
				}
				select {
				case err := <-a.async:
					end(a, err)
					continue
				default:
				}
			case final || time.Now().After(a.until):
				end(a, a.stop())
				continue
			}
			keep = append(keep, a)
		}
		active = keep
	}
	for time.Now().Before(deadline) {
		finish(false)
		d.supervise()
		// A second fault beside one already on a third of the time: most
		// faults end alone, so their recovery can be measured.
		if time.Now().After(next) && (len(active) == 0 || (len(active) == 1 && rand.N(3) == 0)) {
			if len(deck) == 0 {
				deck = append(deck, d.kinds...)
				rand.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
			}
			kind := deck[0]
			on := false
			for _, a := range active {
				on = on || a.f.kind == kind
			}
			if !on {
				deck = deck[1:]
				dur := time.Second + rand.N(maxDur-time.Second)
				if a := d.inject(kind, dur); a != nil {
					active = append(active, a)
				}
			}
			next = time.Now().Add(time.Second + rand.N(maxGap-time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	finish(true)
	d.supervise()
}

func (d *soakDriver) inject(kind string, dur time.Duration) *activeFault {
	bit := int64(0)
	for i, k := range d.kinds {
		if k == kind {
			bit = 1 << i
		}
	}
	a := &activeFault{f: soakFault{kind: kind, start: time.Now()}, until: time.Now().Add(dur), bit: bit}
	switch kind {
	case "kill9":
		i := rand.N(len(d.workers))
		w := d.workers[i]
		if !w.running() {
			return nil
		}
		d.killed[i] = true
		w.kill9()
		a.kill = i
		a.f.detail = fmt.Sprintf("worker %d", i)
		a.stop = w.start
	case "s3-outage":
		d.s3.stop()
		a.stop = func() error { d.s3.start(); return nil }
	case "opensearch-outage":
		d.osp.down()
		a.stop = d.osp.up
	case "broker-restart":
		a.async = make(chan error, 1)
		down := time.Second + rand.N(2*time.Second)
		a.f.detail = fmt.Sprintf("down %s before the start", down.Round(100*time.Millisecond))
		go func() { a.async <- d.broker.restart(down) }()
	case "disk-full":
		release, err := fillDisk(d.disk)
		if err != nil {
			a.f.detail = "fill: " + err.Error()
		}
		var st syscall.Statfs_t
		if syscall.Statfs(d.disk, &st) == nil {
			a.f.detail += fmt.Sprintf("%d bytes free", int64(st.Bavail)*st.Bsize)
		}
		a.stop = func() error { release(); return nil }
	case "slow-disk":
		delay := 20*time.Millisecond + rand.N(100*time.Millisecond)
		d.s3p.delay.Store(int64(delay))
		a.f.detail = fmt.Sprintf("every chunk on the S3 path held %s", delay.Round(time.Millisecond))
		a.stop = func() error { d.s3p.delay.Store(0); return nil }
	}
	d.mask.Or(bit)
	return a
}

// supervise restarts a worker that exited with no kill -9 of the driver
// (as its service manager would), and records it.
func (d *soakDriver) supervise() {
	for i, w := range d.workers {
		if w.running() || d.killed[i] || time.Since(w.started) < 2*time.Second {
			continue
		}
		d.selfExits = append(d.selfExits, fmt.Sprintf("%s worker %d: %s", time.Now().Format("15:04:05.0"), i, lastLines(w.log.String(), 3)))
		d.t.Logf("soak: worker %d exited by itself; restarting it: %s", i, lastLines(w.log.String(), 3))
		if err := w.start(); err != nil {
			d.t.Errorf("restart worker %d: %v", i, err)
		}
	}
}

// soakResult is what the soak measured.
type soakResult struct {
	soak, warm, drain       time.Duration
	total                   int64
	faults                  []soakFault
	kinds                   []string
	samples                 []soakSample
	lost, dupIndexed        int64
	dupNotices, dupRaw      int64
	rejected                int64
	selfExits               []string
	feedRetries             int64
	uiStalled, uiShots      int
	tailSeen                int64
	tailExits               []string
	quietRate, faultRate    float64
	kindRate                map[string]float64
	resume, rateBack        map[string][]time.Duration
	injected                map[string]int
	measuredOf, overlapping map[string]int
}

// analyse works out the rates and recovery times from the samples.
func (r *soakResult) analyse() {
	r.kindRate, r.injected = map[string]float64{}, map[string]int{}
	r.resume, r.rateBack = map[string][]time.Duration{}, map[string][]time.Duration{}
	r.measuredOf, r.overlapping = map[string]int{}, map[string]int{}
	// Rates between consecutive samples, by the faults on at the first;
	// the quiet rate only while the workers had a backlog (else it is the
	// feeder's rate); nothing after the faults (the drain).
	var last time.Time
	for _, f := range r.faults {
		r.injected[f.kind]++
		if f.end.After(last) {
			last = f.end
		}
	}
	type acc struct{ n, dt float64 }
	quiet, faulty := acc{}, acc{}
	byKind := map[string]*acc{}
	s := r.samples
	for i := 1; i < len(s); i++ {
		if s[i].at.After(last) || s[i-1].count == 0 {
			continue
		}
		dn, dt := float64(s[i].count-s[i-1].count), s[i].at.Sub(s[i-1].at).Seconds()
		switch m := s[i-1].mask; m {
		case 0:
			if s[i-1].produced-s[i-1].count > 400 {
				quiet.n, quiet.dt = quiet.n+dn, quiet.dt+dt
			}
		default:
			faulty.n, faulty.dt = faulty.n+dn, faulty.dt+dt
			for b, k := range r.kinds {
				if m == 1<<b {
					if byKind[k] == nil {
						byKind[k] = &acc{}
					}
					byKind[k].n, byKind[k].dt = byKind[k].n+dn, byKind[k].dt+dt
				}
			}
		}
	}
	if quiet.dt > 0 {
		r.quietRate = quiet.n / quiet.dt
	}
	if faulty.dt > 0 {
		r.faultRate = faulty.n / faulty.dt
	}
	for k, a := range byKind {
		if a.dt > 0 {
			r.kindRate[k] = a.n / a.dt
		}
	}
	// Recovery: from the fault's end, the first sample with more
	// documents (resume), and the first 2-s window at half the quiet rate
	// or more; only for faults no other fault overlaps until then.
	for _, f := range r.faults {
		i := sort.Search(len(s), func(i int) bool { return !s[i].at.Before(f.end) })
		if i >= len(s) {
			continue
		}
		// A sample's mask is read before its count: the first ones after
		// the end may still carry the fault's own bit.
		own := int64(0)
		for b, k := range r.kinds {
			if k == f.kind {
				own = 1 << b
			}
		}
		c0 := s[i].count
		overlapped := false
		var resume, back time.Duration
		for j := i; j < len(s); j++ {
			if s[j].mask&^own != 0 {
				overlapped = true
				break
			}
			if resume == 0 && s[j].count > c0 {
				resume = s[j].at.Sub(f.end)
			}
			k := j
			for k < len(s) && s[k].at.Sub(s[j].at) < 2*time.Second {
				k++
			}
			if k < len(s) && r.quietRate > 0 && float64(s[k].count-s[j].count)/s[k].at.Sub(s[j].at).Seconds() >= r.quietRate/2 {
				back = s[j].at.Sub(f.end)
				if resume == 0 {
					resume = back
				}
				break
			}
		}
		if overlapped || resume == 0 {
			r.overlapping[f.kind]++
			continue
		}
		r.measuredOf[f.kind]++
		r.resume[f.kind] = append(r.resume[f.kind], resume)
		if back > 0 || resume > 0 {
			r.rateBack[f.kind] = append(r.rateBack[f.kind], back)
		}
	}
}

func medianMax(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("%.1f / %.1f s", s[len(s)/2].Seconds(), s[len(s)-1].Seconds())
}

func (r *soakResult) log(t *testing.T) {
	r.analyse()
	var b strings.Builder
	fmt.Fprintf(&b, "soak %s (quiet %s first): %d events, drain %s after the faults\n", r.soak, r.warm, r.total, r.drain.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "lost %d, duplicates indexed %d, notifications duplicated %d, on the rejected topic %d (raw-topic duplicates from produce retries %d, feeder retries %d)\n",
		r.lost, r.dupIndexed, r.dupNotices, r.rejected, r.dupRaw, r.feedRetries)
	fmt.Fprintf(&b, "quiet rate %.0f events/s, during faults %.0f events/s (%.2f)\n", r.quietRate, r.faultRate, safeDiv(r.faultRate, r.quietRate))
	fmt.Fprintf(&b, "%-18s %8s %10s %22s %22s %14s\n", "fault", "injected", "measured", "resume (median/max)", "½ rate (median/max)", "rate alone")
	for _, k := range r.kinds {
		alone := "–"
		if v, ok := r.kindRate[k]; ok {
			alone = fmt.Sprintf("%.2f", safeDiv(v, r.quietRate))
		}
		fmt.Fprintf(&b, "%-18s %8d %10d %22s %22s %14s\n", k, r.injected[k], r.measuredOf[k], medianMax(r.resume[k]), medianMax(r.rateBack[k]), alone)
	}
	fmt.Fprintf(&b, "workers exiting by themselves: %d\n", len(r.selfExits))
	for _, e := range r.selfExits {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	fmt.Fprintf(&b, "inspector: %d screens read, %d showing a stalled follow; engram tail: %d of %d events printed, %d exits\n",
		r.uiShots, r.uiStalled, r.tailSeen, r.total, len(r.tailExits))
	for _, e := range r.tailExits {
		fmt.Fprintf(&b, "  tail exit %s\n", e)
	}
	t.Log(b.String())
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// appendRow appends the run as Markdown to file.
func (r *soakResult) appendRow(file string) error {
	fh, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer fh.Close()
	var inj []string
	for _, k := range r.kinds {
		inj = append(inj, fmt.Sprintf("%s %d", k, r.injected[k]))
	}
	fmt.Fprintf(fh, "run %s: soak %s, %d events; faults: %s; lost %d; duplicates indexed %d; notifications duplicated %d; rejected %d; raw duplicates %d; quiet %.0f/s, faults %.0f/s (%.2f); drain %s; worker self-exits %d; inspector stalled %d/%d; tail %d/%d, exits %d\n",
		time.Now().UTC().Format(time.RFC3339), r.soak, r.total, strings.Join(inj, ", "), r.lost, r.dupIndexed, r.dupNotices, r.rejected, r.dupRaw,
		r.quietRate, r.faultRate, safeDiv(r.faultRate, r.quietRate), r.drain.Round(100*time.Millisecond), len(r.selfExits), r.uiStalled, r.uiShots, r.tailSeen, r.total, len(r.tailExits))
	for _, k := range r.kinds {
		alone := "–"
		if v, ok := r.kindRate[k]; ok {
			alone = fmt.Sprintf("%.2f", safeDiv(v, r.quietRate))
		}
		fmt.Fprintf(fh, "| %s | %d | %d | %s | %s | %s |\n", k, r.injected[k], r.measuredOf[k], medianMax(r.resume[k]), medianMax(r.rateBack[k]), alone)
	}
	return nil
}
