package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"engram/backend/kafka"
)

// kafkaBrokers is the real broker .ci/services starts.
func kafkaBrokers(t testing.TB) string {
	t.Helper()
	b := os.Getenv("ENGRAM_TEST_KAFKA_BROKERS")
	if b == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_KAFKA_BROKERS is not set")
		}
		t.Skip("set ENGRAM_TEST_KAFKA_BROKERS (see .ci/services) to run against a real Kafka broker")
	}
	return b
}

// kafkaArgs names topics and a group of the test's own.
func kafkaArgs(t testing.TB, brokers string) ([]string, kafka.Config) {
	p := fmt.Sprintf("engram-test-%08x", rand.Uint32())
	cfg := kafka.Config{Brokers: []string{brokers}, Group: p + "-workers", Topics: kafka.Topics{
		Raw: p + ".raw", Enriched: p + ".enriched", Indexed: p + ".indexed", Audit: p + ".audit", Rejected: p + ".rejected",
	}}.WithDefaults()
	args := []string{"--kafka-brokers", brokers, "--kafka-group", cfg.Group,
		"--kafka-topic-raw", cfg.Topics.Raw, "--kafka-topic-enriched", cfg.Topics.Enriched, "--kafka-topic-indexed", cfg.Topics.Indexed,
		"--kafka-topic-audit", cfg.Topics.Audit, "--kafka-topic-rejected", cfg.Topics.Rejected}
	t.Cleanup(func() {
		if c, err := kafka.New(cfg); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			c.DeleteTopics(ctx, cfg.TopicNames()...)
			c.DeleteGroup(ctx, cfg.Group)
			cancel()
			c.Close()
		}
	})
	return args, cfg
}

func runEngram(t testing.TB, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("engram %s: %v\n%s", strings.Join(args[:1], " "), err, tail(out))
	}
	return string(out)
}

// worker is one `engram worker` process with its own data directory (its
// journal and outbox) over the shared S3 and OpenSearch.
type worker struct {
	cmd  *exec.Cmd
	port string
	log  *strings.Builder
}

func startWorker(t testing.TB, bin, data string, args []string) *worker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	w := &worker{port: port, log: &strings.Builder{}}
	w.cmd = exec.Command(bin, append(append([]string{"worker"}, args...), "--data", data, "--health-port", port,
		"--kafka-session-timeout", "6s", "--status-every", "2s", "--drain", "20s")...)
	w.cmd.Stderr, w.cmd.Stdout = w.log, w.log
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	return w
}

func (w *worker) healthy() bool {
	resp, err := http.Get("http://127.0.0.1:" + w.port + "/health")
	if err == nil {
		resp.Body.Close()
	}
	return err == nil && resp.StatusCode == http.StatusOK
}

func (w *worker) ingested() int64 {
	resp, err := http.Get("http://127.0.0.1:" + w.port + "/health")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var h struct{ Events map[string]int64 }
	_ = json.NewDecoder(resp.Body).Decode(&h)
	return h.Events["ingested"]
}

// Three workers share a 6-partition raw topic; one is killed with -9 mid-way
// and restarted. Every event is archived once, indexed once and announced
// on both topics; the bad messages are on the rejected topic, with reasons.
func TestWorkersKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 20,000-event worker test")
	}
	const n = 20_000
	brokers := kafkaBrokers(t)
	stores := serviceArgs(t)
	kargs, kcfg := kafkaArgs(t, brokers)
	bin := engramBinary(t)
	args := append(append([]string{}, stores...), kargs...)
	runEngram(t, bin, append([]string{"kafka", "create-topics", "--partitions", "6"}, kargs...)...)
	input := writeEvents(t, n, fmt.Sprintf("w%d-", time.Now().UnixNano()))
	if out := runEngram(t, bin, append(append([]string{"produce"}, kargs...), input)...); !strings.Contains(out, fmt.Sprintf("produced %d to", n)) {
		t.Fatalf("produce: %s", out)
	}
	produceBad(t, kcfg)

	victimData := t.TempDir()
	// One at a time: the first makes the bucket (--s3-create-bucket).
	var ws []*worker
	for i := range 3 {
		data := victimData
		if i > 0 {
			data = t.TempDir()
		}
		w := startWorker(t, bin, data, args)
		waitUntil(t, time.Minute, "worker "+fmt.Sprint(i)+" to serve /health", w.healthy)
		ws = append(ws, w)
	}
	waitUntil(t, 3*time.Minute, "a third of the events ingested", func() bool {
		return ws[0].ingested()+ws[1].ingested()+ws[2].ingested() > n/3
	})
	ws[0].cmd.Process.Signal(syscall.SIGKILL)
	ws[0].cmd.Wait()
	ws[0] = startWorker(t, bin, victimData, args)

	c, err := kafka.New(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitUntil(t, 5*time.Minute, "the group's lag to reach 0", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lag, err := c.GroupLag(ctx, kcfg.Group)
		return err == nil && lag.Total == 0 && len(lag.Partitions[kcfg.Topics.Raw]) == 6
	})
	for i, w := range ws {
		w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.cmd.Wait(); err != nil {
			t.Errorf("worker %d after SIGTERM: %v\n%s", i, err, tail([]byte(w.log.String())))
		}
	}
	out, err := exec.Command(bin, append([]string{"verify", "--json"}, args...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"archivedObjects":%d,"indexDocuments":%d,"agreeing":%d`, n, n, n)) {
		t.Fatalf("verify (archive, index and both notification topics): %v\n%s", err, tail(out))
	}
	checkRejected(t, kcfg)
}

// produceBad puts messages no worker can ingest on the raw topic.
func produceBad(t *testing.T, cfg kafka.Config) {
	t.Helper()
	c, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.ProduceRaw(ctx, []kafka.RawRecord{
		{Key: []byte("bad-1"), Value: []byte("not json at all")},
		{Key: []byte("bad-2"), Value: []byte(`{"eventId":"bad-2","type":"nonsense"}`)},
		{Key: []byte("bad-3"), Value: []byte(`[1,2,3]`)},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkRejected(t *testing.T, cfg kafka.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[string]bool{}
	err := kafka.Scan(ctx, cfg, cfg.Topics.Rejected, func(r *kafka.Record) error {
		reason, ok := r.Header(kafka.HeaderRejectReason)
		src, _ := r.Header(kafka.HeaderSourceTopic)
		if !ok || reason == "" || src != cfg.Topics.Raw {
			t.Errorf("rejected %s without its reason or source (reason %q, source %q)", r.Key, reason, src)
		}
		got[string(r.Key)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"bad-1", "bad-2", "bad-3"} {
		if !got[k] {
			t.Errorf("%s is not on the rejected topic (have %v)", k, got)
		}
	}
}

func waitUntil(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	pollUntil(t, limit, 250*time.Millisecond, what, ok)
}

// pollUntil is waitUntil asking every interval.
func pollUntil(t testing.TB, limit, every time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", limit, what)
		}
		time.Sleep(every)
	}
}
