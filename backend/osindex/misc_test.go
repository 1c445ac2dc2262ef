package osindex

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"engram/backend"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/querytest"
)

// TestNoKNN: on an index written without the k-NN plugin (AssumeNoKNN)
// Similar is backend.ErrUnavailable with a plain message; the rest works.
func TestReaderNoKNN(t *testing.T) {
	ix := openIndex(t, testIndex(t), func(c *Config) { c.AssumeNoKNN = true })
	docs := querytest.Generate(time.Now(), 30)
	writeDocs(t, ix, docs)
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	_, err := r.Similar(context.Background(), docs[0].EventID, 5)
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "similarity search needs the k-NN plugin on the cluster") {
		t.Errorf("Similar = %v, want ErrUnavailable naming the k-NN plugin", err)
	}
	got, err := r.Document(context.Background(), docs[0].EventID)
	if err != nil || len(got.Embedding) != len(docs[0].Embedding) {
		t.Errorf("Document = %v, %v", got, err)
	}
	if n, err := r.Count(context.Background()); err != nil || n != int64(len(docs)) {
		t.Errorf("Count = %d, %v", n, err)
	}
}

// TestErrors: errors are one line naming the URL; a cluster that went
// away is transient, a missing index is not.
func TestErrors(t *testing.T) {
	u := osURL(t)
	target, _ := url.Parse(u)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
	go func() { _ = srv.Serve(ln) }()
	proxy := "http://" + ln.Addr().String()
	name := testIndex(t)
	ix, err := Open(context.Background(), Config{URLs: []string{proxy}, Index: name, Dimension: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := newReader(t, ix, query.Options{})
	ctx := context.Background()

	// The index goes away: 404, not transient.
	mustAdmin(t, u, "DELETE", "/"+name, "")
	_, err = r.Recent(ctx, "", "", 10)
	if err == nil || IsTransient(err) || !strings.Contains(err.Error(), proxy) ||
		!strings.Contains(err.Error(), "index_not_found_exception") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Recent on a deleted index = %v (transient %v)", err, IsTransient(err))
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Errorf("Recent on a deleted index: no 404 StatusError in %v", err)
	}
	if _, err := r.Document(ctx, "x"); errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Document in a missing index = %v, want an error other than ErrNotFound", err)
	}

	// The cluster goes away: transient.
	srv.Close()
	for name, call := range map[string]func() error{
		"Recent":    func() error { _, err := r.Recent(ctx, "", "", 10); return err },
		"Tail":      func() error { _, err := r.Tail(ctx, "", 10); return err },
		"TailStart": func() error { _, err := r.TailStart(ctx); return err },
		"Turns":     func() error { _, err := r.Turns(ctx, "", "", 10); return err },
		"Turn":      func() error { _, err := r.Turn(ctx, "k"); return err },
		"Search":    func() error { _, err := r.Search(ctx, "memory", "", 10); return err },
		"Document":  func() error { _, err := r.Document(ctx, "x"); return err },
		"Count":     func() error { _, err := r.Count(ctx); return err },
	} {
		err := call()
		if err == nil || !IsTransient(err) || !strings.Contains(err.Error(), proxy) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s with the cluster gone = %v (transient %v)", name, err, IsTransient(err))
		}
	}
	_, err = r.Count(ctx)
	t.Logf("example: %v", err)
}

func TestCursors(t *testing.T) {
	p := pos{k: 1778000000123, seq: 42, id: "evt-\"x\"/é"}
	for _, kind := range []byte{kindRecent, kindTurns} {
		got, err := parsePos(posCursor(kind, p), kind)
		if err != nil || *got != p {
			t.Errorf("kind %c: %+v, %v", kind, got, err)
		}
	}
	s := p
	s.scored, s.score, s.raw = true, 1.2345678, json.Number("1.2345678")
	got, err := parsePos(posCursor(kindScored, s), kindScored)
	if err != nil || *got != s {
		t.Errorf("scored: %+v, %v", got, err)
	}
	if _, err := parsePos(posCursor(kindRecent, p), kindScored); err == nil {
		t.Error("a recent cursor read as a scored one")
	}
	if _, err := parsePos(posCursor(kindRecent, p), kindTurns); err == nil {
		t.Error("a recent cursor read as a turns one")
	}
	st := tailState{P: &p, L: p.k - 10000, Seen: []seen{{p.k - 5, "a"}, {p.k, p.id}}}
	back, err := parseTail(tailCursor(st))
	if err != nil || *back.P != p || back.L != st.L || len(back.Seen) != 2 || back.Seen[1] != st.Seen[1] {
		t.Errorf("tail: %+v, %v", back, err)
	}
	for _, c := range []query.Cursor{"!!", "AAAA", posCursor(kindRecent, p), encode(kindTail, []byte("not deflated")), encode(kindRecent, []byte(`{"k":1,"q":2,"i":"x","z":1}`))} {
		if _, err := parseTail(c); err == nil {
			t.Errorf("parseTail(%q) did not fail", c)
		}
		if c != posCursor(kindRecent, p) {
			if _, err := parsePos(c, kindRecent); err == nil {
				t.Errorf("parsePos(%q) did not fail", c)
			}
		}
	}
}

func TestBound(t *testing.T) {
	r := &Reader{seenCap: 3}
	p := pos{k: 100}
	st := r.bound(tailState{P: &p, L: 90, Seen: []seen{{85, "old"}, {95, "a"}, {97, "b"}, {97, "c"}, {100, "d"}}})
	// 4 in the window, cap 3: the group at 95 goes, the window starts at 96.
	if st.L != 96 || len(st.Seen) != 3 || st.Seen[0].id != "b" {
		t.Errorf("bound = %+v", st)
	}
	st = r.bound(tailState{P: &p, L: 90, Seen: []seen{{100, "a"}, {100, "b"}, {100, "c"}, {100, "d"}}})
	if st.L != 101 || len(st.Seen) != 0 {
		t.Errorf("bound of one large group = %+v", st)
	}
}

func TestCompare(t *testing.T) {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, c := range []struct {
		op   expr.Op
		x    float64
		want string
	}{
		{expr.OpGT, 500, `{"range":{"latency_ms":{"gte":501}}}`},
		{expr.OpGT, 500.5, `{"range":{"latency_ms":{"gte":501}}}`},
		{expr.OpGE, 500.5, `{"range":{"latency_ms":{"gte":501}}}`},
		{expr.OpLT, 500.5, `{"range":{"latency_ms":{"lte":500}}}`},
		{expr.OpLE, 500.5, `{"range":{"latency_ms":{"lte":500}}}`},
		{expr.OpEQ, 500.5, `{"match_none":{}}`},
		{expr.OpEQ, 500, `{"range":{"latency_ms":{"gte":500,"lte":500}}}`},
		{expr.OpGT, 1e300, `{"match_none":{}}`},
		{expr.OpLT, 1e300, `{"exists":{"field":"latency_ms"}}`},
		{expr.OpGT, -1e300, `{"exists":{"field":"latency_ms"}}`},
	} {
		if got := js(compare(fLatency, c.op, c.x)); got != c.want {
			t.Errorf("latency %v %v = %s, want %s", c.op, c.x, got, c.want)
		}
	}
	if got := js(compare(fImportance, expr.OpGT, 1e39)); got != `{"match_none":{}}` {
		t.Errorf("importance > 1e39 = %s", got)
	}
	if got := js(compare(fImportance, expr.OpLE, math.Inf(1))); got != `{"exists":{"field":"importance_score"}}` {
		t.Errorf("importance <= inf = %s", got)
	}
}

func TestFloat32Decimal(t *testing.T) {
	for _, x := range []float64{0.79, 0.1, 1, 0, 0.333} {
		if got := float32Decimal(float64(float32(x))); got != x {
			t.Errorf("float32Decimal(float32(%v)) = %v", x, got)
		}
	}
}

// TestUnusualIDs: ids that need escaping in a URL path.
func TestUnusualIDs(t *testing.T) {
	ix := openIndex(t, testIndex(t), nil)
	var docs []*model.IndexDoc
	for i, id := range []string{"a/b", "c%d", "e?f", "g#h", "i j", "ü+é"} {
		d := tailDoc(0, i)
		d.EventID = id
		d.ObjectStorageKey = ""
		docs = append(docs, d)
	}
	writeDocs(t, ix, docs)
	if err := ix.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, ix, query.Options{})
	for _, d := range docs {
		got, err := r.Document(context.Background(), d.EventID)
		if err != nil || got.EventID != d.EventID {
			t.Errorf("Document(%q) = %v, %v", d.EventID, got, err)
		}
		if _, err := r.Turn(context.Background(), d.TurnKey()); err != nil {
			t.Errorf("Turn(%q): %v", d.TurnKey(), err)
		}
	}
}
