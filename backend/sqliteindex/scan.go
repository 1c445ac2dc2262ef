package sqliteindex

import (
	"context"
	"fmt"

	"engram/model"
)

// ScanByKey streams documents ordered by object_storage_key, from (inclusive)
// to to (exclusive; "" means no end), for verify.
func (db *DB) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	q := "SELECT " + docColumnsNoVector + " FROM docs d WHERE object_storage_key >= ?"
	args := []any{from}
	if to != "" {
		q += ` AND object_storage_key < ?`
		args = append(args, to)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY object_storage_key, event_id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var row docRow // reused: see Reader.docs
	dest := row.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		d, err := row.document()
		if err != nil {
			return fmt.Errorf("index document %s: %w", model.Quote(row.eventID), err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return rows.Err()
}
