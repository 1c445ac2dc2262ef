package systest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The soak's pieces: a private Kafka broker it can restart, a TCP proxy
// that can refuse connections or slow every byte, a tmpfs it can fill, a
// restartable worker, and the followers (the inspector in tmux, engram
// tail). Nothing here calls t.Fatal off the test goroutine: the fault
// driver runs on it, the slow parts (a broker restart) report on channels.

// privateKafka is a single-node KRaft broker of the test's own, started by
// .ci/services/kafka.sh with its own ports and directory, so restarting it
// disturbs no other test on the shared broker.
type privateKafka struct {
	dir, script string
	env         []string
	addr        string
}

func startPrivateKafka(t *testing.T) (*privateKafka, error) {
	script, err := filepath.Abs(filepath.Join("..", ".ci", "services", "kafka.sh"))
	if err != nil {
		return nil, err
	}
	// Short: the socket path of nothing here, but the log lines name it.
	dir, err := os.MkdirTemp("", "engram-soak-kafka-")
	if err != nil {
		return nil, err
	}
	// The shared test CA (the broker's TLS listener needs one): copied, not
	// made again (two openssl key generations cost seconds on a busy box).
	if ca := os.Getenv("ENGRAM_TEST_KAFKA_CA_FILE"); ca != "" {
		_ = exec.Command("cp", "-r", filepath.Dir(ca), filepath.Join(dir, "tls")).Run()
	}
	port := func() string { _, p, _ := net.SplitHostPort(freeAddr(t)); return p }
	k := &privateKafka{dir: dir, script: script}
	kp := port()
	k.addr = "127.0.0.1:" + kp
	k.env = append(os.Environ(), "ENGRAM_SERVICES_DIR="+dir, "KAFKA_PORT="+kp, "KAFKA_CONTROLLER_PORT="+port(),
		"KAFKA_SASL_PORT="+port(), "KAFKA_TLS_PORT="+port(), "KAFKA_HEAP_OPTS=-Xms256m -Xmx384m", "KAFKA_START_TIMEOUT=180")
	t.Cleanup(func() { k.stop(); os.RemoveAll(dir) })
	return k, k.run("start", false)
}

func (k *privateKafka) run(what string, keep bool) error {
	cmd := exec.Command("bash", k.script, what)
	cmd.Env = k.env
	if keep {
		cmd.Env = append(cmd.Env, "KAFKA_KEEP_DATA=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kafka.sh %s: %w\n%s", what, err, tail(out))
	}
	return nil
}

func (k *privateKafka) stop() { _ = k.run("stop", false) }

// restart stops the broker (SIGTERM: a controlled shutdown), keeps it down
// for down, and starts it on the same data.
func (k *privateKafka) restart(down time.Duration) error {
	if err := k.run("stop", false); err != nil {
		return err
	}
	time.Sleep(down)
	return k.run("start", true)
}

// faultProxy forwards TCP to a server. down refuses new connections and
// drops open ones (the server is unreachable); a delay holds every chunk
// in both directions that long (the storage behind it is slow).
type faultProxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]bool
	delay        atomic.Int64 // nanoseconds a chunk waits
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	p := &faultProxy{addr: freeAddr(t), target: target, conns: map[net.Conn]bool{}}
	if err := p.up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.down)
	return p
}

func (p *faultProxy) up() error {
	var l net.Listener
	var err error
	for range 50 { // the port may linger a moment after down
		if l, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			if p.l != l { // went down meanwhile
				p.mu.Unlock()
				in.Close()
				out.Close()
				continue
			}
			p.conns[in], p.conns[out] = true, true
			p.mu.Unlock()
			go p.pipe(out, in)
			go p.pipe(in, out)
		}
	}()
	return nil
}

func (p *faultProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := p.delay.Load(); d > 0 {
				time.Sleep(time.Duration(d))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

func (p *faultProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// mountTmpfs mounts a small tmpfs at dir (the test runs as root); the
// error says why not when it cannot.
func mountTmpfs(t *testing.T, dir string, size string) error {
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "engram-soak", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("mount -t tmpfs: %w: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v %s", dir, err, out)
		}
	})
	return nil
}

// fillDisk takes every free block of the file system dir is on, with one
// file; the returned func gives them back.
func fillDisk(dir string) (release func(), err error) {
	path := filepath.Join(dir, "soak-filler")
	f, err := os.Create(path)
	if err != nil {
		return func() {}, err
	}
	defer f.Close()
	// Fallocate what statfs calls free; when the file system takes less
	// than it said (ENOSPC), half as much, and so on down to a page.
	var off int64
	for range 64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return func() { os.Remove(path) }, err
		}
		free := int64(st.Bavail) * st.Bsize
		for free >= 4096 {
			err := syscall.Fallocate(int(f.Fd()), 0, off, free)
			if err == nil {
				off += free
				break
			}
			if !errors.Is(err, syscall.ENOSPC) {
				return func() { os.Remove(path) }, err
			}
			free /= 2
		}
		if free < 4096 {
			break
		}
	}
	// What fallocate left (rounding): written until the disk says no.
	chunk := make([]byte, 4096)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return func() { os.Remove(path) }, err
	}
	for range 4096 {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return func() { os.Remove(path) }, nil
}

// soakWorker is one `engram worker` slot: restarted on the same data
// directory and health port after a kill.
type soakWorker struct {
	bin, data, port string
	args            []string
	cmd             *exec.Cmd
	log             *syncBuffer
	exited          chan struct{}
	starts          int
	started         time.Time
}

func newSoakWorker(t *testing.T, bin, data string, args []string) *soakWorker {
	_, port, _ := net.SplitHostPort(freeAddr(t))
	w := &soakWorker{bin: bin, data: data, port: port, args: args, log: &syncBuffer{}}
	t.Cleanup(func() {
		if w.cmd != nil {
			w.cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

func (w *soakWorker) start() error {
	w.starts++
	w.started = time.Now()
	fmt.Fprintf(w.log, "--- soak: start %d\n", w.starts)
	w.cmd = exec.Command(w.bin, append(append([]string{"worker"}, w.args...), "--data", w.data, "--health-port", w.port,
		"--kafka-session-timeout", "6s", "--status-every", "2s", "--drain", "20s")...)
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	if err := w.cmd.Start(); err != nil {
		return err
	}
	ex := make(chan struct{})
	w.exited = ex
	cmd := w.cmd
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(w.log, "--- soak: exited: %v\n", err)
		close(ex)
	}()
	return nil
}

func (w *soakWorker) running() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

func (w *soakWorker) kill9() {
	w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

func (w *soakWorker) healthy() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + w.port + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// osCount is the number of documents in an OpenSearch index, read on the
// server's own address (never through a fault proxy); -1 when unknown.
func osCount(url, index string) int64 {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url + "/" + index + "/_count")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var v struct {
		Count int64 `json:"count"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		return -1
	}
	return v.Count
}

// tailFollower runs `engram tail` over the stores and counts the distinct
// events it printed; restarted when it exits (each exit counted, with its
// last words).
type tailFollower struct {
	mu       sync.Mutex
	seen     map[string]bool
	exits    []string
	cancel   context.CancelFunc
	finished chan struct{}
}

func startTailFollower(bin string, args []string) *tailFollower {
	ctx, cancel := context.WithCancel(context.Background())
	f := &tailFollower{seen: map[string]bool{}, cancel: cancel, finished: make(chan struct{})}
	go func() {
		defer close(f.finished)
		for ctx.Err() == nil {
			cmd := exec.CommandContext(ctx, bin, append([]string{"tail", "--json"}, args...)...)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil || cmd.Start() != nil {
				return
			}
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				var d struct {
					EventID string `json:"event_id"` // an index document
				}
				if json.Unmarshal(sc.Bytes(), &d) == nil && d.EventID != "" {
					f.mu.Lock()
					f.seen[d.EventID] = true
					f.mu.Unlock()
				}
			}
			_, _ = io.Copy(io.Discard, out)
			err = cmd.Wait()
			if ctx.Err() != nil {
				return
			}
			f.mu.Lock()
			f.exits = append(f.exits, fmt.Sprintf("%s: %v: %s", time.Now().Format("15:04:05.0"), err, strings.TrimSpace(lastLines(stderr.String(), 2))))
			f.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return f
}

func (f *tailFollower) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

func (f *tailFollower) stop() { f.cancel(); <-f.finished }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// tmuxInspector is the real inspector (`engram ui`) in a detached tmux
// session, its screen read with capture-pane.
type tmuxInspector struct {
	sock string
}

func startTmuxInspector(t *testing.T, bin string, args []string) (*tmuxInspector, error) {
	tm, err := exec.LookPath("tmux")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "engram-soak-tmux-") // short: a socket path has a length limit
	if err != nil {
		return nil, err
	}
	in := &tmuxInspector{sock: filepath.Join(dir, "s")}
	quoted := make([]string, 0, len(args)+2)
	for _, a := range append([]string{bin, "ui"}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	shell := fmt.Sprintf("HOME=%s TERM=xterm-256color S3_SECRET_ACCESS_KEY='%s' %s", dir, os.Getenv("S3_SECRET_ACCESS_KEY"), strings.Join(quoted, " "))
	out, err := exec.Command(tm, "-S", in.sock, "new-session", "-d", "-s", "soak", "-x", "120", "-y", "30", shell).CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("tmux new-session: %w: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tm, "-S", in.sock, "kill-server").Run(); os.RemoveAll(dir) })
	return in, nil
}

func (in *tmuxInspector) screen() string {
	out, err := exec.Command("tmux", "-S", in.sock, "capture-pane", "-p", "-t", "soak").Output()
	if err != nil {
		return ""
	}
	return string(out)
}
