package cli

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "40a2714c0ffee0123456789"}, {Key: "vcs.time", Value: "2026-12-01T11:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"(devel)", vcs, "devel (commit 40a2714c0ffe, modified, 2026-12-01T11:00:00Z) go1.26"},
		{"(devel)", vcs[:2], "devel (commit 40a2714c0ffe, 2026-12-01T11:00:00Z) go1.26"},
		{"v1.2.3", vcs[:1], "v1.2.3 (commit 40a2714c0ffe) go1.26"},
		// go install engram@COMMIT: no VCS settings, the pseudo-version names it.
		{"v0.0.0-20261201110000-40a2714c0ffe", nil, "v0.0.0-20261201110000-40a2714c0ffe (commit 40a2714c0ffe) go1.26"},
		{"v1.2.4-0.20261201110000-40a2714c0ffe+dirty", nil, "v1.2.4-0.20261201110000-40a2714c0ffe+dirty (commit 40a2714c0ffe) go1.26"},
		{"v1.2.3", nil, "v1.2.3 (commit unknown: built without VCS information, with -buildvcs=false or outside a git checkout) go1.26"},
		{"(devel)", nil, "devel (commit unknown: built without VCS information, with -buildvcs=false or outside a git checkout) go1.26"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: tc.version}, Settings: tc.settings}
		if got := version(func() (*debug.BuildInfo, bool) { return bi, true }); got != tc.want {
			t.Errorf("version %q\n got  %q\n want %q", tc.version, got, tc.want)
		}
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
