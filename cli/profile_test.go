package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ENGRAM_CPUPROFILE writes a CPU profile (gzipped protobuf, what go tool
// pprof and -pgo read) of the command; a path that cannot be created stops
// the command with an error that names the variable.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.prof")
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "ENGRAM_CPUPROFILE" {
			return path
		}
		return ""
	}
	if code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, getenv}, []string{"version"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("profile is not gzipped: %v", err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) == 0 {
		t.Fatalf("profile: %d bytes, %v", len(b), err)
	}

	path = filepath.Join(dir, "missing", "cpu.prof")
	out.Reset()
	errb.Reset()
	code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, getenv}, []string{"version"})
	if code != 1 || !strings.Contains(errb.String(), "ENGRAM_CPUPROFILE") || out.Len() != 0 {
		t.Fatalf("unwritable profile: exit %d, out %q, err %q", code, out.String(), errb.String())
	}
}
