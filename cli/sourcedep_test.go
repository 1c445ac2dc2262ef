package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"engram/backend/dirarchive"
	"engram/backend/osindex"
	"engram/backend/osindex/ostest"
	"engram/backend/s3archive"
	"engram/model"
	"engram/query"
	"engram/query/querytest"
)

// archivedEvent is the full event behind a document of the suite's data
// set, as the archive holds it: NewIndexDoc of it gives the document back.
func archivedEvent(d *model.IndexDoc) []byte {
	ctx := map[string]any{"sessionId": d.SessionID}
	for k, v := range map[string]string{"userId": d.UserID, "agentId": d.AgentID, "turnId": d.TurnID, "traceId": d.TraceID, "tenantId": d.TenantID, "source": d.Source} {
		if v != "" {
			ctx[k] = v
		}
	}
	e := map[string]any{
		"eventId": d.EventID, "timestamp": d.Timestamp, "type": d.EventType, "context": ctx,
		"input":           map[string]any{"text": d.Summary, "embedding": d.Embedding, "structured": d.Structured},
		"internalState":   map[string]any{"confidence": d.Confidence},
		"evaluation":      map[string]any{"rewardScore": d.RewardScore, "selfAssessedQuality": 0.5},
		"importanceScore": d.ImportanceScore, "tags": d.Tags, "objectStorageKey": d.ObjectStorageKey,
	}
	if d.Tool != "" {
		e["action"] = map[string]any{"tool": d.Tool}
	}
	if d.Success != nil || d.LatencyMs != nil {
		r := map[string]any{"output": "done"}
		if d.Success != nil {
			r["success"] = *d.Success
		}
		if d.LatencyMs != nil {
			r["latencyMs"] = *d.LatencyMs
		}
		e["result"] = r
	}
	b, _ := json.Marshal(e)
	return b
}

// deployment is the source system's: its index (its own mapping, its
// documents without engram's extension fields, behind an alias as the
// migration recipe has it) and the archive of the full events.
type deployment struct {
	t          *testing.T
	url        string
	old, alias string
	archive    *dirarchive.Store
	written    []*model.IndexDoc // full documents, in writing order
}

// newDeployment is a CLI whose data directory holds the deployment's
// archive, and the deployment's index (the source system's mapping) behind
// its alias, empty, on the cluster at u.
func newDeployment(t *testing.T, u, prefix string) (*cli, *deployment) {
	c := newCLI(t)
	c.env["OPENSEARCH_URL"] = u
	ar, err := dirarchive.Open(filepath.Join(c.data, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	dep := &deployment{t: t, url: u, old: ostest.Index(t, prefix), archive: ar}
	dep.alias = dep.old + "-current"
	ostest.MustAdmin(t, u, "PUT", "/"+dep.old, ostest.SourceIndexBody)
	ostest.MustAdmin(t, u, "POST", "/_aliases", fmt.Sprintf(`{"actions":[{"add":{"index":%q,"alias":%q}}]}`, dep.old, dep.alias))
	return c, dep
}

// write archives docs' events and indexes them as the source worker does:
// index actions, no extension fields, its own extra fields.
func (dep *deployment) write(docs []*model.IndexDoc) {
	for _, d := range docs {
		if _, err := dep.archive.Put(context.Background(), d.ObjectStorageKey, archivedEvent(d)); err != nil {
			dep.t.Fatal(err)
		}
	}
	dep.bulk(docs)
	dep.written = append(dep.written, docs...)
}

// bulk indexes docs as the source worker does.
func (dep *deployment) bulk(docs []*model.IndexDoc) {
	t := dep.t
	var b bytes.Buffer
	for _, d := range docs {
		src, _ := json.Marshal(d)
		var m map[string]any
		_ = json.Unmarshal(src, &m)
		for f := range osindex.ExtensionFields() {
			delete(m, f)
		}
		m["retrieval_priority"], m["reinforcement_score"] = 0.5, 0
		m["embedding_meta"] = map[string]any{"model": "stub", "dimension": 8}
		src, _ = json.Marshal(m)
		fmt.Fprintf(&b, `{"index":{"_id":%q}}`+"\n%s\n", d.EventID, src)
	}
	data := ostest.MustAdmin(t, dep.url, "POST", "/"+dep.old+"/_bulk?refresh=true", b.String())
	if bytes.Contains(data, []byte(`"errors":true`)) {
		t.Fatalf("bulk: %s", data)
	}
}

// TestSourceDeployment is the upgrade of a deployment the source system
// wrote (docs/deployment.md) end to end against the real cluster:
// on the source system's index, filters on extension fields warn, a turn
// comes from the archive, reindex --into builds the engram-shaped index
// (refusing the swap while an event is missing from it), the alias moves in
// one request with the old index kept, and then every filter of the query
// suite answers on the new index as on one engram wrote.
func TestSourceDeployment(t *testing.T) {
	u := ostest.URL(t)
	now := time.Now()
	docs := querytest.Generate(now, querytest.Size)
	// Held back: written during the reindex (recent ones, caught up) and
	// one straggler stamped more than a day before the run (not caught
	// up: the catch-up lists from the day an hour before the start).
	var base, late, straggler []*model.IndexDoc
	for i, d := range docs {
		ts, _ := model.ParseTimestamp(d.Timestamp)
		switch {
		case len(late) < 4 && now.Sub(ts) < 40*time.Minute && i%2 == 0:
			late = append(late, d)
		case len(straggler) == 0 && now.Sub(ts) > 26*time.Hour && i > 20:
			straggler = append(straggler, d)
		default:
			base = append(base, d)
		}
	}
	if len(late) == 0 || len(straggler) == 0 {
		t.Fatalf("data set: %d late, %d straggler", len(late), len(straggler))
	}
	c, dep := newDeployment(t, u, "engram-srcdep-")
	dep.write(base)
	osFlags := []string{"--index", "opensearch", "--opensearch-index", dep.alias}
	cmd := func(args ...string) (string, string, int) {
		return c.run("", append(append(args[:1:1], osFlags...), args[1:]...)...)
	}

	// 1. The warnings, with the numbers; stdout stays what it was.
	n := len(base)
	out, stderr, code := cmd("search", "tool:search")
	want := fmt.Sprintf("engram: warning: tool: %d of %d documents have no tool field — written without engram's extensions; see engram reindex --into", n, n)
	if code != 0 || !strings.Contains(stderr, want) || out != "" {
		t.Fatalf("search tool:search: code %d\nstdout %q\nstderr %s\nwant %s", code, out, stderr, want)
	}
	// latency>5 matches no document without latency_ms: nothing on stdout
	// but the two warnings on stderr.
	out, stderr, code = cmd("search", "--json", "type:tool_result", "-success:false", "latency>5")
	if code != 0 || !strings.Contains(stderr, "success: ") || !strings.Contains(stderr, "latency: ") || out != "" {
		t.Fatalf("search --json: code %d, stderr %s, stdout %d bytes", code, stderr, len(out))
	}
	out, stderr, _ = cmd("search", "--json", "type:tool_result", "-success:false")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d model.IndexDoc
		if err := json.Unmarshal([]byte(line), &d); err != nil || d.EventType != model.TypeToolResult {
			t.Fatalf("--json output is not clean: %q (%v); stderr %s", line, err, stderr)
		}
	}
	if _, stderr, _ = cmd("search", "type:tool_result session:sess-1"); strings.Contains(stderr, "warning") {
		t.Errorf("filters on the source system's own fields warn: %s", stderr)
	}

	// 2. A turn from the archive: the causal chain of the full documents.
	var key string
	var members []*model.IndexDoc
	for _, d := range base {
		if d.TurnID == "" {
			continue
		}
		var m []*model.IndexDoc
		for _, x := range docs {
			if x.TurnKey() == d.TurnID {
				m = append(m, x)
			}
		}
		if len(m) >= 3 && !slices.ContainsFunc(m, func(x *model.IndexDoc) bool { return !slices.Contains(base, x) }) {
			key, members = d.TurnID, m
			break
		}
	}
	if key == "" {
		t.Fatal("no turn of three events in the data set")
	}
	query.SortCausal(members)
	anchor := members[len(members)-1].EventID
	out, stderr, code = cmd("turn", "--json", anchor)
	if code != 0 || !strings.Contains(stderr, "from the archive") || !strings.Contains(stderr, fmt.Sprintf("%d belong to the turn", len(members))) {
		t.Fatalf("turn %s: code %d, stderr %s", anchor, code, stderr)
	}
	t.Logf("engram turn %s:\n%s", anchor, stderr)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d model.IndexDoc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("turn --json: %q: %v", line, err)
		}
		if d.TurnID != key {
			t.Errorf("turn member %s: turn_id %q from the archive, want %q", d.EventID, d.TurnID, key)
		}
		got = append(got, d.EventID)
	}
	var wantIDs []string
	for _, d := range members {
		wantIDs = append(wantIDs, d.EventID)
	}
	if !slices.Equal(got, wantIDs) {
		t.Errorf("turn of %s from the archive = %v, want %v", anchor, got, wantIDs)
	}
	if _, stderr, code = cmd("turn", key); code == 0 || !strings.Contains(stderr, "engram turn EVENT_ID") {
		t.Errorf("turn by a turnId the index lacks: code %d, stderr %s", code, stderr)
	}

	// 3. reindex --into: events written meanwhile are caught up; the
	// straggler (stamped hours before) is not, so the swap is refused.
	into := ostest.Index(t, "engram-srcdep-new-")
	// An alias that can never be swapped (an index's name) fails first.
	_, stderr, code = cmd("reindex", "--into", into, "--swap-alias", dep.old)
	if st, _ := ostest.Admin(t, u, "HEAD", "/"+into, ""); code == 0 || st != 404 || !strings.Contains(stderr, "is an index, not an alias") {
		t.Fatalf("--swap-alias onto an index's name: code %d, new index HEAD %d, stderr %s", code, st, stderr)
	}
	beforeCatchUp = func() { dep.write(append(slices.Clone(late), straggler...)) }
	defer func() { beforeCatchUp = nil }()
	_, stderr, code = cmd("reindex", "--into", into, "--swap-alias", dep.alias)
	if code == 0 || !strings.Contains(stderr, "not swapping") || !strings.Contains(stderr, "1 of the old index's documents are not in the new one") ||
		!strings.Contains(stderr, fmt.Sprintf("reindex into opensearch %s/%s: %d objects, %d created", u, into, n, n)) ||
		!strings.Contains(stderr, fmt.Sprintf(", %d created,", len(late))) {
		t.Fatalf("reindex with a straggler: code %d, stderr %s", code, stderr)
	}
	t.Logf("engram reindex, refused:\n%s", stderr)
	// The indices the alias names (its own name contains dep.old).
	aliasOf := func() string {
		var m map[string]any
		_ = json.Unmarshal(ostest.MustAdmin(t, u, "GET", "/_alias/"+dep.alias, ""), &m)
		return strings.Join(slices.Sorted(maps.Keys(m)), " ")
	}
	if a := aliasOf(); a != dep.old {
		t.Fatalf("alias after a refused swap: %s", a)
	}
	// Run again: the history pass finds the straggler, the swap goes.
	beforeCatchUp = nil
	_, stderr, code = cmd("reindex", "--into", into, "--swap-alias", dep.alias)
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("alias %s now names %s alone (it named %s)", dep.alias, into, dep.old)) ||
		!strings.Contains(stderr, ", 1 created,") {
		t.Fatalf("reindex: code %d, stderr %s", code, stderr)
	}
	t.Logf("engram reindex:\n%s", stderr)
	if a := aliasOf(); a != into {
		t.Fatalf("alias after the swap: %s", a)
	}
	if code, _ := ostest.Admin(t, u, "HEAD", "/"+dep.old, ""); code != 200 {
		t.Errorf("old index after the swap: HEAD %d, want it kept", code)
	}

	// 4. The alias now reads the engram-shaped index: no warnings, and
	// the suite's checks answer as on an index engram wrote.
	if out, stderr, code = cmd("search", "tool:search"); code != 0 || strings.Contains(stderr, "warning") || out == "" {
		t.Errorf("search tool:search after the upgrade: code %d, stderr %s, stdout %q", code, stderr, out)
	}
	r, err := osindex.OpenReader(context.Background(), osindex.Config{URLs: []string{u}, Index: dep.alias, Dimension: model.StubDimension}, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if cov, err := r.Coverage(context.Background()); err != nil || cov.Partial() || cov.Total != int64(len(docs)) {
		t.Errorf("coverage after the upgrade: %+v, %v", cov, err)
	}
	t.Logf("the checks begin %s after the data set's now", time.Since(now).Round(time.Millisecond))
	querytest.CheckRebuilt(t, r, dep.written)
}

// TestArchiveTurnCost measures an archive-backed turn at its bound: a busy
// session with 600 documents within ±2 min of the selected event, on the
// real cluster and the real S3 server. The window is halved until at most
// DefaultTurnMaxEvents documents remain, so the reads stay bounded.
func TestArchiveTurnCost(t *testing.T) {
	u := ostest.URL(t)
	endpoint := ostest.Service(t, "ENGRAM_TEST_S3_ENDPOINT")
	ctx := context.Background()
	ar, err := s3archive.New(s3archive.Config{Endpoint: endpoint, Bucket: fmt.Sprintf("engram-turncost-%d", time.Now().UnixNano()),
		Region: os.Getenv("ENGRAM_TEST_S3_REGION"), AccessKey: os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"), SecretKey: os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"),
		PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ar.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	name := ostest.Index(t, "engram-turncost-")
	ostest.MustAdmin(t, u, "PUT", "/"+name, ostest.SourceIndexBody)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	types := []string{model.TypeUserInput, model.TypeAgentAction, model.TypeToolResult}
	var docs []*model.IndexDoc
	for i := range 600 { // 200 turns of 3, 0.4 s apart: 240 s in all
		ts := base.Add(time.Duration(i-300) * 400 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z")
		id := fmt.Sprintf("busy-%04d", i)
		key, _ := model.ArchiveKey(id, ts)
		docs = append(docs, &model.IndexDoc{EventID: id, Timestamp: ts, EventType: types[i%3], SessionID: "busy",
			Summary: "busy session", Embedding: []float64{1, 0, 0, 0, 0, 0, 0, 0}, Structured: json.RawMessage(`{}`),
			ObjectStorageKey: key, Tags: []string{}, TurnID: fmt.Sprintf("busy-turn-%03d", i/3), Tool: "kubectl"})
	}
	dep := &deployment{t: t, url: u, old: name}
	for _, d := range docs { // the archive: S3
		if _, err := ar.Put(ctx, d.ObjectStorageKey, archivedEvent(d)); err != nil {
			t.Fatal(err)
		}
	}
	dep.bulk(docs)
	r, err := osindex.OpenReader(ctx, osindex.Config{URLs: []string{u}, Index: name, Dimension: model.StubDimension}, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	anchor := docs[301] // the action of busy-turn-100
	var cold time.Duration
	for run := range 3 {
		at := &query.ArchiveTurns{Reader: r, Archive: ar}
		start := time.Now()
		turn, err := at.Find(ctx, anchor.EventID)
		d := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if len(turn.Docs) != 3 || turn.Read > query.DefaultTurnMaxEvents || turn.Window != query.DefaultTurnWindow/4 {
			t.Fatalf("busy turn: %d docs, %d read, window %s: %s", len(turn.Docs), turn.Read, turn.Window, turn.Searched)
		}
		start = time.Now()
		if _, err := at.Find(ctx, turn.Docs[0].EventID); err != nil {
			t.Fatal(err)
		}
		cached := time.Since(start)
		if run == 0 {
			cold = d
		}
		t.Logf("run %d: %s (%d documents in the window, %d archived events read from S3): %s; another member, cached: %s",
			run, turn.Searched, turn.Candidates, turn.Read, d.Round(time.Millisecond), cached)
	}
	t.Logf("bound: ±%s, at most %d documents; the first (cold) run took %s", query.DefaultTurnWindow, query.DefaultTurnMaxEvents, cold.Round(time.Millisecond))
}

// TestCompareSourceDeployment: diff --turn and session on the real
// cluster, through the alias of an index the source system wrote (no turn
// keys): both turns and the session's turns are found in the archive, and
// give the answers they give on an index engram wrote.
func TestCompareSourceDeployment(t *testing.T) {
	u := ostest.URL(t)
	c, dep := newDeployment(t, u, "engram-srccmp-")
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var docs []*model.IndexDoc
	for _, x := range []struct {
		id, typ, turn, tool, text string
		at                        time.Duration
		ok                        *bool
		lat                       int64
	}{
		{"cmp-a1", model.TypeUserInput, "t-a", "", "where is the café?", 0, nil, 0},
		{"cmp-a2", model.TypeAgentAction, "t-a", "search", "look it up", time.Second, nil, 0},
		{"cmp-a3", model.TypeToolResult, "t-a", "search", "found it", 2 * time.Second, ptrTo(true), 120},
		{"cmp-b1", model.TypeUserInput, "t-b", "", "where is the café now?", 30 * time.Second, nil, 0},
		{"cmp-b2", model.TypeToolResult, "t-b", "search", "timed out", 35 * time.Second, ptrTo(false), 4000},
	} {
		ts := base.Add(x.at).Format("2006-01-02T15:04:05.000Z")
		key, _ := model.ArchiveKey(x.id, ts)
		d := &model.IndexDoc{EventID: x.id, Timestamp: ts, EventType: x.typ, SessionID: "sess-cmp", TurnID: x.turn, AgentID: "ag",
			Summary: x.text, Embedding: model.StubEmbedding(x.text, model.StubDimension), Structured: json.RawMessage(`{}`),
			ObjectStorageKey: key, Tags: []string{}, RewardScore: 0.5, Confidence: 0.5, Tool: x.tool, Success: x.ok}
		if x.lat > 0 {
			d.LatencyMs = ptrTo(x.lat)
		}
		docs = append(docs, d)
	}
	dep.write(docs)
	cmd := func(args ...string) (string, string, int) {
		return c.run("", append(append(args[:1:1], "--index", "opensearch", "--opensearch-index", dep.alias), args[1:]...)...)
	}

	// Two event ids, one of each turn: the turns come from the archive.
	out, stderr, code := cmd("diff", "--turn", "cmp-a2", "cmp-b1")
	if code != 0 {
		t.Fatalf("diff --turn: code %d, %s", code, stderr)
	}
	for _, want := range []string{
		"left   turn t-a  session sess-cmp", "3 events  outcome ok",
		"right  turn t-b  session sess-cmp", "2 events  outcome failed",
		"step 1  observation  differs", "where is the café{+ now+}?",
		"step 2  action  only in the left turn\n  left   cmp-a2  agent_action  tool search",
		"step 3  outcome  differs", "latency_ms   120   4000   +3880 (+3233%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --turn: missing %q in\n%s", want, out)
		}
	}
	// Two events: each read from the archive, fields the index lacks too.
	out, stderr, code = cmd("diff", "cmp-a3", "cmp-b2")
	if code != 0 || !strings.Contains(out, "left   cmp-a3  tool_result") || !strings.Contains(out, "from the archive") ||
		!strings.Contains(out, "~ result.success ") || !strings.Contains(out, "true → false") || !strings.Contains(out, "latency_ms  120   4000") {
		t.Errorf("diff: code %d, %s\n%s", code, stderr, out)
	}

	out, stderr, code = cmd("session", "--json", "sess-cmp")
	var s struct {
		Turns []struct {
			Key     string `json:"turn_key"`
			Events  int
			Outcome string
			Idle    int64 `json:"idle_before_ms"`
		} `json:"turns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("session --json: code %d, %s\n%s", code, stderr, out)
	}
	if !strings.Contains(stderr, "turns from the archive") || len(s.Turns) != 2 ||
		s.Turns[0].Key != "t-a" || s.Turns[0].Events != 3 || s.Turns[0].Outcome != "ok" ||
		s.Turns[1].Key != "t-b" || s.Turns[1].Events != 2 || s.Turns[1].Outcome != "failed" || s.Turns[1].Idle != 28000 {
		t.Errorf("session: %+v, stderr %s", s, stderr)
	}
	out, _, code = cmd("session", "sess-cmp")
	if code != 0 || !strings.Contains(out, "session sess-cmp  ·  2 turns") || strings.Index(out, "t-a ") > strings.Index(out, "t-b ") ||
		!strings.Contains(out, "cmp-a2  agent_action  search") {
		t.Errorf("session: code %d\n%s", code, out)
	}
}
