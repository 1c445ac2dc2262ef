package systest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"engram/backend/kafka"
)

// TestBrokerRestart: an `engram worker` and an `engram tail --topic` run
// while their broker (a private one: the shared broker other tests use is
// never stopped) is stopped and started again on its data. Both keep
// running, say once that the broker is away and once that it is back, and
// go on where they were: every event produced before, during (in flight)
// and after the restart is archived and indexed exactly once, and the
// tail prints every message of the raw topic once, in order.
func TestBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the broker restart (a private Kafka broker started twice, 20-30 s)")
	}
	kafkaBrokers(t) // skips, or fails under ENGRAM_REQUIRE_SERVICES
	t0 := time.Now()
	type kres struct {
		k   *privateKafka
		err error
	}
	kch := make(chan kres, 1)
	go func() { k, err := startPrivateKafka(t); kch <- kres{k, err} }()
	bin := engramBinary(t)
	const before, after = 600, 200
	input1 := writeEvents(t, before, fmt.Sprintf("br%d-a-", time.Now().UnixNano()))
	input2 := writeEvents(t, after, fmt.Sprintf("br%d-b-", time.Now().UnixNano()))
	kr := <-kch
	if kr.err != nil {
		t.Fatalf("private Kafka broker: %v", kr.err)
	}
	broker := kr.k
	t.Logf("broker and binary ready in %s", time.Since(t0).Round(100*time.Millisecond))
	kargs, kcfg := kafkaArgs(t, broker.addr)
	runEngram(t, bin, append([]string{"kafka", "create-topics", "--partitions", "2"}, kargs...)...)
	data := t.TempDir()
	args := append([]string{"--data", data}, kargs...)

	tailer := startLogged(t, bin, append([]string{"tail", "--topic", "raw"}, kargs...)...)
	port := freePort(t)
	wk := startLogged(t, bin, append(append([]string{"worker"}, args...), "--health-port", port,
		"--kafka-session-timeout", "6s", "--status-every", "1s")...)
	waitFor(t, wk.stderr, "engram worker: group", 30*time.Second)
	time.Sleep(500 * time.Millisecond) // the tail's watch starts at the end: let it start first
	runEngram(t, bin, append(append([]string{"produce"}, kargs...), input1)...)
	// The broker goes away with events in flight.
	hw := &worker{port: port}
	pollUntil(t, 30*time.Second, 20*time.Millisecond, "the worker to ingest", func() bool { return hw.ingested() > 0 })
	t1 := time.Now()
	if err := broker.run("stop", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wk.stderr, "engram worker: kafka: poll:", 20*time.Second)
	waitFor(t, tailer.stderr, "engram tail: kafka: watch:", 20*time.Second)
	if err := broker.run("start", true); err != nil {
		t.Fatal(err)
	}
	t.Logf("broker down and up again in %s", time.Since(t1).Round(100*time.Millisecond))
	runEngram(t, bin, append(append([]string{"produce"}, kargs...), input2)...)
	waitFor(t, wk.stderr, "consuming again", 30*time.Second)
	waitFor(t, tailer.stderr, "following again", 30*time.Second)

	c, err := kafka.New(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pollUntil(t, 30*time.Second, 250*time.Millisecond, "the group's lag to reach 0", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lag, err := c.GroupLag(ctx, kcfg.Group)
		return err == nil && lag.Total == 0 && len(lag.Partitions[kcfg.Topics.Raw]) == 2
	})
	pollUntil(t, 10*time.Second, 100*time.Millisecond, "the tail to print every message", func() bool {
		return tailer.lines() >= before+after
	})
	wk.stop(t)
	tailer.stop(t)
	t.Logf("the worker said:\n%s\nthe tail said:\n%s", saidAbout(wk.stderr.String()), saidAbout(tailer.stderr.String()))

	t.Run("worker", func(t *testing.T) {
		log := wk.stderr.String()
		if n := strings.Count(log, "; waiting for Kafka"); n != 1 {
			t.Errorf("the outage reported %d times, want once:\n%s", n, log)
		}
		if n := strings.Count(log, "back after"); n != 1 {
			t.Errorf("the recovery reported %d times, want once:\n%s", n, log)
		}
		out, err := exec.Command(bin, append([]string{"verify", "--json"}, args...)...).CombinedOutput()
		n := before + after
		if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"archivedObjects":%d,"indexDocuments":%d,"agreeing":%d`, n, n, n)) {
			t.Fatalf("verify (archive, index and both notification topics): %v\n%s\nworker:\n%s", err, tail(out), tail([]byte(log)))
		}
	})
	t.Run("tail", func(t *testing.T) {
		log := tailer.stderr.String()
		if n := strings.Count(log, "; waiting for Kafka"); n != 1 {
			t.Errorf("the outage reported %d times, want once:\n%s", n, log)
		}
		seen := map[string]bool{}
		next := map[int32]int64{}
		for _, line := range tailer.stdout() {
			var m struct {
				Partition int32
				Offset    int64
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("tail printed %q: %v", line, err)
			}
			key := fmt.Sprint(m.Partition, "@", m.Offset)
			if seen[key] || m.Offset != next[m.Partition] {
				t.Fatalf("tail printed %s after offset %d of its partition (a message skipped or repeated)", key, next[m.Partition]-1)
			}
			seen[key], next[m.Partition] = true, m.Offset+1
		}
		if len(seen) != before+after {
			t.Errorf("tail printed %d messages, want %d", len(seen), before+after)
		}
	})
}

// logged is a process whose stdout lines and stderr are kept.
type logged struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	mu     sync.Mutex
	out    []string
	done   chan struct{}
}

func startLogged(t *testing.T, bin string, args ...string) *logged {
	t.Helper()
	p := &logged{cmd: exec.Command(bin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *logged) lines() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

func (p *logged) stdout() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.out...)
}

// stop sends SIGTERM: the process must still be running (it did not exit
// by itself through the outage) and exit cleanly.
func (p *logged) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("%s: not running any more: %v\n%s", p.cmd.Args[1], err, tail([]byte(p.stderr.String())))
	}
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("%s after SIGTERM: %v\n%s", p.cmd.Args[1], err, tail([]byte(p.stderr.String())))
	}
}

func freePort(t *testing.T) string {
	_, port, _ := net.SplitHostPort(freeAddr(t))
	return port
}

// saidAbout is what a command said about the outage.
func saidAbout(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "waiting for") || strings.Contains(l, "back after") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
