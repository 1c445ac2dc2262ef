package s3archive

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"

	"engram/ingest"
)

// Error is a failure to reach or use the bucket, explained on one line
// with the likely fix. It wraps the underlying error.
type Error struct {
	Msg string
	Err error
	// outage: the server, known to answer, closed a connection without
	// answering (it went away mid-request): worth retrying.
	outage bool
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Transient is true for an outage, else what ingest.IsTransient says of
// the underlying error.
func (e *Error) Transient() bool { return e.outage || ingest.IsTransient(e.Err) }

// s3Code returns the S3 error code and HTTP status of err, if it is a
// server's error answer.
func s3Code(err error) (string, int) {
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		return er.Code, er.StatusCode
	}
	var erp *minio.ErrorResponse
	if errors.As(err, &erp) && erp != nil {
		return erp.Code, erp.StatusCode
	}
	return "", 0
}

func isPreconditionFailed(err error) bool {
	code, status := s3Code(err)
	return code == "PreconditionFailed" || status == http.StatusPreconditionFailed
}

func isNotImplemented(err error) bool {
	code, status := s3Code(err)
	return code == "NotImplemented" || status == http.StatusNotImplemented
}

func isNotFound(err error) bool {
	code, status := s3Code(err)
	return code == "NoSuchKey" || (status == http.StatusNotFound && (code == "" || code == "NotFound"))
}

// explain turns err, from talking to the store, into a one-line *Error
// naming the endpoint and the likely fix. Context errors pass through.
func (s *Store) explain(err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) || errors.Is(err, context.Canceled) {
		return err
	}
	c := s.cfg
	where := s.Describe()
	ep := s.host
	msg := func(format string, args ...any) error {
		return &Error{Msg: where + ": " + oneLine(fmt.Sprintf(format, args...)), Err: err}
	}

	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return msg("connection refused: is the S3 server running at %s? (check --s3-endpoint / S3_ENDPOINT)", ep)
	case errors.As(err, &dnsErr):
		return msg("cannot resolve %q (%s): check the host in --s3-endpoint / S3_ENDPOINT", dnsErr.Name, dnsErr.Err)
	case errors.As(err, &hostErr):
		return msg("TLS: the certificate of %s is not valid for %q (%v): connect by a name the certificate covers", ep, hostErr.Host, hostErr)
	case errors.As(err, &unknownCA), errors.As(err, &certErr), errors.As(err, &invalidCert):
		return msg("TLS: cannot verify the certificate of %s (%v): set a CA bundle with --s3-ca (CAFile), or skip verification with --s3-insecure-skip-verify (testing only)", ep, rootCause(err))
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return msg("%s speaks plain HTTP, not HTTPS: use --s3-endpoint / S3_ENDPOINT=http://%s", ep, ep)
	case errors.As(err, &recordErr), strings.Contains(err.Error(), "malformed HTTP response"),
		strings.Contains(err.Error(), "HTTP request to an HTTPS server"):
		return msg("%s did not answer plain HTTP (it may speak HTTPS): use --s3-endpoint / S3_ENDPOINT=https://%s", ep, ep)
	case s.answered.Load() && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "Connection closed by foreign host")):
		// A server that answered before and now hangs up without an
		// answer (or mid-body: "use of closed network connection") is
		// going away (killed, restarting, a proxy in front
		// dropping it): retried, where "it may speak HTTPS" would fail
		// the event for good (a worker sent it to the rejected topic,
		// archived or not, never indexed).
		return &Error{Msg: where + ": " + oneLine(fmt.Sprintf("%s closed the connection without answering (the server went away mid-request)", ep)), Err: err, outage: true}
	case !s.secure && (errors.Is(err, io.EOF) || strings.Contains(err.Error(), "Connection closed by foreign host")):
		return msg("%s closed the connection without answering (it may speak HTTPS): if so, use --s3-endpoint / S3_ENDPOINT=https://%s", ep, ep)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return msg("no answer from %s within %s: check --s3-endpoint / S3_ENDPOINT and the network", ep, c.timeout())
	}

	code, status := s3Code(err)
	switch code {
	case "":
	case "InvalidAccessKeyId", "XAdminUserNotFound": // the latter from versitygw
		return msg("access key %q is not known to the server (%s): check --s3-access-key / S3_ACCESS_KEY_ID / AWS_ACCESS_KEY_ID", c.AccessKey, code)
	case "SignatureDoesNotMatch":
		return msg("the secret key is wrong for access key %q (SignatureDoesNotMatch): check S3_SECRET_ACCESS_KEY / AWS_SECRET_ACCESS_KEY / --s3-secret-key-file", c.AccessKey)
	case "AccessDenied", "AllAccessDisabled":
		return msg("access denied to bucket %q for access key %q (%s): check the credentials and the key's policy", c.Bucket, c.AccessKey, code)
	case "NoSuchBucket":
		return msg("bucket %q does not exist: create it (or pass --s3-create-bucket) or check --s3-bucket / S3_BUCKET", c.Bucket)
	case "RequestTimeTooSkewed":
		return msg("this machine's clock differs too much from the server's (RequestTimeTooSkewed): fix the clock")
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "InvalidRegion", "IllegalLocationConstraintException":
		return msg("wrong region %q for bucket %q (%s): check --s3-region / S3_REGION", c.Region, c.Bucket, code)
	case "InvalidBucketName":
		return msg("invalid bucket name %q: check --s3-bucket / S3_BUCKET", c.Bucket)
	default:
		return msg("%s (%s, HTTP %d)", rootCause(err), code, status)
	}
	return msg("%v", rootCause(err))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rootCause is err's message without the method and URL that net/http
// puts in front.
func rootCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
