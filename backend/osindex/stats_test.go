package osindex

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// countingTransport counts the HTTP requests it carries that were
// answered: a request the transport tried again after a failure (a loaded
// test machine) is one request of the design, not two.
type countingTransport struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		c.n.Add(1)
	}
	return resp, err
}

// countRequests makes r send through a counting transport.
func countRequests(t testing.TB, r *Reader) *countingTransport {
	t.Helper()
	c := &countingTransport{rt: http.DefaultTransport}
	api, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{
		Addresses: []string{osURL(t)}, Transport: c, DisableRetry: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.api = api
	return c
}

// TestStatsRequests checks that a Stats call is at most two HTTP requests
// (one without a split), also when the range has more buckets than one
// search may hold, and that its answer is the reference's, for a reader
// scoped to a tenant too.
func TestStatsRequests(t *testing.T) {
	ix := openIndex(t, testIndex(t), nil)
	now := time.Now()
	docs := querytest.Generate(now, 300)
	writeDocs(t, ix, docs)
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	until := now.Truncate(time.Hour).Add(time.Hour)
	cases := []struct {
		q      query.StatsQuery
		tenant string
		most   int64
	}{
		{query.StatsQuery{Since: until.Add(-24 * time.Hour), Until: until}, "", 1},
		{query.StatsQuery{Since: until.Add(-24 * time.Hour), Until: until, Every: time.Hour, By: query.ByAgent}, "", 2},
		// 1,440 buckets of 7 groups: more aggregation buckets than one
		// search may hold, so several searches in one _msearch.
		{query.StatsQuery{Since: until.Add(-24 * time.Hour), Until: until, Every: time.Minute, By: query.ByTag}, "", 2},
		{query.StatsQuery{Since: until.Add(-30 * time.Hour), Until: until, Every: time.Minute, By: query.ByOutcome, Expr: "-tag:demo"}, "", 2},
		{query.StatsQuery{Since: until.Add(-72 * time.Hour), Until: until, By: query.ByTag, Top: 3}, querytest.TenantA, 2},
		{query.StatsQuery{Since: until.Add(-66 * time.Hour), Until: until, Every: 2 * time.Minute, By: query.ByTenant}, querytest.TenantB, 2},
	}
	for _, c := range cases {
		t.Run(c.q.By+"/"+c.q.Every.String()+"/"+c.tenant, func(t *testing.T) {
			r := newReader(t, ix, query.Options{Tenant: c.tenant})
			n := countRequests(t, r)
			got, err := r.Stats(context.Background(), c.q)
			if err != nil {
				t.Fatal(err)
			}
			if n.n.Load() > c.most {
				t.Errorf("Stats made %d requests, want at most %d", n.n.Load(), c.most)
			}
			rq, err := c.q.Resolve(now)
			if err != nil {
				t.Fatal(err)
			}
			e := mustParse(t, c.q.Expr)
			var vis []*model.IndexDoc
			for _, d := range docs {
				if (c.tenant == "" || d.TenantID == c.tenant) && querytest.Match(e, d, now) {
					vis = append(vis, d)
				}
			}
			if msg := querytest.SameStats(got, query.StatsOf(rq, vis)); msg != "" {
				t.Fatal(msg)
			}
			if !got.Approximate {
				t.Error("Stats does not say its percentiles are approximate")
			}
		})
	}
}
