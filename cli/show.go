package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"engram/backend"
	"engram/model"
	"engram/query"
)

type showOpts struct{ common }

func showFlags(e *env) (*flag.FlagSet, *showOpts) {
	o := &showOpts{}
	fs := newFlagSet("show", e)
	o.common.bind(fs)
	return fs, o
}

func runShow(ctx context.Context, e *env, args []string) error {
	fs, o := showFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	conf, err := o.common.resolve(fs, e.getenv)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(e.stderr, "usage: engram show [--data DIR] EVENT_ID")
		return errUsage
	}
	id := fs.Arg(0)
	// Read-only, and scoped to the tenant like every other read.
	r, err := openQueryReader(ctx, conf, e)
	if err != nil {
		return err
	}
	defer r.Close()
	doc, err := r.Document(ctx, id)
	if errors.Is(err, backend.ErrNotFound) {
		return fmt.Errorf("no event %s in %s", model.Quote(id), r.Describe())
	}
	if err != nil {
		return err
	}
	st := &backends{data: dataDir(conf.Data, e.getenv)}
	if err := st.openArchive(ctx, conf, e); err != nil {
		return err
	}
	defer st.Close()
	// What is known is printed even when the archive cannot be read
	// ("archive": null), and the error follows on stderr.
	out, archErr := query.ShowJSON(ctx, st.archive, doc)
	if out == nil {
		return archErr
	}
	if _, err := e.stdout.Write(out); err != nil {
		return err
	}
	return archErr
}
