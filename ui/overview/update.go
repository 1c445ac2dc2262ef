package overview

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/query"
	"engram/ui/uikit"
)

// statsMsg answers one load.
type statsMsg struct {
	req   uint64
	stats *query.Stats
	err   error
	took  time.Duration
}

// tickMsg is the follow's look at whether to ask again.
type tickMsg struct{}

// Tick is the follow's message, for a test to send as the timer would.
func Tick() tea.Msg { return tickMsg{} }

// OpenStreamMsg asks the root to show the stream filtered by Expr; Note
// says what the filter could not hold, if anything.
type OpenStreamMsg struct {
	Expr string
	Note string
}

// errNoStats: the index cannot aggregate.
var errNoStats = errors.New("this index cannot aggregate")

// Keys of the view.
var (
	keyBucket  = uikit.Binding("←/→", "bucket", "left", "h", "right", "l")
	keyGroup   = uikit.Binding("↑/↓", "group", "up", "k", "down", "j")
	keyZoomIn  = uikit.Binding("+", "zoom in", "+")
	keyZoomOu  = uikit.Binding("-", "zoom out", "-")
	keySplit   = uikit.Binding("b", "split by", "b")
	keyOpen    = uikit.Binding("enter", "open in stream", "enter")
	keyEnds    = uikit.Binding("home/end", "first/last bucket", "home", "end")
	keyReload  = uikit.Binding("r", "refresh", "r")
	keyCompare = uikit.Binding("c", "compare with the bucket before", "c")
)

// Update handles the view's keys, its answers and its follow.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case statsMsg:
		v.onStats(msg)
	case tickMsg:
		return v.onTick()
	case tea.KeyPressMsg:
		return v.onKey(msg)
	}
	return nil
}

func (v *Model) onStats(msg statsMsg) {
	if msg.req != v.req {
		return
	}
	v.loading = false
	v.err, v.took = msg.err, msg.took
	if msg.err != nil {
		return
	}
	v.stats = msg.stats
	if v.at.IsZero() || v.bucket() < 0 {
		v.at = lastBusy(v.stats.Buckets)
	}
	if v.group >= len(v.stats.Groups) {
		v.group = len(v.stats.Groups) - 1
	}
}

// onTick asks again when new documents came or the range moved on.
func (v *Model) onTick() tea.Cmd {
	if !v.shown {
		v.ticking = false
		return nil
	}
	next := v.c.After(followEvery, tickMsg{})
	stale := v.seen() != v.seenAt || v.c.Deps.Now().Sub(v.loaded) >= refreshEvery
	if v.loading || !stale {
		return next
	}
	return tea.Batch(next, v.load())
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	switch s := msg.String(); {
	case key.Matches(msg, keyZoomIn) && v.span > 0:
		v.span--
		return v.load()
	case key.Matches(msg, keyZoomOu) && v.span < len(spans)-1:
		v.span++
		return v.load()
	case key.Matches(msg, keyZoomIn):
		return uikit.StatusCmd("already the narrowest range, the last "+spanText(spans[0]), false)
	case key.Matches(msg, keyZoomOu):
		return uikit.StatusCmd("already the widest range, the last "+spanText(spans[len(spans)-1])+": the stream's G and :time reach older events", false)
	case key.Matches(msg, keySplit):
		v.split, v.group = (v.split+1)%len(splits), -1
		return v.load()
	case key.Matches(msg, keyReload):
		return v.load()
	case key.Matches(msg, keyCompare):
		v.compare = !v.compare
	case key.Matches(msg, keyOpen):
		return v.open()
	case s == "left" || s == "h":
		v.moveBucket(-1)
	case s == "right" || s == "l":
		v.moveBucket(1)
	case s == "home":
		v.moveBucket(-len(v.buckets()))
	case s == "end":
		v.moveBucket(len(v.buckets()))
	case s == "up" || s == "k":
		v.group = max(-1, v.group-1)
	case s == "down" || s == "j":
		if v.stats != nil {
			v.group = min(len(v.stats.Groups)-1, v.group+1)
		}
	}
	return nil
}

func (v *Model) buckets() []query.Bucket {
	if v.stats == nil {
		return nil
	}
	return v.stats.Buckets
}

// bucket is the index of the selected bucket, -1 when none is.
func (v *Model) bucket() int {
	for i, b := range v.buckets() {
		if b.Start.Equal(v.at) {
			return i
		}
	}
	return -1
}

func (v *Model) moveBucket(delta int) {
	bs := v.buckets()
	if len(bs) == 0 {
		return
	}
	i := v.bucket()
	if i < 0 {
		i = len(bs) - 1
	}
	v.at = bs[max(0, min(len(bs)-1, i+delta))].Start
}

// load asks for the range ending now, at the current zoom and split.
func (v *Model) load() tea.Cmd {
	v.req++
	v.loading = true
	v.seenAt, v.loaded = v.seen(), v.c.Deps.Now()
	cols := 60
	if v.w > axisW {
		cols = min(cols, v.w-axisW-1) // Since moves back to a bucket start: one more
	}
	q := query.StatsQuery{Expr: v.expr, Until: v.loaded, Since: v.loaded.Add(-v.Span()), By: v.By(), Top: top,
		Every: query.EveryFor(v.Span(), cols)}
	return loadStats(v.c.Ctx, v.c.Deps.Reader, q, v.req)
}

func loadStats(ctx context.Context, r uikit.Reader, q query.StatsQuery, req uint64) tea.Cmd {
	return func() tea.Msg {
		sr, ok := r.(query.StatsReader)
		if !ok {
			return statsMsg{req: req, err: errNoStats}
		}
		start := time.Now()
		s, err := sr.Stats(ctx, q)
		return statsMsg{req, s, err, time.Since(start)}
	}
}

// open asks for the stream filtered to the selected bucket (all of the
// range when none is) and group.
func (v *Model) open() tea.Cmd {
	s := v.stats
	if s == nil {
		return nil
	}
	from, to := s.Since, s.Until
	if i := v.bucket(); i >= 0 {
		from, to = s.Buckets[i].Start, s.Buckets[i].Start.Add(s.Every)
	}
	terms := []string{}
	if v.expr != "" {
		terms = append(terms, v.expr)
	}
	terms = append(terms, "since:"+from.UTC().Format(time.RFC3339Nano), "until:"+to.UTC().Format(time.RFC3339Nano))
	msg := OpenStreamMsg{}
	if v.group >= 0 {
		g, note := groupTerms(s.By, s.Groups, v.group)
		terms = append(terms, g...)
		msg.Note = note
	}
	msg.Expr = strings.Join(terms, " ")
	return func() tea.Msg { return msg }
}

// fieldOf is the query language's field of a split.
var fieldOf = map[string]string{
	query.ByType: "type", query.ByAgent: "agent", query.ByTool: "tool", query.ByTag: "tag",
	query.BySession: "session", query.ByTenant: "tenant",
}

// groupTerms are the filter terms of group g, and a note when they can
// only approximate it.
func groupTerms(by string, groups []string, g int) ([]string, string) {
	name := groups[g]
	if by == query.ByOutcome {
		switch name {
		case query.OutcomeOK:
			return []string{"success:true"}, ""
		case query.OutcomeFailed:
			return []string{"success:false"}, ""
		}
		return nil, "the stream shows every outcome: no filter selects an unknown one"
	}
	field := fieldOf[by]
	switch name {
	case query.GroupNone:
		return nil, fmt.Sprintf("the stream shows every %s: no filter selects the events without one", by)
	case query.GroupOther:
		var out []string
		for _, n := range groups[:g] {
			if n != query.GroupNone {
				out = append(out, "-"+field+":"+quote(n))
			}
		}
		if by == query.ByTag {
			return out, "(other) of tags: the stream leaves out the events that also have a top tag"
		}
		return out, ""
	}
	return []string{field + ":" + quote(name)}, ""
}

// quote makes a value one term of the query language.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"():\\") {
		return s
	}
	return strconv.Quote(s)
}

// lastBusy is the start of the newest bucket with documents, else of the
// newest bucket: where a first look lands.
func lastBusy(bs []query.Bucket) time.Time {
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].All.Count > 0 {
			return bs[i].Start
		}
	}
	if len(bs) == 0 {
		return time.Time{}
	}
	return bs[len(bs)-1].Start
}
