package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"engram/backend"
	"engram/model"
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
	st := &backends{data: dataDir(conf.get("data"), e.getenv)}
	if err := st.openArchive(ctx, conf, e); err != nil {
		return err
	}
	defer st.Close()
	out := struct {
		Index   *model.IndexDoc `json:"index"`
		Archive json.RawMessage `json:"archive"`
	}{Index: doc}
	// What is known is printed even when the archive cannot be read
	// ("archive": null), and the error follows on stderr.
	var archErr error
	obj, err := st.archive.Get(ctx, doc.ObjectStorageKey, 0)
	switch {
	case err != nil:
		archErr = fmt.Errorf("event %s is indexed but its archive object %s cannot be read: %w", model.Quote(id), model.Quote(doc.ObjectStorageKey), err)
	case !json.Valid(obj.Body):
		archErr = fmt.Errorf("archive object %s is not valid JSON", model.Quote(doc.ObjectStorageKey))
	default:
		out.Archive = obj.Body
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if _, err := e.stdout.Write(append(model.SafeJSON(b), '\n')); err != nil {
		return err
	}
	return archErr
}
