package sqliteindex

import (
	"context"
	"fmt"
	"strings"
)

// matchChunk bounds the ids of one statement (SQLite's default limit on
// parameters is 32766; the filter has its own).
const matchChunk = 500

// Match is the subset of ids whose documents match s (in no order).
func (r *Reader) Match(ctx context.Context, s string, ids []string) (map[string]bool, error) {
	e, err := parse(s)
	if err != nil {
		return nil, err
	}
	p := newPlan(e, r.now(), r.tenant, false)
	out := make(map[string]bool, len(ids))
	if p.none || len(ids) == 0 {
		return out, nil
	}
	f, fargs := p.filterAll("d.seq")
	if p.match != "" {
		f += " AND d.seq IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?)"
		fargs = append(fargs, p.match)
	}
	for len(ids) > 0 {
		n := min(len(ids), matchChunk)
		args := make([]any, 0, n+len(fargs))
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		q := "SELECT d.event_id FROM docs d WHERE d.event_id IN (?" + strings.Repeat(",?", n-1) + ") AND " + f
		if err := r.matchIDs(ctx, q, append(args, fargs...), out); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}

func (r *Reader) matchIDs(ctx context.Context, q string, args []any, out map[string]bool) error {
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}
