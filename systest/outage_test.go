package systest

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// versitygw runs a private S3 gateway this test can stop and start.
type versitygw struct {
	t    *testing.T
	bin  string
	addr string
	dir  string
	cmd  *exec.Cmd
}

func startVersitygw(t *testing.T) *versitygw {
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		bin = filepath.Join(os.Getenv("HOME"), "go", "bin", "versitygw")
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			bin = filepath.Join(strings.TrimSpace(string(out)), "bin", "versitygw")
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("versitygw binary not found (run .ci/services/up.sh): %v", err)
	}
	v := &versitygw{t: t, bin: bin, addr: freeAddr(t), dir: t.TempDir()}
	v.start()
	t.Cleanup(v.stop)
	return v
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (v *versitygw) start() {
	v.cmd = exec.Command(v.bin, "--port", v.addr, "--access", os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"),
		"--secret", os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"), "posix", v.dir)
	if err := v.cmd.Start(); err != nil {
		v.t.Fatal(err)
	}
	waitListening(v.t, v.addr)
}

func (v *versitygw) stop() {
	if v.cmd != nil && v.cmd.Process != nil {
		v.cmd.Process.Signal(syscall.SIGKILL)
		v.cmd.Wait()
		v.cmd = nil
	}
}

func waitListening(t *testing.T, addr string) {
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

// cutter forwards TCP to a real server and can cut the path: while cut,
// connections are refused, as when the server is down.
type cutter struct {
	mu     sync.Mutex
	addr   string
	target string
	l      net.Listener
	conns  []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	c := &cutter{addr: freeAddr(t), target: target}
	c.open(t)
	t.Cleanup(c.cut)
	return c
}

func (c *cutter) open(t *testing.T) {
	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.l = l
	c.mu.Unlock()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.l != nil {
		c.l.Close()
		c.l = nil
	}
	for _, cn := range c.conns {
		cn.Close()
	}
	c.conns = nil
}

// TestOutageDuringIngest stops the S3 server, then cuts the way to
// OpenSearch, in the middle of an ingest: the run must say so while it
// lasts, resume when the server is back, and lose nothing.
func TestOutageDuringIngest(t *testing.T) {
	args := serviceArgs(t)
	s3 := startVersitygw(t)
	osURL := os.Getenv("ENGRAM_TEST_OPENSEARCH_URL")
	cut := newCutter(t, strings.TrimPrefix(osURL, "http://"))
	args = replaceFlag(args, "--s3-endpoint", "http://"+s3.addr)
	args = replaceFlag(args, "--opensearch-url", "http://"+cut.addr)
	// Enough events that the run is still going when the second outage starts,
	// even on a machine several times faster than this one.
	const n = 60_000
	input := writeEvents(t, n, fmt.Sprintf("outage%d-", time.Now().UnixNano()))
	cmd := exec.Command(engramBinary(t), append(append([]string{"ingest"}, args...), input)...)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	waitFor(t, &out, "", 2*time.Second)
	s3.stop()
	waitFor(t, &out, "engram: outage: archive", 30*time.Second)
	s3.start()
	waitFor(t, &out, "engram: archive: server answering again", 60*time.Second)
	cut.cut()
	waitFor(t, &out, "engram: outage: index", 30*time.Second)
	cut.open(t)
	waitFor(t, &out, "engram: index: server answering again", 60*time.Second)

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ingest: %v\n%s", err, tail([]byte(out.String())))
		}
	case <-time.After(10 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("ingest did not finish:\n%s", tail([]byte(out.String())))
	}
	if !strings.Contains(out.String(), fmt.Sprintf("ingested %d, duplicates 0, rejected 0, failed 0", n)) {
		t.Fatalf("summary:\n%s", tail([]byte(out.String())))
	}
	vout, err := exec.Command(engramBinary(t), append([]string{"verify", "--json"}, args...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(vout), fmt.Sprintf(`"agreeing":%d`, n)) {
		t.Fatalf("verify: %v\n%s", err, tail(vout))
	}
}

func replaceFlag(args []string, name, value string) []string {
	out := append([]string{}, args...)
	for i := range len(out) - 1 {
		if out[i] == name {
			out[i+1] = value
		}
	}
	return out
}

// waitFor waits until out holds want (after at least min, when want is "").
func waitFor(t *testing.T, out *syncBuffer, want string, within time.Duration) {
	t.Helper()
	if want == "" {
		time.Sleep(within)
		return
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if strings.Contains(out.String(), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %q within %s:\n%s", want, within, tail([]byte(out.String())))
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
