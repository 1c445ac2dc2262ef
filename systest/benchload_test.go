package systest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"engram/internal/fsfloor"
)

// cpuLoad is ENGRAM_BENCH_LOAD busy processes running beside a benchmark:
// the machine that is not quiet, made the same in every run. Each is
// the leader of a session of its own, as another CI job's processes would
// be: with autogroup scheduling (Linux's default on desktops and these VMs)
// the kernel shares the CPU between sessions before it shares it between
// processes, so a load in the benchmark's own session would be a different,
// kinder test.
type cpuLoad struct {
	procs []*exec.Cmd
	start time.Time
}

// loadLimit bounds a load process's life even if the benchmark is killed
// before its cleanup runs.
const loadLimit = 15 * time.Minute

// startLoad starts the load ENGRAM_BENCH_LOAD asks for (none when unset or
// 0) and stops it when b ends; the load's share of the CPU is reported as
// the metric load-cores.
func startLoad(b *testing.B) *cpuLoad {
	n, err := loadProcs(os.Getenv("ENGRAM_BENCH_LOAD"))
	if err != nil {
		b.Fatal(err)
	}
	l := &cpuLoad{start: time.Now()}
	for range n {
		// A bash builtin loop: no process is forked, so all the load is
		// CPU, and its rusage is the shell's own.
		cmd := exec.Command("bash", "-c", fmt.Sprintf("while [ $SECONDS -lt %d ]; do :; done", int(loadLimit.Seconds())))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			l.stop()
			b.Fatalf("ENGRAM_BENCH_LOAD: %v", err)
		}
		l.procs = append(l.procs, cmd)
	}
	b.Cleanup(func() { l.stop() })
	return l
}

// loadProcs parses ENGRAM_BENCH_LOAD: how many busy processes (0 to 8).
func loadProcs(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 8 {
		return 0, fmt.Errorf("ENGRAM_BENCH_LOAD=%q: want a number of busy processes from 0 to 8", v)
	}
	return n, nil
}

// report stops the load and reports the cores it used on average, the
// other side of what the benchmark got.
func (l *cpuLoad) report(b *testing.B) {
	if len(l.procs) == 0 {
		return
	}
	cpu := l.stop()
	b.ReportMetric(cpu.Seconds()/time.Since(l.start).Seconds(), "load-cores")
}

// stop kills the load (idempotent) and returns the CPU it used.
func (l *cpuLoad) stop() time.Duration {
	var cpu time.Duration
	for _, cmd := range l.procs {
		cmd.Process.Kill()
		cmd.Wait()
		if st := cmd.ProcessState; st != nil {
			cpu += fsfloor.RusageCPU(st.SysUsage().(*syscall.Rusage))
		}
	}
	l.procs = nil
	return cpu
}

// probe runs a CPU-bound control beside the load for d: two threads that
// never block, in the benchmark's own session, and returns the cores they
// got. Beside a load this is the share the scheduler gives a process that
// always has work; the floor's writers, which sleep in fsync and wake
// ahead of running threads, get more (BENCHMARKS.md, "Ingest: the real
// binary against the raw fsync floor").
// Without a load it returns 0 and costs nothing.
func (l *cpuLoad) probe(d time.Duration) float64 {
	if len(l.procs) == 0 {
		return 0
	}
	const threads = 2
	start, cpu0 := time.Now(), fsfloor.CPUTime()
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := uint64(1)
			for time.Since(start) < d {
				for i := range 100_000 {
					x = x*6364136223846793005 + uint64(i)
				}
			}
			sink.Add(x)
		}()
	}
	wg.Wait()
	return (fsfloor.CPUTime() - cpu0).Seconds() / time.Since(start).Seconds()
}

// sink keeps the probe's arithmetic from being optimised away.
var sink atomic.Uint64
