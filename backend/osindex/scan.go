package osindex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/model"
)

// scanPage is how many documents ScanByKey asks for at a time.
const scanPage = 1000

// ScanByKey streams documents ordered by object_storage_key, from (inclusive)
// to to (exclusive; "" means no end), for verify: search_after on the keyword
// object_storage_key (event_id breaks ties), a page at a time.
func (ix *Index) ScanByKey(ctx context.Context, from, to string, fn func(*model.IndexDoc) error) error {
	page, name := scanPage, ix.Name()
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
		resp, err := ix.Client().Search(ctx, &opensearchapi.SearchReq{Indices: []string{name}, Body: bytes.NewReader(b)})
		if err != nil {
			return fmt.Errorf("opensearch scan of %s: %w", name, err)
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
