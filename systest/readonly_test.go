package systest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// onReadOnlyMedia runs the binary with args on a data directory that is
// mounted read-only in a private mount namespace (as on a read-only disk
// or a snapshot), skipping where mounts cannot be made (not root, no
// unshare).
func onReadOnlyMedia(t *testing.T, bin, data string, args ...string) (string, error) {
	t.Helper()
	probe := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1"`, "sh", data)
	if out, err := probe.CombinedOutput(); err != nil {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatalf("cannot mount read-only under ENGRAM_REQUIRE_SERVICES=1 (CI runs as root with unshare): %v: %s", err, out)
		}
		t.Skipf("cannot mount read-only here (%v): %s", err, out)
	}
	script := `mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"`
	cmd := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", data, bin}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Every read command works on a data directory on read-only media: the
// index is opened read-only (immutable: no writer can exist there).
func TestReadCommandsOnReadOnlyMedia(t *testing.T) {
	bin := engramBinary(t)
	data := t.TempDir()
	events := writeEvents(t, 20, "ro-")
	if out, err := exec.Command(bin, "ingest", "--data", data, events).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"show", "--data", data, firstID(t, events)},
		{"search", "--data", data, "--limit", "5", "importance>=0"},
		{"turns", "--data", data},
		{"verify", "--data", data},
	} {
		out, err := onReadOnlyMedia(t, bin, data, args...)
		if err != nil || strings.Contains(out, "unable to open") {
			t.Errorf("%s on read-only media: %v\n%s", args[0], err, out)
		}
	}
}

func firstID(t *testing.T, events string) string {
	t.Helper()
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var ev struct{ EventID string }
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &ev) != nil || ev.EventID == "" {
		t.Fatalf("no event id on the first line of %s", events)
	}
	return ev.EventID
}
