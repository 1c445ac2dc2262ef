package cli

import (
	"os"
	"runtime/debug"
)

// ingestGC makes the garbage collector of a long ingest (engram ingest,
// worker, reindex) run less often than Go's default (GOGC=100): a run
// keeps little alive (the events in flight
// and a batch), so collections were frequent: 5.5% of the CPU of a run in
// the background mark workers alone (1.3% at 400, see BENCHMARKS.md). At
// 400 the heap may grow to five times what is live; the
// soft memory limit makes the collector run sooner again should that ever
// near it, well within the 200 MB a million-event run may take. Either
// variable set in the environment (which the runtime has read) wins.
func ingestGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(128 << 20)
	}
}
