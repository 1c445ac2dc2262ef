package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Problem classifies what went wrong talking to Kafka.
type Problem int

// The problems Check and the producers tell apart.
const (
	problemOther        Problem = iota
	problemUnreachable          // no connection to the broker
	problemTLS                  // the TLS handshake or a certificate failed
	problemSASL                 // the broker refused the SASL authentication
	ProblemMissingTopic         // a topic does not exist (never auto-created)
	problemTimeout              // the broker did not answer in time
)

func (p Problem) String() string {
	switch p {
	case problemUnreachable:
		return "unreachable"
	case problemTLS:
		return "TLS failure"
	case problemSASL:
		return "SASL refused"
	case ProblemMissingTopic:
		return "missing topic"
	case problemTimeout:
		return "timeout"
	}
	return "error"
}

// Error is a Kafka failure explained: which broker(s), what kind, the cause
// and the likely fix, printed on one line.
type Error struct {
	Broker  string   // the broker address, or the seed list
	Problem Problem  // what kind of failure
	Topics  []string // the missing topics, for ProblemMissingTopic
	Err     error    // the cause
	Fix     string   // what to check or do
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kafka %s: ", e.Broker)
	switch e.Problem {
	case ProblemMissingTopic:
		if len(e.Topics) == 1 {
			fmt.Fprintf(&b, "topic %q does not exist", e.Topics[0])
		} else {
			fmt.Fprintf(&b, "topics %q do not exist", e.Topics)
		}
	default:
		b.WriteString(e.Problem.String())
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(oneLine(e.Err.Error()))
		}
	}
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsProblem reports whether err is an *Error of kind p.
func IsProblem(err error, p Problem) bool {
	var e *Error
	return errors.As(err, &e) && e.Problem == p
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// explain turns a client error into an *Error for broker (an address or
// the seed list), or returns nil for nil.
func (c Config) explain(broker string, err error) error {
	if err == nil {
		return nil
	}
	var ke *Error
	if errors.As(err, &ke) {
		return err
	}
	e := &Error{Broker: broker, Err: err}
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		recHdr     tls.RecordHeaderError
		alert      tls.AlertError
		verifyErr  *tls.CertificateVerificationError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		tlsInError = strings.Contains(err.Error(), "tls: ") || strings.Contains(err.Error(), "x509: ")
	)
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		e.Problem = problemSASL
		e.Fix = fmt.Sprintf("check KAFKA_SASL_USERNAME (%q), KAFKA_SASL_PASSWORD and KAFKA_SASL_MECHANISM (%s: one the listener enables?)", c.SASL.User, c.SASL.Mechanism)
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verifyErr),
		errors.As(err, &recHdr), errors.As(err, &alert), tlsInError:
		e.Problem = problemTLS
		msg := err.Error()
		switch {
		case errors.As(err, &recHdr):
			e.Fix = "the listener does not speak TLS: use its TLS port, or turn TLS off (KAFKA_SSL)"
		case errors.As(err, &hostname):
			e.Fix = "the broker certificate does not name this host: connect by a name it lists, or set the TLS server name"
		case errors.As(err, &unknownCA):
			e.Fix = "the broker certificate is not signed by the CA given (KAFKA_CA_CERT / CA file) or the system roots"
		case errors.As(err, &invalid):
			e.Fix = "the broker certificate is not valid (expired, or not for a server)"
		case errors.As(err, &verifyErr):
			e.Fix = "the broker certificate does not verify against the CA given (KAFKA_CA_CERT / CA file)"
		case strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"),
			strings.Contains(msg, "unknown certificate authority"), strings.Contains(msg, "certificate unknown"):
			e.Fix = "the broker wants a client certificate signed by a CA it trusts: check KAFKA_ACCESS_CERT and KAFKA_ACCESS_KEY"
		default:
			e.Fix = "check the CA (KAFKA_CA_CERT), the client certificate and key (KAFKA_ACCESS_CERT, KAFKA_ACCESS_KEY) and that the listener speaks TLS"
		}
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		e.Problem = ProblemMissingTopic
		e.Fix = "topics are never auto-created: create it first (CreateTopics / the create-topics command)"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kerr.RequestTimedOut):
		e.Problem = problemTimeout
		e.Fix = "no answer in time: is the broker up and reachable (KAFKA_BROKERS)?"
	case errors.As(err, &dnsErr):
		e.Problem = problemUnreachable
		e.Fix = "the broker host name does not resolve: check KAFKA_BROKERS"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.As(err, &opErr) && opErr.Op == "dial":
		e.Problem = problemUnreachable
		e.Fix = "is Kafka running there, and is KAFKA_BROKERS right?"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// A broker drops the connection on a request it cannot read: TLS
		// or SASL expected but not used.
		e.Problem = problemOther
		switch {
		case !c.TLS.on():
			e.Fix = "the broker closed the connection: if its listener expects TLS (or SASL), set KAFKA_SSL=true (or KAFKA_SASL_MECHANISM)"
		case c.SASL.Mechanism == "":
			e.Fix = "the broker closed the connection: if its listener expects SASL, set KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD"
		default:
			e.Fix = "the broker closed the connection: check the listener's security protocol"
		}
	}
	return e
}

// dialCheck opens one connection to broker as the client would (TCP, then
// the TLS handshake when TLS is on) and closes it. It tells an unreachable
// broker from a TLS failure before any Kafka request is made.
func (c Config) dialCheck(ctx context.Context, broker string) error {
	d := &net.Dialer{Timeout: c.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", broker)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error{Broker: broker, Problem: problemUnreachable, Err: err, Fix: "no TCP connection in time: is Kafka running there, and is KAFKA_BROKERS right?"}
		}
		return c.explain(broker, err)
	}
	defer conn.Close()
	if !c.TLS.on() {
		return nil
	}
	tc, err := c.TLS.config()
	if err != nil {
		return err
	}
	if tc.ServerName == "" {
		host, _, _ := net.SplitHostPort(broker)
		tc.ServerName = host
	}
	tconn := tls.Client(conn, tc)
	hctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	defer cancel()
	if err := tconn.HandshakeContext(hctx); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			// A plaintext Kafka listener reads the ClientHello as a
			// request far too large and hangs up.
			return &Error{Broker: broker, Problem: problemTLS, Err: err,
				Fix: "the listener hung up in the TLS handshake: it probably does not speak TLS (use its TLS port, or turn TLS off: KAFKA_SSL)"}
		}
		return c.explain(broker, err)
	}
	// With TLS 1.3 a refused client certificate shows only on the first
	// read; a short one surfaces it (a timeout here means all is well).
	_ = tconn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var one [1]byte
	if _, err := tconn.Read(one[:]); err != nil {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, io.EOF) {
			return c.explain(broker, err)
		}
	}
	return nil
}

// Transient says whether the failure may pass by itself (the ingest
// pipeline retries such failures, and reports them as an outage meanwhile):
// a broker that cannot be reached or does not answer in time.
func (e *Error) Transient() bool {
	return e.Problem == problemUnreachable || e.Problem == problemTimeout
}

// NoGroup reports whether err says the consumer group does not exist: no
// member has joined it yet, or it was deleted.
func NoGroup(err error) bool { return errors.Is(err, kerr.GroupIDNotFound) }

// Fatal says whether a failure of a running consumer or watch is one that
// retrying cannot fix (credentials, certificates, ACLs, a missing topic), so
// that a long-running command stops and says so rather than wait for ever.
// Everything else franz-go retries until the broker is back.
func Fatal(err error) bool {
	if err == nil {
		return false
	}
	var ke *Error
	if errors.As(err, &ke) {
		switch ke.Problem {
		case problemSASL, problemTLS, ProblemMissingTopic:
			return true
		}
	}
	return errors.Is(err, ErrClosed) ||
		errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID)
}
