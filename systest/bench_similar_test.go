package systest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"engram/backend/sqliteindex"
	"engram/backend/sqliteindex/sqlitetest"
)

// similarIndex is the 1M-document benchmark index (sqlitetest.BenchIndex)
// upgraded to the current schema (vec_blocks built), shared with
// backend/sqliteindex's BenchmarkSimilar: $TMPDIR/engram-bench-1m-similar.db,
// made once.
func similarIndex(b *testing.B) string {
	src := sqlitetest.BenchIndex(b)
	dst := filepath.Join(os.TempDir(), "engram-bench-1m-similar.db")
	if _, err := os.Stat(dst + ".v1"); err == nil {
		return dst
	}
	tmp := dst + ".building"
	if err := ubCopyFile(src, tmp); err != nil {
		b.Fatal(err)
	}
	db, err := sqliteindex.Open(tmp, sqliteindex.Options{}) // the upgrade builds vec_blocks
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst+".v1", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dst
}

// BenchmarkSimilarBinary: `engram similar --data D ID` over a million
// documents, process start included, for 60 random documents per
// iteration; reports wall-clock p50/p99 and the CPU time (user + system)
// p50/p99 of the process, which the load of a shared machine inflates less.
func BenchmarkSimilarBinary(b *testing.B) {
	index := similarIndex(b)
	bin := engramBinary(b)
	home, data := b.TempDir(), b.TempDir()
	if err := os.Symlink(index, filepath.Join(data, "index.db")); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 17))
	const runs = 60
	var wall, cpu []time.Duration
	for b.Loop() {
		for range runs {
			id := fmt.Sprintf("b-%07d", rng.IntN(1_000_000)) // querytest.BenchID
			cmd := exec.Command(bin, "similar", "--data", data, id)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
			start := time.Now()
			out, err := cmd.Output()
			wall = append(wall, time.Since(start))
			if err != nil {
				b.Fatalf("engram similar %s: %v\n%s", id, err, out)
			}
			if n := strings.Count(string(out), "\n"); n != 11 {
				b.Fatalf("engram similar %s: %d lines, want a header and 10 neighbours:\n%s", id, n, out)
			}
			cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	p50, p99 := ubPercentiles(wall)
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	c50, c99 := ubPercentiles(cpu)
	b.ReportMetric(c50, "cpu-p50-ms")
	b.ReportMetric(c99, "cpu-p99-ms")
}
