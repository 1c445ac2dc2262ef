package cli

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "40a2714c0ffee0123456789"}, {Key: "vcs.time", Value: "2026-12-01T11:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got, want := version(func() (*debug.BuildInfo, bool) { return bi, true }), "devel 40a2714c0ffe-dirty 2026-12-01T11:00:00Z go1.26"; got != want {
		t.Fatalf("version %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.3"}}
	if got := version(func() (*debug.BuildInfo, bool) { return bi, true }); got != "v1.2.3 go1.26" {
		t.Fatalf("module version: %q", got)
	}
}

// engram version and engram --version both print it.
func TestVersionCommandAndFlag(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}, args)
		if code != 0 || !strings.HasPrefix(out.String(), "engram ") {
			t.Fatalf("%v: exit %d, out %q, err %q", args, code, out.String(), errb.String())
		}
	}
}
