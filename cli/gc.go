package cli

import (
	"os"
	"runtime/debug"
)

// ingestGC runs the collector of a long ingest (engram ingest, worker,
// reindex) at GOGC=200 under a 128 MiB soft limit: a run keeps little
// alive, so Go's default collected often (5.5% of its CPU), while 400 took
// more memory and more page faults for no less CPU. Either variable set in
// the environment wins.
func ingestGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(128 << 20)
	}
}
