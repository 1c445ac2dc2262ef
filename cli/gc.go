package cli

import (
	"os"
	"runtime/debug"
)

// ingestGC makes the garbage collector of a long ingest (engram ingest,
// worker, reindex) run less often than Go's default (GOGC=100): a run
// keeps little alive (the events in flight and a batch), so collections
// were frequent: 5.5% of the CPU of a run in the background mark workers
// alone. At 200 the heap may grow to three times what is live. 400 cost no
// less CPU and took more memory: every page the heap grows into is a fresh
// page, faulted in at 1-12 µs on a VM whose host reclaims freed guest
// memory, and a 7,500-event run took 3.7 faults an event against 3.0 at
// 200. The soft memory limit makes the
// collector run sooner again should the heap ever near it, well within
// the 200 MB a million-event run may take. Either variable set in the
// environment (which the runtime has read) wins.
func ingestGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(128 << 20)
	}
}
