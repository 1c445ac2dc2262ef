package cli

import (
	"context"
	"fmt"

	"engram/query"
)

// warnCoverage says on stderr, before the answer, which terms of the
// filter src test an extension field that some documents lack (an index
// the source system wrote has none): without it a filter like tool:kubectl
// answers "no events" there and looks like a true negative. stdout, and so
// --json, stays as it was. Failing to count is only a note: the query
// itself still runs.
func warnCoverage(ctx context.Context, e *env, r query.Reader, src string) {
	ws, err := query.CoverageWarnings(ctx, r, src)
	if err != nil {
		fmt.Fprintln(e.stderr, "engram: cannot tell which documents carry engram's extension fields: "+safeLine(err.Error()))
		return
	}
	for _, w := range ws {
		fmt.Fprintln(e.stderr, "engram: warning: "+safeLine(w))
	}
}
