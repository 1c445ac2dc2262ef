package dirarchive_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"engram/backend/dirarchive"
	"engram/ingest/archivetest"
)

// A day directory that is a symbolic link is refused by every side alike,
// writing (the archive is write-once: never through a link), reading and
// listing (verify and reindex), with one message naming it.
func TestSymlinkedDayDirectoryRefused(t *testing.T) {
	root := t.TempDir()
	s, err := dirarchive.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	key, body := archivetest.Event("e-1", "2026-05-08T22:31:25Z", "hi", nil, 0.5)
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "events", "2026", "05"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "e-1.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "events", "2026", "05", "08")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const want = "events/2026/05/08 is a symbolic link"
	other, otherBody := archivetest.Event("e-2", "2026-05-08T10:00:00Z", "hi", nil, 0.5)
	_, putErr := s.Put(ctx, other, otherBody)
	_, getErr := s.Get(ctx, key, 0)
	listErr := s.List(ctx, "events/", func(string, int64) error { return nil })
	for what, err := range map[string]error{"put": putErr, "get": getErr, "list": listErr} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", what, want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "e-2.json")); err == nil {
		t.Error("put wrote through the link")
	}
}

// Listing one day, or one month, meets the link at its start or above it.
func TestSymlinkedDayDirectoryRefusedByDayListing(t *testing.T) {
	root := t.TempDir()
	s, err := dirarchive.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "events", "2026", "05"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "events", "2026", "05", "08")); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"events/2026/05/08/", "events/2026/05/"} {
		err := s.List(context.Background(), prefix, func(string, int64) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "events/2026/05/08 is a symbolic link") {
			t.Errorf("List(%s): want the link named, got %v", prefix, err)
		}
	}
}
