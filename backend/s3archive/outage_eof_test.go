package s3archive

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"engram/ingest"
	"engram/ingest/archivetest"
)

// hangUp is a transport that, once cut, fails every request as a server
// closing the connection without answering does.
type hangUp struct {
	next http.RoundTripper
	cut  atomic.Bool
	with error // io.EOF by default
}

func (h *hangUp) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.cut.Load() {
		err := h.with
		if err == nil {
			err = io.EOF
		}
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL, err)
	}
	return h.next.RoundTrip(r)
}

// A server that answered and then hangs up mid-run (killed, restarting) is
// an outage, retried: the fault-injection soak killed versitygw under two
// workers, a PUT came back as "closed the connection without answering (it
// may speak HTTPS)", permanent, and the worker sent a valid event to the
// rejected topic. Before any answer the same hang-up still says the
// endpoint may speak HTTPS, and is not retried.
func TestHangUpAfterAnAnswerIsAnOutage(t *testing.T) {
	base := testConfig(t)
	h := &hangUp{}
	cfg := base
	cfg.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { h.next = rt; return h }
	s := newBucket(t, cfg)
	h.cut.Store(true)
	key, body := archivetest.Event("hang-1", "2026-05-08T22:31:25Z", "hang up", nil, 0)
	_, err := s.Put(testCtx(t), key, body)
	if err == nil || !ingest.IsTransient(err) || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("Put after the server hung up: %v (transient %v); want a transient outage", err, ingest.IsTransient(err))
	}
	// Hung up while the body was being sent: the soak saw "readfrom tcp
	// …: write tcp …: use of closed network connection".
	h.with = &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
	if _, err = s.Put(testCtx(t), key, body); err == nil || !ingest.IsTransient(err) {
		t.Fatalf("Put after a hang-up mid-body: %v (transient %v); want a transient outage", err, ingest.IsTransient(err))
	}
	h.cut.Store(false)
	if _, err := s.Put(testCtx(t), key, body); err != nil {
		t.Fatalf("Put once the server is back: %v", err)
	}

	fresh := &hangUp{}
	fresh.cut.Store(true)
	cfg.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { fresh.next = rt; return fresh }
	cfg.Bucket = s.cfg.Bucket
	never, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = never.Check(testCtx(t))
	if err == nil || ingest.IsTransient(err) || !strings.Contains(err.Error(), "may speak HTTPS") {
		t.Fatalf("Check against a server that never answered: %v (transient %v); want the HTTPS hint, not transient", err, ingest.IsTransient(err))
	}
}
