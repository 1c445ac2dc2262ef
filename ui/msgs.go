package ui

import (
	"engram/ingest"
	"engram/ingest/follow"
)

// followTickMsg: time to look for new lines in the followed files.
type followTickMsg struct{}

// followedMsg: a round on a followed file ended at at.
type followedMsg struct {
	file string
	at   follow.File
	sum  ingest.Summary
	err  error
}
