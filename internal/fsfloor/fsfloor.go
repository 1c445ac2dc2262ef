package fsfloor

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Dir is a new directory for a benchmark's files: under $ENGRAM_BENCH_DIR,
// kept after the run, when that is set (deleting tens of thousands of files
// makes every file created on this machine's file system cost 10× more CPU
// for the next minutes, which would slow the next run: remove the directory
// when done measuring), else a test temporary directory.
func Dir(tb testing.TB) string {
	root := os.Getenv("ENGRAM_BENCH_DIR")
	if root == "" {
		return tb.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, "bench-")
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// CPUTime is the CPU (user and system) this process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return RusageCPU(&ru)
}

// procCPU is the CPU (user and system) another process has used so far,
// from /proc/PID/stat, in steps of 10 ms: for a server the benchmark
// shares the machine with (a broker, a collector), whose work for the
// benchmark is part of what it costs.
func procCPU(pid string) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15, counted after the ")" that
	// ends the command name (which may hold spaces).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: %q", pid, raw)
	}
	ticks := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	return time.Duration(ticks(f[11])+ticks(f[12])) * (time.Second / 100), nil // USER_HZ is 100 on Linux
}

// EnvProcCPU is procCPU of the process whose pid the environment variable
// env holds, -1 when it is not set.
func EnvProcCPU(tb testing.TB, env string) time.Duration {
	pid := os.Getenv(env)
	if pid == "" {
		return -1
	}
	cpu, err := procCPU(pid)
	if err != nil {
		tb.Fatalf("%s: %v", env, err)
	}
	return cpu
}

// RusageCPU is the user plus system time of ru.
func RusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Create makes one file per body under a new directory, at the relative
// path names[i] (nil: all in one directory, as one day of the archive), with
// n writers, each file created, written, fsynced and closed; the
// directories are made first. It returns how long the files took.
func Create(tb testing.TB, names []string, bodies [][]byte, n int) time.Duration {
	root := Dir(tb)
	paths := make([]string, len(bodies))
	for i := range bodies {
		name := fmt.Sprintf("%d.json", i)
		if names != nil {
			name = names[i]
		}
		paths[i] = filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	ch := make(chan int, len(bodies))
	for i := range bodies {
		ch <- i
	}
	close(ch)
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if err := write(paths[i], bodies[i]); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func write(path string, body []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Result is the floor at its best concurrency.
type Result struct {
	Workers    int
	Elapsed    time.Duration
	CPUPerFile time.Duration // this process's CPU per file, at that concurrency
}

// Rate is files per second.
func (r Result) Rate(files int) float64 { return float64(files) / r.Elapsed.Seconds() }

// Best runs Create once at each concurrency and returns the fastest.
func Best(tb testing.TB, names []string, bodies [][]byte, concurrencies ...int) Result {
	var best Result
	for _, n := range concurrencies {
		runtime.GC() // what ran before is not the floor's garbage
		cpu0 := CPUTime()
		el := Create(tb, names, bodies, n)
		cpu := CPUTime() - cpu0
		if best.Elapsed == 0 || el < best.Elapsed {
			best = Result{Workers: n, Elapsed: el, CPUPerFile: cpu / time.Duration(max(len(bodies), 1))}
		}
	}
	return best
}
