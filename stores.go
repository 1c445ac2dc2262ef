package main

import (
	"errors"
	"path/filepath"

	"engram/ingest"
	"engram/ingest/dirarchive"
	"engram/ingest/sqlindex"
)

// embedded is the default deployment: an archive directory, a SQLite index
// and JSON-lines topics, all under one data directory.
type embedded struct {
	dir     string
	archive *dirarchive.Store
	index   *sqlindex.DB
	topics  *ingest.Topics
}

func openEmbedded(dir string) (*embedded, error) {
	a, err := dirarchive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		return nil, err
	}
	ix, err := sqlindex.Open(filepath.Join(dir, "index.db"), sqlindex.Options{})
	if err != nil {
		return nil, err
	}
	t, err := ingest.OpenTopics(filepath.Join(dir, "topics"))
	if err != nil {
		ix.Close()
		return nil, err
	}
	return &embedded{dir, a, ix, t}, nil
}

func (s *embedded) Close() error {
	return errors.Join(s.index.Close(), s.topics.Close())
}
