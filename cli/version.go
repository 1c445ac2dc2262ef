package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// runVersion prints engram's version: the module's, else the VCS revision
// and date the binary was built from (a build from a checkout has no
// module version).
func runVersion(_ context.Context, e *env, args []string) error {
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "engram: version takes no arguments")
		return errUsage
	}
	fmt.Fprintln(e.stdout, "engram "+version(debug.ReadBuildInfo))
	return nil
}

// version describes the build read reports: the module version, the VCS
// commit (and whether the tree was modified, and when the commit was
// made), the Go version.
func version(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return "(unknown version: built without module information)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = pseudoVersionRev(v)
	}
	commit := []string{"commit " + rev[:min(12, len(rev))]}
	switch {
	case rev == "":
		commit = []string{"commit unknown: built without VCS information, with -buildvcs=false or outside a git checkout"}
	case settings["vcs.modified"] == "true":
		commit = append(commit, "modified")
	}
	if t := settings["vcs.time"]; t != "" {
		commit = append(commit, t)
	}
	return v + " (" + strings.Join(commit, ", ") + ") " + bi.GoVersion
}

// pseudoVersionRev is the commit a pseudo-version names
// (v0.0.0-20261201110000-40a2714c0ffe, as go install module@commit
// builds), else "".
func pseudoVersionRev(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 || strings.Trim(v[i+1:], "0123456789abcdef") != "" {
		return ""
	}
	if j := strings.LastIndexAny(v[:i], "-."); j < 0 || len(v[j+1:i]) != 14 {
		return ""
	}
	return v[i+1:]
}
