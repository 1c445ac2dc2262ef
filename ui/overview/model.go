// Package overview is the inspector's Overview view: the shape of the
// stream over a time range, what engram stats prints. Its charts are drawn
// here because ntcharts is built on bubbletea and lipgloss v1 and would
// bring a second major version of both into the binary.
package overview

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/query"
	"engram/ui/uikit"
)

// spans are the ranges the zoom keys step through, ending now.
var spans = []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour}

// splits are the fields b cycles through; outcome first, as a histogram
// of failures is the first question.
var splits = []string{query.ByOutcome, query.ByType, query.ByAgent, query.ByTool, query.ByTag, query.BySession, query.ByTenant}

// top is how many groups are drawn apart; the rest are (other).
const top = 5

// refreshEvery is how often the shown view asks again while nothing new
// was indexed (time moves the range on); followEvery how often it looks.
const (
	followEvery  = 2 * time.Second
	refreshEvery = 10 * time.Second
)

// Model is the Overview view.
type Model struct {
	c    *uikit.Common
	w, h int

	expr  string // the stream's filter, which this view follows
	span  int    // index in spans
	split int    // index in splits

	stats  *query.Stats
	err    error
	took   time.Duration
	loaded time.Time // when the answer shown was asked

	// The selection: a bucket by its start (kept across refreshes) and a
	// group (-1: all).
	at    time.Time
	group int

	// compare: a line says how the selection differs from the bucket
	// before it.
	compare bool

	req     uint64
	loading bool
	shown   bool
	seen    func() int // how many documents the stream has seen come
	seenAt  int        // seen() when the answer shown was asked
	ticking bool
}

// New is the view over the last 24 hours split by outcome; seen counts
// what the stream's tail brought, so a refresh follows new documents.
func New(c *uikit.Common, seen func() int) *Model {
	return &Model{c: c, span: 2, group: -1, seen: seen}
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize gives the view its area.
func (v *Model) SetSize(w, h int) { v.w, v.h = w, h }

// Busy reports whether an answer is on its way.
func (v *Model) Busy() bool { return v.loading }

// Shown starts following: a load now, then a look every followEvery.
func (v *Model) Shown() tea.Cmd {
	v.shown = true
	cmds := []tea.Cmd{v.load()}
	if !v.ticking {
		v.ticking = true
		cmds = append(cmds, v.c.After(followEvery, tickMsg{}))
	}
	return tea.Batch(cmds...)
}

// Hidden stops following: a hidden overview costs the stream nothing.
func (v *Model) Hidden() { v.shown = false }

// SetFilter follows the stream's expression; a change reloads when shown.
func (v *Model) SetFilter(expr string) tea.Cmd {
	if expr == v.expr {
		return nil
	}
	v.expr = expr
	if !v.shown {
		v.stats = nil
		return nil
	}
	return v.load()
}

// Filter is the expression the view aggregates.
func (v *Model) Filter() string { return v.expr }

// Stats is the answer shown, nil before the first.
func (v *Model) Stats() *query.Stats { return v.stats }

// By is the field the groups split by.
func (v *Model) By() string { return splits[v.split] }

// Span is the range the view covers, ending now.
func (v *Model) Span() time.Duration { return spans[v.span] }

// Err is why the last load failed, nil when it did not.
func (v *Model) Err() error { return v.err }
