package uikit

import (
	"context"
	"errors"
	"io"
	"time"

	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/query/expr"
	"engram/query/recall"
)

// Reader is the part of query.Reader the inspector reads from.
type Reader interface {
	Recent(ctx context.Context, expr string, after query.Cursor, limit int) (query.Page, error)
	TailStart(ctx context.Context) (query.Cursor, error)
	Tail(ctx context.Context, after query.Cursor, limit int) (query.Page, error)
	Match(ctx context.Context, expr string, ids []string) (map[string]bool, error)
	Turns(ctx context.Context, expr string, after query.Cursor, limit int) (query.TurnPage, error)
	Turn(ctx context.Context, key string) ([]*model.IndexDoc, error)
	Document(ctx context.Context, eventID string) (*model.IndexDoc, error)
	// Similar is the k documents nearest to eventID's embedding.
	Similar(ctx context.Context, eventID string, k int) ([]query.Scored, error)
	Count(ctx context.Context) (int64, error)
}

// Recorder runs events through the ingestion pipeline in this process,
// telling obs about every stage while it runs.
type Recorder interface {
	// Record ingests one event built by the record form.
	Record(ctx context.Context, ev *model.Event, obs ingest.Observer) (*ingest.Trace, error)
	// Ingest runs items (lines of a followed file) until items is closed.
	Ingest(ctx context.Context, items <-chan ingest.Item, obs ingest.Observer) ingest.Summary
}

// Deps are the services the inspector uses. Reader and Archive are
// required unless Err is set; Recorder may be nil (recording is then
// hidden, as with Options.ReadOnly).
type Deps struct {
	Reader   Reader
	Archive  ingest.ArchiveReader
	Recorder Recorder
	// Bus is the event bus the Topics view watches and the record form
	// can send to; nil hides the Topics view.
	Bus Bus

	// Backend and Profile name what is open, for the header.
	Backend, Profile string
	// DataDir is the data directory in use ("" when unknown), named by
	// the hints of an empty store.
	DataDir string
	// ReadOnlyWhy says why nothing can be written ("the data directory
	// /x is read-only"), shown when a write key is refused; "" lets the
	// inspector say it from the options.
	ReadOnlyWhy string

	// Err is a start-up failure: the inspector shows it full screen with
	// Hint (what to do) instead of the views.
	Err  error
	Hint string

	// CheckFilter checks a filter expression as it is typed (no I/O); its
	// error may carry the column (a Column() int method, or "column N" in
	// its text). Default: expr.Parse.
	CheckFilter func(expr string) error

	// Recall ranks what the memory would retrieve for a prompt (the
	// Recall view); nil hides the view.
	Recall *recall.Engine

	// TraceURL is the trace.url setting: a link template to an event's
	// trace in a tracing backend, {traceId} and {spanId} replaced (y l).
	TraceURL string

	// NewID makes the event id of a recorded event; Now is the clock.
	NewID func() string
	Now   func() time.Time
}

// Options tune the inspector.
type Options struct {
	ReadOnly bool
	// Theme is a themes name; "" follows the terminal background.
	Theme string
	// NoColor (NO_COLOR): no colour at all.
	NoColor bool
	// Follow are JSON-lines files whose new lines are ingested as they
	// are appended.
	Follow []string
	// Mouse captures the mouse: the wheel scrolls, a click selects a row
	// or a tab. Off, the terminal's own text selection works.
	Mouse bool
	// Demo: the data is --demo's, with a simulated agent ingesting in a
	// pipeline of its own (not shown in the Pipeline view).
	Demo bool
	// ExportDir is where `e` writes engram-<eventId>.json ("" = cwd).
	ExportDir string

	// BufferRows bounds the stream rows held in memory (default 10000).
	BufferRows int
	// PageSize is the rows fetched per query (default 200).
	PageSize int
	// Poll is the tail interval (default 250ms).
	Poll time.Duration
	// ArchiveLimit caps the bytes of an archived event read (default 4 MiB).
	ArchiveLimit int64
	// ArchiveTimeout bounds one archive fetch (default 15s).
	ArchiveTimeout time.Duration
	// HopTimeout is how long an event sent to the raw topic may take to
	// reach each next hop before it is shown stuck (default 30s).
	HopTimeout time.Duration
	// Location shows timestamps in this zone (default time.Local).
	Location *time.Location
	// In and Out are the terminal (default: the process's).
	In  io.Reader
	Out io.Writer
}

// WithDefaults fills in what was left unset.
func (o Options) WithDefaults() Options {
	if o.BufferRows <= 0 {
		o.BufferRows = 10000
	}
	if o.PageSize <= 0 {
		o.PageSize = 200
	}
	if o.BufferRows < 2*o.PageSize {
		o.BufferRows = 2 * o.PageSize
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.ArchiveLimit <= 0 {
		o.ArchiveLimit = 4 << 20
	}
	if o.ArchiveTimeout <= 0 {
		o.ArchiveTimeout = 15 * time.Second
	}
	if o.HopTimeout <= 0 {
		o.HopTimeout = 30 * time.Second
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	return o
}

// WithDefaults fills in what was left unset; without a reader or an
// archive, Err says so.
func (d Deps) WithDefaults() Deps {
	if d.CheckFilter == nil {
		d.CheckFilter = func(s string) error { _, err := expr.Parse(s); return err }
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.NewID == nil {
		d.NewID = func() string { return "ui-" + time.Now().UTC().Format("20060102T150405.000000000") }
	}
	if d.Err == nil && (d.Reader == nil || d.Archive == nil) {
		d.Err = errors.New("no index or archive was opened")
	}
	return d
}
