package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"engram/backend"
	"engram/ingest"
	"engram/model"
)

// Archived is the full event behind an index document.
type Archived struct {
	Key  string
	Body []byte // the archived JSON, at most the limit asked for
	Size int64
	ETag string
	// Truncated: Body holds only the first bytes (see Size).
	Truncated bool
}

// LayersDisagreeError says the index and the archive tell different stories
// about one event: the object is missing, or holds another event.
type LayersDisagreeError struct {
	EventID, Key, Reason string
}

func (e *LayersDisagreeError) Error() string {
	return fmt.Sprintf("index and archive disagree on %s: %s", model.Quote(e.EventID), e.Reason)
}

// IsLayersDisagree reports whether err is a *LayersDisagreeError.
func IsLayersDisagree(err error) bool {
	var d *LayersDisagreeError
	return errors.As(err, &d)
}

// FetchArchive reads the archived event of doc, at most limit bytes, and
// checks that it is the same event.
func FetchArchive(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc, limit int64) (*Archived, error) {
	if doc.ObjectStorageKey == "" {
		return nil, &LayersDisagreeError{doc.EventID, "", "the index document has no object_storage_key"}
	}
	obj, err := ar.Get(ctx, doc.ObjectStorageKey, limit)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, &LayersDisagreeError{doc.EventID, doc.ObjectStorageKey, "archive object " + model.Quote(doc.ObjectStorageKey) + " is missing"}
	}
	if err != nil {
		return nil, err
	}
	a := &Archived{Key: obj.Key, Body: obj.Body, Size: obj.Size, ETag: obj.ETag, Truncated: obj.Truncated}
	if obj.Truncated {
		return a, nil // too large to check whole; shown with its marker
	}
	var head struct {
		EventID string `json:"eventId"`
	}
	if err := json.Unmarshal(obj.Body, &head); err != nil {
		return a, &LayersDisagreeError{doc.EventID, obj.Key, "archive object is not valid JSON: " + err.Error()}
	}
	if head.EventID != doc.EventID {
		return a, &LayersDisagreeError{doc.EventID, obj.Key, "archive object holds eventId " + model.Quote(head.EventID)}
	}
	return a, nil
}
