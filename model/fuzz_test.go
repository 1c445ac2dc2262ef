package model_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"engram/model"
)

// FuzzDecode drives the decoder with arbitrary bytes. It must never panic;
// a rejection is always Problems, each with a reason; and an event that
// validates goes through the pipeline's pure steps to an archive that is
// valid JSON and reads back as the same event: same id, valid, and the same
// index document (so archive and index can never disagree).
// The seed corpus is testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(baseEvent))
	opt := model.DecodeOptions{
		Now:   func() time.Time { return time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC) },
		NewID: func() string { return "fuzz-id" },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := model.Decode(data, opt)
		if err != nil {
			var ps model.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("Decode error is not Problems: %T %v", err, err)
			}
			for _, p := range ps {
				if p.Reason == "" {
					t.Fatalf("problem without a reason: %+v", ps)
				}
			}
			if e != nil {
				t.Fatal("Decode returned an event with its error")
			}
			return
		}
		if e == nil {
			t.Fatal("Decode returned neither event nor error")
		}
		if ps := e.Validate(); len(ps) > 0 {
			for _, p := range ps {
				if p.Reason == "" {
					t.Fatalf("problem without a reason: %+v", ps)
				}
			}
			return
		}

		key, err := model.ArchiveKey(e.EventID, e.Timestamp)
		if err != nil {
			t.Fatalf("valid event has no archive key: %v", err)
		}
		e.Enrich(model.StubEmbedding(e.Input.Text, model.StubDimension), model.Importance(e), key)
		arch, err := e.ArchiveJSON()
		if err != nil {
			t.Fatalf("ArchiveJSON of a valid event: %v", err)
		}
		if !json.Valid(arch) {
			t.Fatalf("archive is not valid JSON: %s", arch)
		}
		back, err := model.Decode(arch, opt)
		if err != nil {
			t.Fatalf("archive %s does not decode: %v", arch, err)
		}
		if back.EventID != e.EventID {
			t.Fatalf("archive eventId %q, event %q", back.EventID, e.EventID)
		}
		if ps := back.Validate(); len(ps) > 0 {
			t.Fatalf("archive %s of a valid event is invalid: %v", arch, ps)
		}
		if back.ObjectStorageKey != key || back.ImportanceScore != e.ImportanceScore ||
			!reflect.DeepEqual(back.Input.Embedding, e.Input.Embedding) {
			t.Fatalf("archive lost what the pipeline added: %s", arch)
		}
		docE, err := json.Marshal(model.NewIndexDoc(e, 0))
		if err != nil {
			t.Fatalf("index document: %v", err)
		}
		docB, err := json.Marshal(model.NewIndexDoc(back, 0))
		if err != nil {
			t.Fatalf("index document of the archive: %v", err)
		}
		if string(docE) != string(docB) {
			t.Fatalf("archive and event index differently:\n event   %s\n archive %s", docE, docB)
		}
		if !model.SameEvent(arch, arch) {
			t.Fatal("SameEvent(archive, archive) = false")
		}
	})
}
