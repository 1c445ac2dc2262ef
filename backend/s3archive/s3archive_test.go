package s3archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"engram/backend"
	"engram/ingest"
	"engram/ingest/archivetest"
)

// testConfig is the test server's configuration (without a bucket), or
// skips the test when there is none.
func testConfig(t testing.TB) Config {
	t.Helper()
	ep := os.Getenv("ENGRAM_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_TEST_S3_ENDPOINT is not set but ENGRAM_REQUIRE_SERVICES=1")
		}
		t.Skip("ENGRAM_TEST_S3_ENDPOINT not set (source .ci/services/.env): skipping S3 tests")
	}
	return Config{
		Endpoint:  ep,
		Region:    os.Getenv("ENGRAM_TEST_S3_REGION"),
		AccessKey: os.Getenv("ENGRAM_TEST_S3_ACCESS_KEY"),
		SecretKey: os.Getenv("ENGRAM_TEST_S3_SECRET_KEY"),
		PathStyle: true,
		Timeout:   20 * time.Second,
	}
}

// tlsConfig is the TLS test server's configuration, with its CA.
func tlsConfig(t testing.TB) Config {
	t.Helper()
	cfg := testConfig(t)
	ep, ca := os.Getenv("ENGRAM_TEST_S3_TLS_ENDPOINT"), os.Getenv("ENGRAM_TEST_S3_CA_FILE")
	if ep == "" || ca == "" {
		if os.Getenv("ENGRAM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ENGRAM_TEST_S3_TLS_ENDPOINT or ENGRAM_TEST_S3_CA_FILE is not set but ENGRAM_REQUIRE_SERVICES=1")
		}
		t.Skip("ENGRAM_TEST_S3_TLS_ENDPOINT / ENGRAM_TEST_S3_CA_FILE not set: skipping S3 TLS tests")
	}
	cfg.Endpoint, cfg.UseTLS, cfg.CAFile = ep, true, ca
	return cfg
}

func bucketName() string { return "engram-test-" + randomHex(6) }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newBucket creates a bucket for cfg with a random name, removed (with its
// objects) when the test ends, and returns a store opened on it.
func newBucket(t testing.TB, cfg Config) *Store {
	t.Helper()
	cfg.Bucket = bucketName()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Registered first: the bucket may exist even if the check fails.
	t.Cleanup(func() { removeBucket(t, s) })
	if err := s.EnsureBucket(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

func removeBucket(t testing.TB, s *Store) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs := s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Recursive: true})
	for e := range s.client.RemoveObjects(ctx, s.cfg.Bucket, objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("cleanup: remove %s: %v", e.ObjectName, e.Err)
	}
	if err := s.client.RemoveBucket(ctx, s.cfg.Bucket); err != nil && minio.ToErrorResponse(err).Code != "NoSuchBucket" {
		t.Errorf("cleanup: remove bucket %s: %v", s.cfg.Bucket, err)
	}
}

func TestContract(t *testing.T) {
	cfg := testConfig(t)
	archivetest.Run(t, func(t *testing.T) archivetest.Store {
		s := newBucket(t, cfg)
		if s.mode.Load() != condAtomic {
			t.Fatalf("the test server does not honour If-None-Match: * (mode %d)", s.mode.Load())
		}
		return s
	})
}

func TestContractTLS(t *testing.T) {
	cfg := tlsConfig(t)
	archivetest.Run(t, func(t *testing.T) archivetest.Store { return newBucket(t, cfg) })
}

// recorder keeps the headers of the requests that pass through it.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	puts []http.Header
	gets []http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/events/") {
		r.mu.Lock()
		r.gets = append(r.gets, req.Header.Clone())
		r.mu.Unlock()
	}
	if req.Method == http.MethodPut && !strings.HasSuffix(req.URL.Path, "/") && strings.Contains(strings.TrimPrefix(req.URL.Path, "/"), "/") {
		r.mu.Lock()
		r.puts = append(r.puts, req.Header.Clone())
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func TestPutHeadersAndMetadata(t *testing.T) {
	rec := &recorder{}
	cfg := testConfig(t)
	cfg.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec }
	s := newBucket(t, cfg)
	key, body := archivetest.Event("hdr-1", "2026-05-08T22:31:25Z", "headers", []float64{0.5}, 0.3)
	if stored, err := s.Put(testCtx(t), key, body); err != nil || !stored {
		t.Fatalf("Put = %v, %v", stored, err)
	}
	rec.mu.Lock()
	h := rec.puts[len(rec.puts)-1]
	rec.mu.Unlock()
	if h.Get("If-None-Match") != "*" {
		t.Errorf("PUT If-None-Match = %q, want *", h.Get("If-None-Match"))
	}
	if h.Get("Content-Md5") == "" {
		t.Error("PUT has no Content-MD5")
	}
	if sha := h.Get("X-Amz-Content-Sha256"); len(sha) != 64 {
		t.Errorf("PUT x-amz-content-sha256 = %q, want the payload's SHA-256", sha)
	}
	st, err := s.client.StatObject(testCtx(t), s.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Get(testCtx(t), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.ContentType != "application/json" || st.Size != int64(len(body)) || st.ETag != o.ETag || o.Size != st.Size {
		t.Errorf("stat = type %q size %d etag %q; Get etag %q size %d; want application/json, %d, equal ETags",
			st.ContentType, st.Size, st.ETag, o.ETag, o.Size, len(body))
	}
	if o, err := s.Get(testCtx(t), key, 10); err != nil || !o.Truncated || len(o.Body) != 10 {
		t.Errorf("Get(limit 10) = %v, %v", o, err)
	}
	rec.mu.Lock()
	if r := rec.gets[len(rec.gets)-1].Get("Range"); r != "bytes=0-9" {
		t.Errorf("Get(limit 10) sent Range %q, want bytes=0-9", r)
	}
	rec.mu.Unlock()
	if want := "s3 " + s.cfg.Bucket + "@" + s.host; s.Describe() != want {
		t.Errorf("Describe() = %q, want %q", s.Describe(), want)
	}
}

// corrupter flips one byte of the body of object PUTs after the client
// computed its checksums, as a faulty network or proxy might.
type corrupter struct{ next http.RoundTripper }

func (c corrupter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.Body != nil && strings.Contains(req.URL.Path, "/events/") {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		b[len(b)/2] ^= 0x20
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	return c.next.RoundTrip(req)
}

func TestCorruptedBodyIsRefused(t *testing.T) {
	cfg := testConfig(t)
	s := newBucket(t, cfg)
	cfg.Bucket = s.cfg.Bucket
	cfg.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { return corrupter{rt} }
	bad, err := open(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	key, body := archivetest.Event("corrupt-1", "2026-05-08T22:31:25Z", "integrity matters", nil, 0)
	if stored, err := bad.Put(testCtx(t), key, body); err == nil || stored {
		t.Fatalf("Put with a body damaged in transit = %v, %v; want the server to refuse it", stored, err)
	} else {
		t.Logf("refused as expected: %v", err)
	}
	if _, err := s.Get(testCtx(t), key, 0); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("after the refused PUT, Get = %v; want ErrNotFound", err)
	}
}

// noConditional makes the server look like one without conditional
// writes: it answers conditional PUTs itself with 200 as if it ignored
// the condition, or with 501 (refuse).
type noConditional struct {
	next   http.RoundTripper
	refuse bool
	seen   atomic.Int32
}

func (n *noConditional) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut || req.Header.Get("If-None-Match") == "" {
		return n.next.RoundTrip(req)
	}
	n.seen.Add(1)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	if n.refuse {
		body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented.</Message></Error>`
		return &http.Response{
			StatusCode: http.StatusNotImplemented, Status: "501 Not Implemented",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"application/xml"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: req,
		}, nil
	}
	// Ignore the condition: answer as if the PUT had overwritten.
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK",
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Etag": {`"d41d8cd98f00b204e9800998ecf8427e"`}},
		Body:   http.NoBody, Request: req,
	}, nil
}

func TestFallbackWithoutConditionalWrites(t *testing.T) {
	base := testConfig(t)
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "HeaderIgnored", true: "NotImplemented"}[refuse], func(t *testing.T) {
			nc := &noConditional{refuse: refuse}
			var mu sync.Mutex
			var logs []string
			cfg := base
			cfg.Logf = func(f string, a ...any) {
				mu.Lock()
				logs = append(logs, fmt.Sprintf(f, a...))
				mu.Unlock()
			}
			cfg.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { nc.next = rt; return nc }
			s := newBucket(t, cfg)
			if s.mode.Load() != condFallback {
				t.Fatalf("mode after the probe = %d, want fallback", s.mode.Load())
			}
			seen := nc.seen.Load()
			ctx := testCtx(t)
			key, body := archivetest.Event("fb-1", "2026-05-08T22:31:25Z", "fallback", nil, 0)
			_, other := archivetest.Event("fb-1", "2026-05-08T22:31:25Z", "different", nil, 0)
			for i, tc := range []struct {
				body   []byte
				stored bool
				conf   bool
			}{{body, true, false}, {body, false, false}, {other, false, true}} {
				stored, err := s.Put(ctx, key, tc.body)
				if stored != tc.stored || ingest.IsConflict(err) != tc.conf || (!tc.conf && err != nil) {
					t.Errorf("Put %d = %v, %v; want stored %v conflict %v", i, stored, err, tc.stored, tc.conf)
				}
			}
			if o, err := s.Get(ctx, key, 0); err != nil || !bytes.Equal(o.Body, body) {
				t.Errorf("Get after fallback puts = %v; want the first body", err)
			}
			if nc.seen.Load() != seen {
				t.Error("conditional PUTs were still sent after falling back")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(logs) != 1 || !strings.Contains(logs[0], "racy") {
				t.Errorf("logged %q; want one warning that the fallback is racy", logs)
			}
		})
	}
}

// freePort is a local port nothing listens on.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// wantOpenError opens cfg and checks that it fails fast with one line
// holding every part of want.
func wantOpenError(t *testing.T, cfg Config, want ...string) {
	t.Helper()
	start := time.Now()
	s, err := open(testCtx(t), cfg)
	if err == nil {
		t.Fatalf("Open(%v) succeeded (%s), want an error", cfg, s.Describe())
	}
	msg := err.Error()
	t.Logf("Open error: %s", msg)
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
	if cfg.SecretKey != "" && strings.Contains(msg, cfg.SecretKey) {
		t.Errorf("error %q shows the secret key", msg)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %v to fail", d)
	}
}

func TestOpenConnectionRefused(t *testing.T) {
	addr := freePort(t)
	wantOpenError(t, Config{Endpoint: "http://" + addr, Bucket: "bucket", AccessKey: "k", SecretKey: "sekrit", Region: "us-east-1"},
		"connection refused", "is the S3 server running at "+addr+"?")
}

func TestOpenUnknownHost(t *testing.T) {
	wantOpenError(t, Config{Endpoint: "no-such-host.invalid:9000", Bucket: "bucket", Region: "us-east-1", Timeout: 5 * time.Second},
		"no-such-host.invalid", "S3_ENDPOINT")
}

func TestOpenBadEndpointOrBucket(t *testing.T) {
	for _, cfg := range []Config{
		{Endpoint: "ftp://host:21", Bucket: "bucket"},
		{Endpoint: "http://host:9000/path", Bucket: "bucket"},
		{Endpoint: "host:9000", Bucket: ""},
	} {
		if _, err := open(testCtx(t), cfg); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%#v) = %v; want a one-line error", cfg, err)
		} else {
			t.Logf("%s", err)
		}
	}
}

func TestOpenBadCredentials(t *testing.T) {
	cfg := testConfig(t)
	s := newBucket(t, cfg)
	cfg.Bucket = s.cfg.Bucket

	bad := cfg
	bad.SecretKey = "not-the-secret"
	wantOpenError(t, bad, cfg.Endpoint, "SignatureDoesNotMatch", "S3_SECRET_ACCESS_KEY")

	bad = cfg
	bad.AccessKey = "nobody"
	wantOpenError(t, bad, cfg.Endpoint, `access key "nobody" is not known`, "S3_ACCESS_KEY_ID")
}

func TestOpenMissingBucket(t *testing.T) {
	cfg := testConfig(t)
	cfg.Bucket = bucketName()
	wantOpenError(t, cfg, cfg.Bucket, "does not exist: create it", "--s3-bucket")
}

func TestOpenPlainHTTPToTLSServer(t *testing.T) {
	cfg := tlsConfig(t)
	cfg.UseTLS, cfg.CAFile, cfg.Bucket = false, "", "bucket"
	wantOpenError(t, cfg, "https://")
}

func TestOpenTLSToPlainServer(t *testing.T) {
	cfg := testConfig(t)
	cfg.UseTLS, cfg.Bucket = true, "bucket"
	wantOpenError(t, cfg, "plain HTTP", "http://")
}

func TestOpenTLS(t *testing.T) {
	cfg := tlsConfig(t)
	s := newBucket(t, cfg) // opened with the CA
	if !s.secure {
		t.Fatal("TLS store is not secure")
	}
	cfg.Bucket = s.cfg.Bucket

	noCA := cfg
	noCA.CAFile = ""
	wantOpenError(t, noCA, "TLS", "certificate", "--s3-ca")

	insecure := noCA
	insecure.InsecureSkipVerify = true
	if _, err := open(testCtx(t), insecure); err != nil {
		t.Errorf("Open with InsecureSkipVerify: %v", err)
	}

	url := cfg
	url.Endpoint, url.UseTLS = "https://"+cfg.Endpoint, false
	if _, err := open(testCtx(t), url); err != nil {
		t.Errorf("Open with an https:// endpoint: %v", err)
	}

	badCA := cfg
	badCA.CAFile = os.DevNull
	wantOpenError(t, badCA, "no PEM certificate")
}

// BenchmarkPut writes ~1 KB objects from 8 goroutines per CPU (the work
// is waiting on the server, not computing).
func BenchmarkPut(b *testing.B) {
	s := newBucket(b, testConfig(b))
	filler := strings.Repeat("x", 800)
	var n atomic.Int64
	ctx := context.Background()
	b.SetBytes(1024)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("bench-%08d", n.Add(1))
			key, body := archivetest.Event(id, "2026-05-08T22:31:25Z", filler, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, 0.5)
			if stored, err := s.Put(ctx, key, body); err != nil || !stored {
				b.Errorf("Put(%s) = %v, %v", key, stored, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "objects/s")
}
