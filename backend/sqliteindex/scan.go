package sqliteindex

import (
	"context"
	"encoding/json"
	"fmt"

	"engram/model"
)

// ScanByKey streams documents ordered by object_storage_key, from (inclusive)
// to to (exclusive; "" means no end), for verify.
func (db *DB) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	q := `SELECT doc FROM docs WHERE object_storage_key >= ?`
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
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return err
		}
		var d model.IndexDoc
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("index document: %w", err)
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
	return rows.Err()
}
