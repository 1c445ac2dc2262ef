package osindex

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/query"
)

// coverageTTL is how long Coverage answers from its cache: the numbers
// change only as fast as documents are written, and a warning does not need
// them to the document, so one search per half minute at most.
const coverageTTL = 30 * time.Second

var _ query.FieldCoverage = (*Reader)(nil)

// coverageCache is the last Coverage; its mutex also makes concurrent
// callers share one refresh.
type coverageCache struct {
	mu  sync.Mutex
	cov query.Coverage
	ok  bool
}

// Coverage is which extension fields the documents carry: the mapping
// (fields it does not declare), and one search of size 0 whose filters
// aggregation counts, within the tenant scope, the documents without
// ingested_at (written without the extensions) and, of those, the ones
// that have each extension field. Cached for coverageTTL.
func (r *Reader) Coverage(ctx context.Context) (query.Coverage, error) {
	r.coverage.mu.Lock()
	defer r.coverage.mu.Unlock()
	if r.coverage.ok && r.now().Sub(r.coverage.cov.At) < coverageTTL {
		return r.coverage.cov, nil
	}
	c, err := r.readCoverage(ctx)
	if err != nil {
		return query.Coverage{}, err
	}
	r.coverage.cov, r.coverage.ok = c, true
	return c, nil
}

func (r *Reader) readCoverage(ctx context.Context) (query.Coverage, error) {
	const op = "count the extension fields"
	c := query.Coverage{Lacking: map[string]int64{}, At: r.now()}
	var got map[string]struct {
		Mappings struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"mappings"`
	}
	req := &opensearchapi.MappingGetReq{Indices: []string{r.index}}
	if _, err := r.send(ctx, op, http.MethodGet, req, &got); err != nil {
		return c, err
	}
	ext := slices.Sorted(maps.Keys(ExtensionFields()))
	for _, f := range ext {
		mapped := false
		for _, m := range got { // behind an alias: declared by any index counts
			mapped = mapped || m.Mappings.Properties[f] != nil
		}
		if !mapped {
			c.Unmapped = append(c.Unmapped, f)
		}
	}
	plain := obj{"bool": obj{"must_not": []any{exists(fIngestedAt)}}}
	filters := obj{"all": obj{"match_all": obj{}}, "plain": plain}
	for _, f := range ext {
		filters[f] = obj{"bool": obj{"filter": []any{exists(f)}, "must_not": []any{exists(fIngestedAt)}}}
	}
	res, err := r.search(ctx, op, obj{
		"size":             0,
		"track_total_hits": false,
		"query":            translate(nil, time.Time{}, r.tenant, false),
		"aggs":             obj{"cov": obj{"filters": obj{"filters": filters}}},
	})
	if err != nil {
		return c, err
	}
	var aggs struct {
		Cov struct {
			Buckets map[string]struct {
				DocCount int64 `json:"doc_count"`
			} `json:"buckets"`
		} `json:"cov"`
	}
	if err := json.Unmarshal(res.Aggregations, &aggs); err != nil {
		return c, r.fail(op, err)
	}
	c.Total = aggs.Cov.Buckets["all"].DocCount
	c.Plain = aggs.Cov.Buckets["plain"].DocCount
	for _, f := range ext {
		if f == fIngestedAt {
			continue
		}
		c.Lacking[f] = c.Plain - aggs.Cov.Buckets[f].DocCount
	}
	return c, nil
}
