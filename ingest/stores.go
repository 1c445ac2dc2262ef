package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"engram/model"
)

// Archive is the truth layer: a write-once object store keyed by
// model.ArchiveKey.
type Archive interface {
	// Put stores body under key unless the key exists. When it exists, an
	// object holding the same event (model.SameEvent) is a duplicate
	// (Stored=false, nil error); a different one is a *ConflictError and the
	// stored object is left as it was.
	Put(ctx context.Context, key string, body []byte) (stored bool, err error)
	// Describe names the store for people ("dir /path", "s3 bucket@endpoint").
	Describe() string
}

// Concurrent is an Archive that names how many Puts should run at once by
// default: the directory archive group-commits the writes that wait
// together, so it wants many more than a network store does.
type Concurrent interface {
	Concurrency() int
}

// Syncer is a store whose writes are visible at once but durable only when
// Sync returns, so that many writes share one sync. The pipeline syncs the
// archive before it indexes a batch, and an Index that is a Syncer before it
// publishes or reports the batch.
type Syncer interface {
	Sync(ctx context.Context) error
}

// ConflictError says an archive key already holds a different event.
type ConflictError struct{ Key string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict: %s already holds a different event with this eventId (left unchanged)", e.Key)
}

// IsConflict reports whether err is a *ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}

// IndexResult is what happened to one document of a batch.
type IndexResult struct {
	// Created is false when a document with this id was already there; it
	// is kept as it was, so a re-run never makes a second document.
	Created bool
	Err     error
}

// Index is the associative layer.
type Index interface {
	// Write indexes docs and returns one result per document, in order.
	// It sets IngestedAt on the documents it creates.
	Write(ctx context.Context, docs []*model.IndexDoc) []IndexResult
	// Name is the index name put in memory.indexed notifications.
	Name() string
	Describe() string
	Close() error
}

// Encoder is an Index whose Write first checks and encodes the documents,
// which needs no lock, and then writes them. The pipeline encodes each
// batch while the one before it is written: the index's writer is the one
// step every batch takes in turn, so what it need not do in its turn comes
// off the rate of the whole ingest.
type Encoder interface {
	// Encode checks and encodes docs for one WriteEncoded.
	Encode(docs []*model.IndexDoc) Encoded
	// WriteEncoded is Write of the documents of e.
	WriteEncoded(ctx context.Context, e Encoded) []IndexResult
}

// Encoded is a batch an Encoder encoded, to be written once.
type Encoded interface {
	Docs() []*model.IndexDoc
}

// Publisher delivers the downstream notifications of a batch of events that
// were archived and newly indexed.
// Publish returns once every notification is taken (acknowledged by the
// broker, or written): only then do they count as announced.
type Publisher interface {
	Publish(ctx context.Context, as []Announcement) error
	Close() error
}

// Pipeliner is a Publisher that takes several Publish calls at once and
// gains by it: a Kafka producer keeps several requests in flight, so the
// pipeline's publish step is no longer one broker round trip a batch. A
// Publisher that is not one (topic files, where each call is an fsync) gets
// one call at a time, and a publish step that fell behind puts several
// batches in one call instead.
type Pipeliner interface {
	Publisher
	InFlight() int // Publish calls worth having at once (≥ 1)
}

// Embedder turns texts into vectors of Dimension() components.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
	Dimension() int
	Describe() string
}

// Object is an archived event read back.
type Object struct {
	Key  string
	Body []byte
	Size int64 // of the whole object
	// ETag is the store's entity tag, or a content hash for the directory.
	ETag         string
	LastModified time.Time
	// Truncated is set when Body holds only the first bytes of the object.
	Truncated bool
}

// ArchiveReader reads the truth layer back: for drill-down, verification and
// reindexing.
type ArchiveReader interface {
	// Get reads the object under key, at most limit bytes of it (all when
	// limit <= 0). A missing key is an error wrapping backend.ErrNotFound.
	Get(ctx context.Context, key string, limit int64) (*Object, error)
	// List calls fn for every key under prefix, in key order.
	List(ctx context.Context, prefix string, fn func(key string, size int64) error) error
}
