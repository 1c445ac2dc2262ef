package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
)

type configOpts struct{ common }

func configFlags(e *env) (*flag.FlagSet, *configOpts) {
	o := &configOpts{}
	fs := newFlagSet("config", e)
	o.common.bind(fs)
	return fs, o
}

// runConfig prints the effective configuration and where each value came
// from. Secrets are shown only as set or not set.
func runConfig(_ context.Context, e *env, args []string) error {
	fs, o := configFlags(e)
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	file := conf.file
	if file == "" {
		file = "(none; looked for " + configPath(e.getenv) + ")"
	}
	fmt.Fprintf(e.stdout, "config file: %s\nprofile:     %s\ndata:        %s\n\n", safeLine(file), safeLine(orDash(conf.profile)), safeLine(dataDir(conf.Data, e.getenv)))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range settingsTable {
		// Every key, set or not: they are what a config file may hold.
		v, ok := conf.values[s.key]
		from := conf.sources[s.key]
		switch {
		case !ok:
			v, from = "", "unset"
		case s.secret:
			v = "<redacted>"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.key, safeLine(orDash(v)), from)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
