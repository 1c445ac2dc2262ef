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

// archiveTurn is engram turn on an index without turn keys (one the source
// system wrote): the index's answer for key (docs, err) is a lone plain
// document or nothing, so the turn is looked for in the archive around the
// event key names, and stderr says how it was searched. Any other answer
// is returned as it is.
func archiveTurn(ctx context.Context, e *env, fs *flag.FlagSet, o *queryOpts, r query.Reader, key string, docs []*model.IndexDoc, err error) ([]*model.IndexDoc, error) {
	notFound := errors.Is(err, backend.ErrNotFound)
	if !notFound && (err != nil || !query.NeedsArchive(docs)) {
		return docs, err
	}
	fc, ok := r.(query.FieldCoverage)
	if !ok {
		return docs, err
	}
	c, cerr := fc.Coverage(ctx)
	if cerr != nil || c.Lacking["turn_id"] == 0 {
		return docs, err // engram's index: its answer is the whole truth
	}
	if notFound {
		if _, derr := r.Document(ctx, key); errors.Is(derr, backend.ErrNotFound) {
			return nil, fmt.Errorf("turn %s: not found in %s; %s of its %s documents have no turn_id or trace_id (written without engram's extensions), "+
				"so a turn is found in the archive only around one of its events: engram turn EVENT_ID (or engram reindex --into)",
				model.Quote(key), safeLine(r.Describe()), query.Thousands(c.Lacking["turn_id"]), query.Thousands(c.Total))
		}
	}
	conf, rerr := o.common.resolve(fs, e.getenv)
	if rerr != nil {
		return nil, rerr
	}
	st := &backends{data: dataDir(conf.Data, e.getenv)}
	if aerr := st.openArchive(ctx, conf, e); aerr != nil {
		return nil, fmt.Errorf("turn %s: the index has no turn keys and the archive cannot be opened: %w", model.Quote(key), aerr)
	}
	defer st.Close()
	at := &query.ArchiveTurns{Reader: r, Archive: st.archive}
	t, ferr := at.Find(ctx, key)
	if ferr != nil {
		return nil, fmt.Errorf("turn %s from the archive: %w", model.Quote(key), ferr)
	}
	fmt.Fprintln(e.stderr, "engram: "+safeLine(t.Searched))
	return t.Docs, nil
}
