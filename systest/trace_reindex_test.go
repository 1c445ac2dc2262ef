package systest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"testing"
	"time"
)

// TestReindexSpans: engram reindex with an OTLP endpoint exports one trace
// for the run, read back from the real Jaeger: experience.reindex, a
// experience.reindex.batch child per batch (600 events: 512 + 88), and
// under each batch its archive reads (experience.objectstore.get) and its
// one index write (experience.opensearch.index), with the backends named
// and the counts of the run and of each batch.
func TestReindexSpans(t *testing.T) {
	otlp, jaegerURL := os.Getenv("ENGRAM_TEST_OTLP_ENDPOINT"), os.Getenv("ENGRAM_TEST_JAEGER_URL")
	if otlp == "" || jaegerURL == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_REQUIRE_SERVICES=1 but ENGRAM_TEST_OTLP_ENDPOINT or ENGRAM_TEST_JAEGER_URL is not set")
		}
		t.Skip("set ENGRAM_TEST_OTLP_ENDPOINT and ENGRAM_TEST_JAEGER_URL (see .ci/services) to run against a real Jaeger")
	}
	bin, dir := engramBinary(t), t.TempDir()
	runEngram(t, bin, "ingest", "--data", dir, writeEvents(t, 600, fmt.Sprintf("rs%d-", time.Now().UnixNano())))
	service := fmt.Sprintf("engram-systest-%08x", rand.Uint32())
	runEngram(t, bin, "reindex", "--data", dir, "--otel-endpoint", otlp, "--otel-service-name", service)

	var spans []jSpan
	waitUntil(t, 30*time.Second, "the reindex trace in Jaeger", func() bool {
		spans = serviceSpans(jaegerURL, service)
		return len(spans) >= 7
	})
	byID, children := map[string]jSpan{}, map[string][]jSpan{}
	var root *jSpan
	for i, s := range spans {
		byID[s.SpanID] = s
		children[s.parent()] = append(children[s.parent()], s)
		if s.OperationName == "experience.reindex" {
			root = &spans[i]
		}
	}
	if root == nil || root.parent() != "" {
		t.Fatalf("no experience.reindex root among %d spans: %+v", len(spans), spans)
	}
	for k, want := range map[string]string{"cog.reindex.objects": "600", "cog.reindex.existing": "600",
		"cog.reindex.failed": "0", "cog.memory.index": "experience_events", "cog.index.backend": "sqlite"} {
		if got := root.tag(k); got != want {
			t.Errorf("root %s = %q, want %q", k, got, want)
		}
	}
	batches := children[root.SpanID]
	var objects []string
	for _, b := range batches {
		if b.OperationName != "experience.reindex.batch" {
			t.Errorf("root's child %s, want experience.reindex.batch", b.OperationName)
			continue
		}
		objects = append(objects, b.tag("cog.reindex.objects"))
		names := map[string]jSpan{}
		for _, c := range children[b.SpanID] {
			names[c.OperationName] = c
		}
		if get := names["experience.objectstore.get"]; get.tag("cog.objectstore.backend") != "dir" {
			t.Errorf("batch %s: objectstore.get %+v, want one with cog.objectstore.backend dir", b.SpanID, get)
		}
		if ix := names["experience.opensearch.index"]; ix.tag("cog.index.backend") != "sqlite" || ix.tag("cog.reindex.documents") != b.tag("cog.reindex.objects") {
			t.Errorf("batch %s (%s objects): opensearch.index %+v", b.SpanID, b.tag("cog.reindex.objects"), ix)
		}
	}
	sort.Strings(objects)
	if fmt.Sprint(objects) != "[512 88]" {
		t.Errorf("batches of %v objects, want [512 88]", objects)
	}
}

// jSpan is a span of Jaeger's query API with its tags.
type jSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s jSpan) tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// serviceSpans is every span Jaeger has of the traces of service.
func serviceSpans(base, service string) []jSpan {
	return jaegerSpans(base + "/api/traces?limit=20&lookback=1h&service=" + url.QueryEscape(service))
}

// jaegerSpans is every span of the traces a Jaeger query API URL answers
// with, nil until it answers.
func jaegerSpans(u string) []jSpan {
	resp, err := http.Get(u)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []jSpan `json:"spans"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil
	}
	var out []jSpan
	for _, tr := range body.Data {
		out = append(out, tr.Spans...)
	}
	return out
}
