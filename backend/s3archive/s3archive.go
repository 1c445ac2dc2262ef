package s3archive

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// probePrefix holds the short-lived objects of the conditional-write probe;
// List skips it.
const probePrefix = ".engram-probe/"

// maxRetries is how often a request is tried in normal operation.
const maxRetries = 4

// Conditional-write support of the server.
const (
	condUnknown  int32 = iota // not probed (no write permission): try, and fall back on 501
	condAtomic                // If-None-Match: * honoured
	condFallback              // HEAD then PUT (racy)
)

// Store is a write-once archive in one bucket. It is safe for concurrent
// use.
type Store struct {
	cfg    Config
	host   string
	secure bool
	client *minio.Client
	core   minio.Core
	// check is the client of the start-up check: one try per request, so
	// that a wrong endpoint fails fast.
	check *minio.Client

	mode         atomic.Int32
	fallbackOnce sync.Once
	// answered: the server has answered a request (Check passed), so it
	// speaks what the endpoint says; a connection it closes without an
	// answer later is an outage, not a wrong scheme.
	answered atomic.Bool
}

var (
	_ ingest.Archive       = (*Store)(nil)
	_ ingest.ArchiveReader = (*Store)(nil)
)

// open connects to the bucket and checks that it exists, that the
// credentials work and whether the server honours conditional writes.
// Errors are one line naming the endpoint and the likely fix.
func open(ctx context.Context, cfg Config) (*Store, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Check(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// New builds the store without talking to the server; Check (or
// EnsureBucket) does that.
func New(cfg Config) (*Store, error) {
	host, secure, err := cfg.hostAndTLS()
	if err != nil {
		return nil, &Error{Msg: err.Error(), Err: err}
	}
	s := &Store{cfg: cfg, host: host, secure: secure}
	if cfg.Bucket == "" {
		return nil, &Error{Msg: fmt.Sprintf("s3 %s: no bucket: set --s3-bucket / S3_BUCKET", host)}
	}
	if err := s3utils.CheckValidBucketName(cfg.Bucket); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("s3 %s: invalid bucket name %q (%v): check --s3-bucket / S3_BUCKET", host, cfg.Bucket, err), Err: err}
	}
	tr, err := s.transport()
	if err != nil {
		return nil, err
	}
	var rt http.RoundTripper = tr
	if cfg.wrapTransport != nil {
		rt = cfg.wrapTransport(rt)
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	newClient := func(retries int) (*minio.Client, error) {
		return minio.New(host, &minio.Options{
			Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
			Secure:       secure,
			Transport:    rt,
			Region:       cfg.Region,
			BucketLookup: lookup,
			MaxRetries:   retries,
		})
	}
	if s.client, err = newClient(maxRetries); err == nil {
		s.check, err = newClient(1)
	}
	if err != nil {
		return nil, &Error{Msg: oneLine(fmt.Sprintf("s3 %s: %v", s.Describe(), err)), Err: err}
	}
	s.core = minio.Core{Client: s.client}
	return s, nil
}

func (s *Store) transport() (*http.Transport, error) {
	cfg := s.cfg
	tr, err := minio.DefaultTransport(s.secure)
	if err != nil {
		return nil, err
	}
	t := cfg.timeout()
	tr.DialContext = (&net.Dialer{Timeout: t, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = t
	tr.ResponseHeaderTimeout = t
	tr.MaxIdleConnsPerHost = 64
	if !s.secure {
		if cfg.CAFile != "" && cfg.Logf != nil {
			cfg.Logf("s3: CA file %s ignored: %s is plain HTTP", cfg.CAFile, s.host)
		}
		return tr, nil
	}
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("s3 %s: CA bundle: %v", s.host, err), Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &Error{Msg: fmt.Sprintf("s3 %s: CA bundle %s holds no PEM certificate", s.host, cfg.CAFile)}
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	tr.TLSClientConfig.InsecureSkipVerify = cfg.InsecureSkipVerify
	return tr, nil
}

// Describe names the store for people: "s3 bucket@host:port".
func (s *Store) Describe() string { return "s3 " + s.cfg.Bucket + "@" + s.host }

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.cfg.Bucket }

// Check verifies that the bucket exists and the credentials may list it,
// then probes (once) whether the server honours If-None-Match on PUT.
func (s *Store) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	lctx, lcancel := context.WithCancel(ctx)
	if o, ok := <-s.check.ListObjects(lctx, s.cfg.Bucket, minio.ListObjectsOptions{MaxKeys: 1}); ok && o.Err != nil {
		lcancel()
		return s.explain(o.Err)
	}
	lcancel()
	if err := ctx.Err(); err != nil {
		return s.explain(err)
	}
	s.answered.Store(true)
	if s.mode.Load() != condUnknown {
		return nil
	}
	return s.probe(ctx)
}

// EnsureBucket creates the bucket if it is missing (for tests and demos),
// then runs Check.
func (s *Store) EnsureBucket(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	err := s.check.MakeBucket(tctx, s.cfg.Bucket, minio.MakeBucketOptions{Region: s.cfg.Region})
	if err != nil {
		if code, _ := s3Code(err); code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return s.explain(err)
		}
	}
	return s.Check(ctx)
}

// probe PUTs a probe object twice with If-None-Match: *: a server that
// honours it refuses the second. The probe is deleted afterwards.
func (s *Store) probe(ctx context.Context) error {
	key := probePrefix + "conditional-put-" + randomHex(8)
	body := []byte(`{"probe":"engram conditional write"}`)
	err := s.putIfAbsent(ctx, key, body)
	if err == nil {
		defer func() {
			_ = s.client.RemoveObject(context.WithoutCancel(ctx), s.cfg.Bucket, key, minio.RemoveObjectOptions{})
		}()
		err = s.putIfAbsent(ctx, key, body)
		if err == nil {
			s.useFallback("the server ignored If-None-Match: * (a second conditional PUT of a probe object succeeded)")
			return nil
		}
	}
	switch code, _ := s3Code(err); {
	case isPreconditionFailed(err):
		s.mode.Store(condAtomic)
	case isNotImplemented(err):
		s.useFallback("the server does not implement If-None-Match: * on PUT (" + code + ")")
	case code == "AccessDenied":
		// Read-only credentials: Put will find out if it is ever called.
	default:
		return s.explain(err)
	}
	return nil
}

func (s *Store) useFallback(why string) {
	s.mode.Store(condFallback)
	s.fallbackOnce.Do(func() {
		if s.cfg.Logf != nil {
			s.cfg.Logf("s3 %s: %s; falling back to HEAD-then-PUT, which is racy: two writers of one key at the same moment may both write", s.Describe(), why)
		}
	})
}

// Put writes body under key unless the key exists; see ingest.Archive.
func (s *Store) Put(ctx context.Context, key string, body []byte) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	if s.mode.Load() != condFallback {
		err := s.putIfAbsent(ctx, key, body)
		for try := 0; err != nil && isConditionalConflict(err) && try < 5; try++ {
			// AWS: another conditional write of this key is in flight.
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(time.Duration(50<<try) * time.Millisecond):
			}
			err = s.putIfAbsent(ctx, key, body)
		}
		switch {
		case err == nil:
			return true, nil
		case isPreconditionFailed(err):
			return false, s.compare(ctx, key, body)
		case isNotImplemented(err):
			s.useFallback("the server does not implement If-None-Match: * on PUT")
		default:
			return false, fmt.Errorf("archive %s: %w", key, s.explain(err))
		}
	}
	// Fallback: HEAD then PUT. Another writer may slip in between.
	_, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return false, s.compare(ctx, key, body)
	}
	if !isNotFound(err) {
		return false, fmt.Errorf("archive %s: %w", key, s.explain(err))
	}
	if err := s.put(ctx, key, body, false); err != nil {
		return false, fmt.Errorf("archive %s: %w", key, s.explain(err))
	}
	return true, nil
}

func isConditionalConflict(err error) bool {
	code, _ := s3Code(err)
	return code == "ConditionalRequestConflict"
}

func (s *Store) putIfAbsent(ctx context.Context, key string, body []byte) error {
	return s.put(ctx, key, body, true)
}

// put is a single-request PUT with Content-MD5 and the signed SHA-256 of
// the payload, both verified by the server.
func (s *Store) put(ctx context.Context, key string, body []byte, ifAbsent bool) error {
	md := md5.Sum(body)
	sh := sha256.Sum256(body)
	opts := minio.PutObjectOptions{
		ContentType: "application/json",
		// Not the streaming (chunked) signature: the whole payload's
		// SHA-256 goes in x-amz-content-sha256.
		DisableContentSha256: true,
		DisableMultipart:     true,
	}
	if ifAbsent {
		opts.SetMatchETagExcept("*") // If-None-Match: *
	}
	_, err := s.core.PutObject(ctx, s.cfg.Bucket, key, bytes.NewReader(body), int64(len(body)),
		base64.StdEncoding.EncodeToString(md[:]), hex.EncodeToString(sh[:]), opts)
	return err
}

// compare decides between duplicate and conflict for a key that exists.
func (s *Store) compare(ctx context.Context, key string, body []byte) error {
	old, err := s.Get(ctx, key, 0)
	if err != nil {
		return fmt.Errorf("archive %s exists but cannot be read: %w", key, err)
	}
	if model.SameEvent(old.Body, body) {
		return nil
	}
	return &ingest.ConflictError{Key: key}
}

// Get reads the object under key, at most limit bytes of it (all when
// limit <= 0), with a range request.
func (s *Store) Get(ctx context.Context, key string, limit int64) (*ingest.Object, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	opts := minio.GetObjectOptions{}
	if limit > 0 {
		if err := opts.SetRange(0, limit-1); err != nil {
			return nil, err
		}
	}
	rc, info, hdr, err := s.core.GetObject(ctx, s.cfg.Bucket, key, opts)
	if code, status := s3Code(err); limit > 0 && (code == "InvalidRange" || status == http.StatusRequestedRangeNotSatisfiable) {
		// An empty object has no byte 0.
		rc, info, hdr, err = s.core.GetObject(ctx, s.cfg.Bucket, key, minio.GetObjectOptions{})
	}
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%s: %w", key, backend.ErrNotFound)
		}
		return nil, fmt.Errorf("archive %s: %w", key, s.explain(err))
	}
	defer rc.Close()
	size := info.Size
	if total, ok := rangeTotal(hdr.Get("Content-Range")); ok {
		size = total
	}
	o := &ingest.Object{Key: key, Size: size, ETag: info.ETag, LastModified: info.LastModified}
	want := size
	if limit > 0 && size > limit {
		want, o.Truncated = limit, true
	}
	// Read at most want bytes even if the server ignored the range.
	if o.Body, err = io.ReadAll(io.LimitReader(rc, want)); err != nil {
		return nil, fmt.Errorf("archive %s: read: %w", key, s.explain(err))
	}
	if int64(len(o.Body)) != want {
		return nil, fmt.Errorf("archive %s: short read: %d of %d bytes", key, len(o.Body), want)
	}
	return o, nil
}

// rangeTotal reads the complete length from "bytes 0-99/1234".
func rangeTotal(cr string) (int64, bool) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(cr[i+1:]), 10, 64)
	return n, err == nil
}

// List calls fn for every key under prefix, in key order, paging through
// the listing. It stops at fn's first error and returns it.
func (s *Store) List(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range s.client.ListObjects(lctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.Err != nil {
			return fmt.Errorf("list %s: %w", prefix, s.explain(o.Err))
		}
		if strings.HasPrefix(o.Key, probePrefix) || strings.HasSuffix(o.Key, "/") {
			continue
		}
		if err := fn(o.Key, o.Size); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// checkKey refuses the keys the directory archive refuses too, so that
// both backends hold the same key space.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || !fs.ValidPath(key) {
		return fmt.Errorf("invalid archive key %s", model.Quote(key))
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
