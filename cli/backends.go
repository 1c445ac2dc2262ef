package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"engram/backend/dirarchive"
	"engram/backend/osindex"
	"engram/backend/s3archive"
	"engram/backend/sqliteindex"
	"engram/backend/telemetry"
	"engram/ingest"
	"engram/ingest/embed"
	"engram/ingest/publish"
	"engram/model"
	"engram/query"

	"github.com/minio/minio-go/v7"
)

// archiveStore is an archive that can be written and read back.
type archiveStore interface {
	ingest.Archive
	ingest.ArchiveReader
}

// indexStore is an index that can be written and looked up by id.
type indexStore interface {
	ingest.Index
	Get(ctx context.Context, eventID string) (*model.IndexDoc, error)
}

// backends are the stores one run uses, chosen independently: the archive
// (directory or S3) and the index (SQLite or OpenSearch). Notifications go
// to the data directory's topic files.
type backends struct {
	data     string
	archive  archiveStore
	index    indexStore
	topics   *publish.Topics
	embedder ingest.Embedder
	tel      *telemetry.Telemetry // nil: no spans
	closers  []func() error
}

func (b *backends) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i]())
	}
	return errors.Join(errs...)
}

// describe names the backends for people (never a secret).
func (b *backends) describe() string {
	return b.archive.Describe() + " + " + b.index.Describe()
}

// journalFile is the pending-events journal of a data directory: events
// archived whose indexing a crash may have cut short.
const journalFile = "pending.jsonl"

// pipeline is the configuration of an ingest pipeline over b: its stores,
// its notifications, its journal and the decoding every command shares.
func (b *backends) pipeline() ingest.Config {
	return ingest.Config{
		Archive: b.archive, Index: b.index, Publisher: b.topics, Embedder: b.embedder,
		Decode: decodeOptions(), Journal: ingest.OpenJournal(filepath.Join(b.data, journalFile)),
		Observer: b.observe(nil),
	}
}

// openBackends connects to what conf names. Each failure is one line that
// names the endpoint and the likely fix.
func openBackends(ctx context.Context, conf *resolved, e *env) (*backends, error) {
	b := &backends{data: dataDir(conf.get("data"), e.getenv)}
	emb, err := newEmbedder(conf)
	if err != nil {
		return nil, err
	}
	// First in, so that its flush runs last, after every pipeline.
	tel, stop, err := openTelemetry(ctx, conf, e)
	if err != nil {
		return nil, err
	}
	b.tel, b.closers = tel, append(b.closers, stop)
	b.embedder = emb
	if err := b.openArchive(ctx, conf, e); err != nil {
		return nil, err
	}
	if err := b.openIndex(ctx, conf, emb.Dimension(), e); err != nil {
		b.Close()
		return nil, err
	}
	t, err := publish.OpenTopics(filepath.Join(b.data, "topics"))
	if err != nil {
		b.Close()
		return nil, err
	}
	b.topics = t
	b.closers = append(b.closers, t.Close)
	return b, nil
}

func (b *backends) openArchive(ctx context.Context, conf *resolved, e *env) error {
	switch kind := conf.get("archive"); kind {
	case "dir", "":
		a, err := dirarchive.Open(filepath.Join(b.data, "archive"))
		b.archive = a
		return err
	case "s3":
		a, err := s3archive.New(s3Config(conf, e))
		if err == nil && conf.bool("s3.create_bucket") {
			err = a.EnsureBucket(ctx)
		}
		if err == nil {
			err = a.Check(ctx)
		}
		if err != nil {
			return errors.New(conf.redact(err.Error()))
		}
		b.archive = a
		return nil
	default:
		return fmt.Errorf("archive %q: choose dir or s3", kind)
	}
}

func s3Config(conf *resolved, e *env) s3archive.Config {
	c := s3archive.Config{
		Endpoint: conf.get("s3.endpoint"), Bucket: conf.get("s3.bucket"), Region: conf.get("s3.region"),
		AccessKey: conf.get("s3.access_key"), SecretKey: conf.get("s3.secret_key"),
		PathStyle: conf.bool("s3.path_style"), UseTLS: true,
		CAFile: conf.get("s3.ca_file"), InsecureSkipVerify: conf.bool("s3.insecure_skip_verify"),
		Logf: func(format string, args ...any) {
			fmt.Fprintln(e.stderr, "engram: "+safeLine(conf.redact(fmt.Sprintf(format, args...))))
		},
	}
	if conf.get("s3.tls") != "" {
		c.UseTLS = conf.bool("s3.tls")
	}
	return c
}

func (b *backends) openIndex(ctx context.Context, conf *resolved, dim int, e *env) error {
	switch kind := conf.get("index"); kind {
	case "sqlite", "":
		ix, err := sqliteindex.Open(filepath.Join(b.data, "index.db"), sqliteindex.Options{})
		if err != nil {
			return err
		}
		b.index = ix
		b.closers = append(b.closers, ix.Close)
		return nil
	case "opensearch":
		ix, err := osindex.Open(ctx, osConfig(conf, dim, e))
		if err != nil {
			return errors.New(conf.redact(err.Error()))
		}
		b.index = ix
		b.closers = append(b.closers, ix.Close)
		return nil
	default:
		return fmt.Errorf("index %q: choose sqlite or opensearch", kind)
	}
}

func osConfig(conf *resolved, dim int, e *env) osindex.Config {
	timeout, _ := time.ParseDuration(conf.get("opensearch.timeout"))
	var urls []string
	for _, u := range strings.Split(conf.get("opensearch.url"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return osindex.Config{
		URLs: urls, Username: conf.get("opensearch.username"), Password: conf.get("opensearch.password"),
		CAFile: conf.get("opensearch.ca_file"), InsecureSkipVerify: conf.bool("opensearch.insecure_skip_verify"),
		Index: conf.get("opensearch.index"), Timeout: timeout, Dimension: dim,
		KNNEngine: conf.get("opensearch.knn_engine"), Refresh: conf.get("opensearch.refresh"),
		Logf: func(format string, args ...any) {
			fmt.Fprintln(e.stderr, "engram: "+safeLine(conf.redact(fmt.Sprintf(format, args...))))
		},
	}
}

// embedderDimension is the configured vector length: embedder.dimension,
// else 8 for the stub and 1536 for an HTTP embedder.
func embedderDimension(conf *resolved) (int, error) {
	if d := conf.get("embedder.dimension"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("embedder.dimension %q: want a positive whole number", d)
		}
		return n, nil
	}
	if conf.get("embedder.kind") == "http" {
		return 1536, nil
	}
	return model.StubDimension, nil
}

func newEmbedder(conf *resolved) (ingest.Embedder, error) {
	dim, err := embedderDimension(conf)
	if err != nil {
		return nil, err
	}
	switch kind := conf.get("embedder.kind"); kind {
	case "stub", "":
		return embed.Stub{Dim: dim}, nil
	case "http":
		return embed.NewHTTP(embed.HTTPConfig{
			Endpoint: conf.get("embedder.endpoint"), Model: conf.get("embedder.model"),
			APIKey: conf.get("embedder.api_key"), Dimension: dim,
		})
	default:
		return nil, fmt.Errorf("embedder %q: choose stub or http", kind)
	}
}

// transient classifies errors of every backend: worth retrying or not.
func transient(err error) bool {
	if osindex.IsTransient(err) || ingest.IsTransient(err) {
		return true
	}
	resp := minio.ToErrorResponse(err)
	return resp.StatusCode == 429 || (resp.StatusCode >= 500 && resp.StatusCode != 501)
}

// openQueryReader opens the read side of the configured index, scoped to
// the configured tenant.
func openQueryReader(ctx context.Context, conf *resolved, e *env) (query.Reader, error) {
	opts := query.Options{Tenant: conf.get("tenant")}
	switch kind := conf.get("index"); kind {
	case "sqlite", "":
	case "opensearch":
		dim, err := embedderDimension(conf)
		if err != nil {
			return nil, err
		}
		r, err := osindex.OpenReader(ctx, osConfig(conf, dim, e), opts)
		if err != nil {
			return nil, errors.New(conf.redact(err.Error()))
		}
		return r, nil
	default:
		return nil, fmt.Errorf("index %q: choose sqlite or opensearch", kind)
	}
	path := filepath.Join(dataDir(conf.get("data"), e.getenv), "index.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no index at %s (run 'engram ingest' first, or pass --data)", path)
	}
	return sqliteindex.OpenReader(path, opts)
}
