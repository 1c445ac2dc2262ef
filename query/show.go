package query

import (
	"context"
	"encoding/json"
	"fmt"

	"engram/ingest"
	"engram/model"
)

// ShowJSON is what `engram show` prints for one event, and what the
// inspector's export writes: {"index": doc, "archive": the archived event},
// indented, escaped for a terminal, with a final line break. When the
// archived object cannot be read or is not JSON, "archive" is null and
// archErr says why: what is known is still worth printing. out is nil
// only when the document cannot be encoded; archErr then says so.
func ShowJSON(ctx context.Context, ar ingest.ArchiveReader, doc *model.IndexDoc) (out []byte, archErr error) {
	show := struct {
		Index   *model.IndexDoc `json:"index"`
		Archive json.RawMessage `json:"archive"`
	}{Index: doc}
	obj, err := ar.Get(ctx, doc.ObjectStorageKey, 0)
	switch {
	case err != nil:
		archErr = fmt.Errorf("event %s is indexed but its archive object %s cannot be read: %w", model.Quote(doc.EventID), model.Quote(doc.ObjectStorageKey), err)
	case !json.Valid(obj.Body):
		archErr = fmt.Errorf("archive object %s is not valid JSON", model.Quote(doc.ObjectStorageKey))
	default:
		show.Archive = obj.Body
	}
	b, err := json.MarshalIndent(show, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(model.SafeJSON(b), '\n'), archErr
}
