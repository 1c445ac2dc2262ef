package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"engram/backend/dirarchive"
	"engram/backend/kafka"
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
	"golang.org/x/sys/unix"
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
	data    string
	archive archiveStore
	index   indexStore
	// publisher takes the notifications: Kafka when kafka.brokers is set
	// (kafkaCfg), else the topic files of the data directory (topicsDir).
	// A read-only opening has no publisher and no outbox.
	publisher ingest.Publisher
	kafkaCfg  *kafka.Config
	topicsDir string
	outbox    *ingest.Outbox
	embedder  ingest.Embedder
	tel       *telemetry.Telemetry // nil: no spans
	closers   []func() error
	readOnly  bool // opened by openReadBackends
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

// The journals of a data directory: events archived whose indexing a crash
// may have cut short, and notifications held until they are published.
const (
	journalFile = "pending.jsonl"
	outboxFile  = "outbox.jsonl"
)

// pipeline is the configuration of an ingest pipeline over b: its stores,
// its notifications, its journal and the decoding every command shares.
func (b *backends) pipeline() ingest.Config {
	return ingest.Config{
		Archive: b.archive, Index: b.index, Publisher: b.publisher, Embedder: b.embedder,
		Decode: decodeOptions(), Journal: ingest.OpenJournal(filepath.Join(b.data, journalFile)),
		Outbox: b.outbox, Observer: b.observe(nil),
	}
}

// openBackends connects to what conf names. Each failure is one line that
// names the endpoint and the likely fix.
func openBackends(ctx context.Context, conf *resolved, e *env) (*backends, error) {
	return openStores(ctx, conf, e, false)
}

// openReadBackends is openBackends for a command that only reads (verify):
// the index is opened read-only, so a missing one is said to be missing
// rather than created.
func openReadBackends(ctx context.Context, conf *resolved, e *env) (*backends, error) {
	return openStores(ctx, conf, e, true)
}

func openStores(ctx context.Context, conf *resolved, e *env, readOnly bool) (*backends, error) {
	b := &backends{data: dataDir(conf.Data, e.getenv), readOnly: readOnly}
	if !readOnly && (conf.Archive != "s3" || conf.Index != "opensearch") {
		if err := checkDataDir(b.data); err != nil {
			return nil, err
		}
	}
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
		_ = b.Close()
		return nil, err
	}
	if ix, ok := b.index.(*sqliteindex.DB); ok {
		ix.SetEmbedder(embedderName(conf))
	}
	if err := b.openPublisher(ctx, conf, readOnly); err != nil {
		_ = b.Close()
		return nil, err
	}
	if readOnly {
		return b, nil
	}
	b.outbox = ingest.OpenOutbox(filepath.Join(b.data, outboxFile))
	b.closers = append(b.closers, b.outbox.Close)
	return b, nil
}

// openPublisher connects the notifications; read-only, it only learns where
// they are (nothing is published, the topic files are not opened for
// writing).
func (b *backends) openPublisher(ctx context.Context, conf *resolved, readOnly bool) error {
	kcfg, ok, err := kafkaConfig(conf)
	if err != nil {
		return err
	}
	b.topicsDir = filepath.Join(b.data, "topics")
	if ok {
		b.kafkaCfg = &kcfg
	}
	if readOnly {
		return nil
	}
	if ok {
		p, err := openKafkaPublisher(ctx, kcfg, conf)
		if err != nil {
			return err
		}
		b.publisher = p
		b.closers = append(b.closers, p.Close)
		return nil
	}
	t, err := publish.OpenTopics(b.topicsDir)
	if err != nil {
		return err
	}
	b.publisher = t
	b.closers = append(b.closers, t.Close)
	return nil
}

func (b *backends) openArchive(ctx context.Context, conf *resolved, e *env) error {
	switch kind := conf.Archive; kind {
	case "dir", "":
		a, err := dirarchive.Open(filepath.Join(b.data, "archive"))
		if err != nil {
			return dataDirError(b.data, err)
		}
		b.archive = a
		b.closers = append(b.closers, a.Close)
		return nil
	case "s3":
		a, err := s3archive.New(s3Config(conf, e))
		if err == nil && conf.S3.CreateBucket {
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
		Endpoint: conf.S3.Endpoint, Bucket: conf.S3.Bucket, Region: conf.S3.Region,
		AccessKey: conf.S3.AccessKey, SecretKey: conf.S3.SecretKey,
		PathStyle: conf.S3.PathStyle, UseTLS: true,
		CAFile: conf.S3.CAFile, InsecureSkipVerify: conf.S3.InsecureSkipVerify,
		Logf: func(format string, args ...any) {
			fmt.Fprintln(e.stderr, "engram: "+safeLine(conf.redact(fmt.Sprintf(format, args...))))
		},
	}
	if conf.S3.TLS != nil {
		c.UseTLS = *conf.S3.TLS
	}
	return c
}

func (b *backends) openIndex(ctx context.Context, conf *resolved, dim int, e *env) error {
	switch kind := conf.Index; kind {
	case "sqlite", "":
		open := b.openSQLite
		if b.readOnly {
			open = b.readSQLite
		}
		ix, err := open(ctx, conf, e)
		if err != nil {
			return err
		}
		b.index = ix
		b.closers = append(b.closers, ix.Close)
		return nil
	case "opensearch":
		cfg := osConfig(conf, dim, e)
		cfg.ReadOnly = b.readOnly
		ix, err := osindex.Open(ctx, cfg)
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

// openSQLite opens the data directory's index. Another process holding
// its write lock (busy) is an outage like an unreachable server: retried
// with the pipeline's backoff, and said while it lasts.
func (b *backends) openSQLite(ctx context.Context, conf *resolved, e *env) (*sqliteindex.DB, error) {
	var ix *sqliteindex.DB
	r := ingest.Retrier{Transient: transient, Observer: openOutages{e, conf}}
	err := r.Do(ctx, ingest.StageIndex, func() (err error) {
		// Every writer of engram's (the pipeline, reindex) syncs the index
		// before it reports or announces what it wrote.
		ix, err = sqliteindex.Open(filepath.Join(b.data, "index.db"), sqliteindex.Options{DeferSync: true})
		return err
	})
	return ix, dataDirError(b.data, err)
}

// readSQLite opens the data directory's index read-only (and immutable on
// read-only media), for commands that only read.
func (b *backends) readSQLite(context.Context, *resolved, *env) (*sqliteindex.DB, error) {
	return sqliteindex.OpenReadOnly(filepath.Join(b.data, "index.db"), sqliteindex.Options{})
}

// writable reports whether files can be made in dir (false on read-only
// media, or without permission). A variable, so tests can stand in for a
// read-only mount.
var writable = func(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// embeddedReadOnly reports whether conf's stores are the data directory's
// own and it cannot be written: a command that could write (the inspector)
// then opens them only for reading.
func embeddedReadOnly(conf *resolved, e *env) bool {
	data := dataDir(conf.Data, e.getenv)
	embedded := conf.Index != "opensearch" && conf.Archive != "s3"
	_, err := os.Stat(filepath.Join(data, "index.db"))
	return embedded && err == nil && !writable(data)
}

// openOutages tells of the outages met while the stores are opened,
// before a run's reporter exists, as the reporter does.
type openOutages struct {
	e    *env
	conf *resolved
}

func (o openOutages) Outage(out ingest.Outage) {
	fmt.Fprintf(o.e.stderr, "engram: outage: %s\n", safeLine(o.conf.redact(out.String())))
}

func (o openOutages) Recovered(s ingest.Stage) {
	fmt.Fprintf(o.e.stderr, "engram: %s: answering again, resuming\n", s)
}

func osConfig(conf *resolved, dim int, e *env) osindex.Config {
	return osindex.Config{
		URLs: conf.OpenSearch.URLs, Username: conf.OpenSearch.Username, Password: conf.OpenSearch.Password,
		CAFile: conf.OpenSearch.CAFile, InsecureSkipVerify: conf.OpenSearch.InsecureSkipVerify,
		Index: conf.OpenSearch.Index, Timeout: conf.OpenSearch.Timeout, Dimension: dim,
		KNNEngine: conf.OpenSearch.KNNEngine, Refresh: conf.OpenSearch.Refresh,
		Logf: func(format string, args ...any) {
			fmt.Fprintln(e.stderr, "engram: "+safeLine(conf.redact(fmt.Sprintf(format, args...))))
		},
	}
}

// embedderDimension is the configured vector length: embedder.dimension,
// else 8 for the stub, 256 for the hashed embedder and 1536 for an HTTP
// embedder.
func embedderDimension(conf *resolved) (int, error) {
	if conf.Embedder.Dimension > 0 {
		return conf.Embedder.Dimension, nil
	}
	if conf.Embedder.Kind == "hashed" {
		return embed.HashedDimension, nil
	}
	if conf.Embedder.Kind == "http" {
		return 1536, nil
	}
	return model.StubDimension, nil
}

func newEmbedder(conf *resolved) (ingest.Embedder, error) {
	dim, err := embedderDimension(conf)
	if err != nil {
		return nil, err
	}
	switch kind := conf.Embedder.Kind; kind {
	case "stub", "":
		return embed.Stub{Dim: dim}, nil
	case "hashed":
		return embed.Hashed{Dim: dim}, nil
	case "http":
		return embed.NewHTTP(embed.HTTPConfig{
			Endpoint: conf.Embedder.Endpoint, Model: conf.Embedder.Model,
			APIKey: conf.Embedder.APIKey, Dimension: dim,
		})
	default:
		return nil, fmt.Errorf("embedder %q: choose stub, hashed or http", kind)
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
	opts := query.Options{Tenant: conf.Tenant, RankWindow: int(conf.Search.RankWindow)}
	switch kind := conf.Index; kind {
	case "sqlite", "":
	case "opensearch":
		dim, err := embedderDimension(conf)
		if err != nil {
			return nil, err
		}
		cfg := osConfig(conf, dim, e)
		cfg.ReadOnly = true // readers never create the index
		r, err := osindex.OpenReader(ctx, cfg, opts)
		if err != nil {
			return nil, errors.New(conf.redact(err.Error()))
		}
		return r, nil
	default:
		return nil, fmt.Errorf("index %q: choose sqlite or opensearch", kind)
	}
	path := filepath.Join(dataDir(conf.Data, e.getenv), "index.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no index at %s (run 'engram ingest' first, or pass --data)", path)
	}
	return sqliteindex.OpenReader(path, opts)
}

// embedderName is what the embedded index records of the embedder that
// writes its vectors (meta "embedder DIM"): stub, hashed, or http MODEL.
// A reader says from it whether similarity scores mean anything.
func embedderName(conf *resolved) string {
	switch conf.Embedder.Kind {
	case "http":
		return "http " + conf.Embedder.Model
	case "":
		return "stub"
	}
	return conf.Embedder.Kind
}
