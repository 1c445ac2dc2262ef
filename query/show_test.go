package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
)

// oneObject is an archive holding at most one object.
type oneObject struct {
	key  string
	body []byte
}

func (a oneObject) Get(_ context.Context, key string, _ int64) (*ingest.Object, error) {
	if key != a.key {
		return nil, fmt.Errorf("%s: %w", key, backend.ErrNotFound)
	}
	return &ingest.Object{Key: key, Body: a.body, Size: int64(len(a.body))}, nil
}

func (oneObject) List(context.Context, string, func(string, int64) error) error { return nil }

func TestShowJSON(t *testing.T) {
	doc := &model.IndexDoc{EventID: "ev-1", ObjectStorageKey: "events/ev-1.json", Summary: "bell \x07", Tags: []string{}}
	tests := []struct {
		name      string
		store     oneObject
		archive   string // the "archive" member as printed
		errSubstr string
	}{
		{"archived", oneObject{"events/ev-1.json", []byte(`{"eventId":"ev-1"}`)}, `"archive": {` + "\n" + `    "eventId": "ev-1"` + "\n  }", ""},
		{"missing", oneObject{}, `"archive": null`, "cannot be read"},
		{"not JSON", oneObject{"events/ev-1.json", []byte(`{"eventId":`)}, `"archive": null`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := query.ShowJSON(context.Background(), tt.store, doc)
			if tt.errSubstr == "" && err != nil || tt.errSubstr != "" && (err == nil || !strings.Contains(err.Error(), tt.errSubstr)) {
				t.Fatalf("error %v, want one saying %q", err, tt.errSubstr)
			}
			s := string(out)
			if !strings.HasPrefix(s, "{\n  \"index\": {\n    \"event_id\": \"ev-1\"") || !strings.HasSuffix(s, "\n  "+tt.archive+"\n}\n") {
				t.Fatalf("printed:\n%s", s)
			}
			if strings.ContainsRune(s, '\x07') {
				t.Fatalf("a control character reaches the terminal:\n%q", s)
			}
		})
	}
}
