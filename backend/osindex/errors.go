package osindex

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// Cause is an OpenSearch error object: type, reason and what caused it.
type Cause struct {
	Type     string `json:"type"`
	Reason   string `json:"reason"`
	CausedBy *Cause `json:"caused_by,omitempty"`
}

func (c *Cause) String() string {
	if c == nil {
		return ""
	}
	s := c.Type
	if c.Reason != "" {
		if s != "" {
			s += ": "
		}
		s += c.Reason
	}
	if c.CausedBy != nil && (c.CausedBy.Type != c.Type || c.CausedBy.Reason != c.Reason) {
		s += " (caused by " + c.CausedBy.String() + ")"
	}
	return oneLine(s)
}

// StatusError is an answer of OpenSearch with an error status to a whole
// request.
type StatusError struct {
	Op     string // "bulk experience_events", "create index x", ...
	Status int
	// Cause is the error object of the body; nil when the body was not one
	// (a proxy's HTML page, for instance): Body then holds its start.
	Cause *Cause
	Body  string
	html  bool // Body came from an HTML page (a proxy's), not OpenSearch
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("opensearch: %s: %d %s", e.Op, e.Status, http.StatusText(e.Status))
	switch {
	case e.Cause != nil:
		s += ": " + e.Cause.String()
	case e.Body != "":
		s += ": " + e.Body
	}
	return s
}

// Type is the OpenSearch error type ("" when the body had none).
func (e *StatusError) Type() string {
	if e.Cause == nil {
		return ""
	}
	return e.Cause.Type
}

// ItemError is the failure of one document of a _bulk request, as
// OpenSearch reported it.
type ItemError struct {
	ID     string
	Status int
	Cause  Cause
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("opensearch: document %s: %d %s", e.ID, e.Status, e.Cause.String())
}

// Type is the OpenSearch error type, e.g. "mapper_parsing_exception".
func (e *ItemError) Type() string { return e.Cause.Type }

// IsTransient reports whether err may go away by itself, so that the same
// request is worth sending again later: connection refused or reset, an
// unexpected end of the connection, a timeout, HTTP 429 and 5xx (of the
// whole request or of one _bulk item). A cancelled context is not
// transient; an expired deadline is.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return transientStatus(se.Status)
	}
	var ie *ItemError
	if errors.As(err, &ie) {
		return transientStatus(ie.Status)
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		closedIdle(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary || dns.IsTimeout
	}
	return false
}

// closedIdle: the server closed a kept-alive connection just as a request
// went out on it. net/http sends an idempotent request again by itself,
// but not a POST (_bulk, _msearch), and says so only in the text of an
// unexported error.
func closedIdle(err error) bool {
	return strings.Contains(err.Error(), "http: server closed idle connection")
}

func transientStatus(s int) bool {
	return s == http.StatusTooManyRequests || (s >= 500 && s != http.StatusNotImplemented)
}

// statusError builds the error of a non-2xx answer from its body.
func statusError(op string, status int, body []byte) *StatusError {
	e := &StatusError{Op: op, Status: status}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && len(v.Error) > 0 {
		var c Cause
		var s string
		switch {
		case json.Unmarshal(v.Error, &c) == nil && (c.Type != "" || c.Reason != ""):
			e.Cause = &c
			return e
		case json.Unmarshal(v.Error, &s) == nil:
			e.Cause = &Cause{Reason: s}
			return e
		}
	}
	e.Body = snippet(body)
	e.html = bytes.HasPrefix(bytes.TrimSpace(body), []byte("<"))
	return e
}

// snippet is the start of a body as one line, HTML tags dropped.
func snippet(body []byte) string {
	s := string(body)
	if strings.Contains(s, "<") {
		var b strings.Builder
		in := false
		for _, r := range s {
			switch {
			case r == '<':
				in = true
				b.WriteRune(' ')
			case r == '>':
				in = false
			case !in:
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	s = oneLine(s)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// oneLine folds runs of white space, newlines included, into one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// OpenError is a failure of Open: one line naming the URL, what went wrong
// and what to do about it. It wraps the underlying error.
type OpenError struct {
	URL  string
	What string // short cause: "connection refused", "401 Unauthorized", ...
	Hint string // the likely fix; may be empty
	Err  error
}

func (e *OpenError) Error() string {
	s := fmt.Sprintf("opensearch %s: %s", e.URL, e.What)
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return oneLine(s)
}

func (e *OpenError) Unwrap() error { return e.Err }

// openError explains err, met while talking to the cluster at u during
// Open (op says what Open was doing, for errors that need it).
func openError(u string, cfg *Config, op string, err error) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	e := &OpenError{URL: u, Err: err}
	var (
		se        *StatusError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		verifyErr *tls.CertificateVerificationError
		recErr    tls.RecordHeaderError
		dnsErr    *net.DNSError
		netErr    net.Error
	)
	switch {
	case errors.As(err, &se):
		e.What = fmt.Sprintf("%s: %d %s", op, se.Status, http.StatusText(se.Status))
		if d := se.detail(); d != "" {
			e.What += " (" + d + ")"
		}
		switch se.Status {
		case http.StatusUnauthorized:
			if cfg.Username == "" {
				e.Hint = "the cluster wants credentials: set OPENSEARCH_USERNAME/OPENSEARCH_PASSWORD"
			} else {
				e.Hint = fmt.Sprintf("check OPENSEARCH_USERNAME/PASSWORD (user %q was refused)", cfg.Username)
			}
		case http.StatusForbidden:
			e.Hint = fmt.Sprintf("user %q lacks a permission: it needs cluster monitor rights and read, write and manage rights on index %s", cfg.Username, cfg.Index)
		case http.StatusBadRequest:
			if strings.Contains(se.Body, "HTTP request was sent to HTTPS port") {
				e.Hint = "the server speaks TLS: use an https:// URL"
			}
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			e.Hint = "the cluster (or a proxy in front of it) is not ready; try again"
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		e.What = "connection refused"
		e.Hint = fmt.Sprintf("is OpenSearch running at %s?", u)
	case errors.As(err, &unknownCA):
		e.What = "TLS: certificate signed by an unknown authority"
		e.Hint = "set --opensearch-ca to the CA file (PEM) that signed the server's certificate"
	case errors.As(err, &hostErr):
		e.What = "TLS: " + hostErr.Error()
		e.Hint = "use the host name the certificate was issued for"
	case errors.As(err, &invalid):
		e.What = "TLS: " + invalid.Error()
		e.Hint = "the server's certificate is not valid (expired, or not meant for a server)"
	case errors.As(err, &verifyErr):
		e.What = "TLS: " + verifyErr.Error()
		e.Hint = "set --opensearch-ca to the CA file (PEM) that signed the server's certificate"
	case errors.As(err, &recErr) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		e.What = "TLS handshake failed: the server answered in plain HTTP"
		e.Hint = "use an http:// URL"
	case errors.As(err, &dnsErr):
		e.What = "cannot resolve host " + dnsErr.Name
		e.Hint = "check the host name in the URL"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		e.What = fmt.Sprintf("%s: no answer within %s", op, cfg.Timeout)
		e.Hint = fmt.Sprintf("is OpenSearch running and reachable at %s?", u)
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || closedIdle(err):
		e.What = "the server closed the connection"
		if strings.HasPrefix(u, "http://") {
			e.Hint = "if the server speaks TLS, use an https:// URL"
		}
	default:
		e.What = op + ": " + oneLine(err.Error())
	}
	return e
}

// detail is the OpenSearch reason of a StatusError, or a short body.
func (e *StatusError) detail() string {
	if e.Cause != nil {
		return e.Cause.String()
	}
	if e.html || len(e.Body) > 80 {
		return ""
	}
	return e.Body
}
