package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfile starts a CPU profile of the command when ENGRAM_CPUPROFILE
// names a file, and returns what stops it: the real binary on the real
// input, for whoever needs to see where a slow run spends its time (the
// in-process benchmarks miss the reader, the journal and start-up).
func cpuProfile(e *env) (stop func(), err error) {
	path := e.getenv("ENGRAM_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ENGRAM_CPUPROFILE %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(e.stderr, "engram: ENGRAM_CPUPROFILE %s: %s\n", path, err)
		}
	}, nil
}
