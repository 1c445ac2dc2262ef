package cli

import (
	"context"
	"fmt"
	"runtime/debug"
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

// version describes the build read reports.
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
	if rev := settings["vcs.revision"]; rev != "" {
		v += " " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += "-dirty"
		}
		if t := settings["vcs.time"]; t != "" {
			v += " " + t
		}
	}
	return v + " " + bi.GoVersion
}
