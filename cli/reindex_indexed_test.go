package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/backend/kafka"
	"engram/backend/osindex/ostest"
	"engram/model"
	"engram/query/querytest"
)

// TestReindexIntoCatchesUpFromIndexed: with Kafka configured, reindex
// --into reads memory.indexed from where it ended when the upgrade began,
// so an event the deployment writes meanwhile is caught up before the swap
// even when it is stamped days before the run (the listing of the archive
// from the start's day misses it: TestSourceDeployment's straggler, which
// there stops the swap). Against the real cluster and the real broker.
func TestReindexIntoCatchesUpFromIndexed(t *testing.T) {
	u := ostest.URL(t)
	kcfg, kargs := testKafka(t)
	now := time.Now()
	docs := querytest.Generate(now, querytest.Size)
	var base, late []*model.IndexDoc
	for i, d := range docs {
		ts, _ := model.ParseTimestamp(d.Timestamp)
		if len(late) < 3 && now.Sub(ts) > 26*time.Hour && i > 20 {
			late = append(late, d) // stragglers, all of them
		} else {
			base = append(base, d)
		}
	}
	if len(late) != 3 {
		t.Fatalf("data set: %d stragglers", len(late))
	}
	c, dep := newDeployment(t, u, "engram-idxcatch-")
	pub, err := kafka.NewPublisher(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// The deployment's worker: archive, index, then announce.
	write := func(ds []*model.IndexDoc) {
		dep.write(ds)
		var ixs []model.Indexed
		for _, d := range ds {
			_, ix := d.Notifications(dep.old)
			ixs = append(ixs, ix)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := pub.PublishPayloads(ctx, nil, ixs); err != nil {
			t.Fatal(err)
		}
	}
	write(base) // announced before the upgrade: not the catch-up's
	into := ostest.Index(t, "engram-idxcatch-new-")
	beforeCatchUp = func() { write(late) }
	defer func() { beforeCatchUp = nil }()
	args := append([]string{"reindex", "--index", "opensearch", "--opensearch-index", dep.alias, "--into", into, "--swap-alias", dep.alias}, kargs...)
	_, stderr, code := c.run("", args...)
	t.Logf("engram reindex:\n%s", stderr)
	want := fmt.Sprintf("catch-up from %s at ", kcfg.Topics.Indexed)
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, ": 3 notifications, 3 archive keys") ||
		!strings.Contains(stderr, fmt.Sprintf("alias %s now names %s alone", dep.alias, into)) {
		t.Fatalf("reindex: code %d, want %q and the swap; stderr:\n%s", code, want, stderr)
	}
	// The listing from the start's day found none of them; memory.indexed
	// all three, and after the swap nothing more.
	if !strings.Contains(stderr, ", 3 created,") || !strings.Contains(stderr, ": 0 notifications, 0 archive keys") {
		t.Errorf("catch-up counts: %s", stderr)
	}
	ostest.MustAdmin(t, u, "POST", "/"+into+"/_refresh", "")
	got := string(ostest.MustAdmin(t, u, "GET", "/"+into+"/_count", ""))
	if !strings.Contains(got, fmt.Sprintf(`"count":%d`, len(docs))) {
		t.Errorf("new index: %s, want %d documents", got, len(docs))
	}
	for _, d := range late {
		if !slices.Contains(dep.written, d) {
			t.Fatalf("straggler %s not written", d.EventID)
		}
	}
}
