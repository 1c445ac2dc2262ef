package verify

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/model"
)

// SQLite scans the embedded index.
type SQLite struct{ DB *sql.DB }

// ScanByKey streams documents in key order from the docs table.
func (s SQLite) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	q := `SELECT doc FROM docs WHERE object_storage_key >= ?`
	args := []any{from}
	if to != "" {
		q += ` AND object_storage_key < ?`
		args = append(args, to)
	}
	rows, err := s.DB.QueryContext(ctx, q+` ORDER BY object_storage_key, event_id`, args...)
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

// OpenSearch scans an OpenSearch index with search_after on the keyword
// object_storage_key (event_id breaks ties), a page at a time.
type OpenSearch struct {
	Client *opensearchapi.Client
	Index  string
	Page   int // documents per request (default 1000)
}

// ScanByKey streams documents in key order.
func (o OpenSearch) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	page := o.Page
	if page <= 0 {
		page = 1000
	}
	rng := map[string]any{"gte": from}
	if to != "" {
		rng["lt"] = to
	}
	var after []any
	for {
		body := map[string]any{
			"size":  page,
			"query": map[string]any{"range": map[string]any{"object_storage_key": rng}},
			"sort":  []any{map[string]any{"object_storage_key": "asc"}, map[string]any{"event_id": "asc"}},
		}
		if after != nil {
			body["search_after"] = after
		}
		b, _ := json.Marshal(body)
		resp, err := o.Client.Search(ctx, &opensearchapi.SearchReq{Indices: []string{o.Index}, Body: bytes.NewReader(b)})
		if err != nil {
			return fmt.Errorf("opensearch scan of %s: %w", o.Index, err)
		}
		for _, h := range resp.Hits.Hits {
			var d model.IndexDoc
			if err := json.Unmarshal(h.Source, &d); err != nil {
				return fmt.Errorf("index document %s: %w", model.Quote(h.ID), err)
			}
			if err := fn(&d); err != nil {
				return err
			}
			after = h.Sort
		}
		if len(resp.Hits.Hits) < page {
			return nil
		}
	}
}
