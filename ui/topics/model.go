// Package topics is the inspector's Topics view: the deployment's topics
// watched live (Kafka, or the embedded default's topic files). A table of
// the topics (partitions, end offsets, rate, the worker group's lag) over
// the newest messages of all of them, following like the stream; enter
// opens a message: a notification's event in the detail, any other
// message's JSON here.
package topics

import (
	"sort"
	"time"

	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
	"engram/ui/widget/list"
)

// Messages kept, newest first, and read back from each partition's end
// when the watch starts.
const (
	maxMsgs   = 2000
	backlog   = 50
	statsPoll = time.Second
)

// Model is the Topics view.
type Model struct {
	c    *uikit.Common
	w, h int

	started bool
	gen     uint64 // numbers the watches: a stale one's answers are dropped
	watch   uikit.BusWatch
	werr    error // the watch could not start or read

	msgs      []uikit.BusMessage // newest first
	held      []uikit.BusMessage // arrived while paused, newest first
	following bool
	only      int // -1: every topic, else the index of the one shown
	cur       list.Cursor

	stats   uikit.BusStats
	serr    error
	ends    map[string][]endAt // each topic's end offsets over the rate window
	loading bool               // stats asked, not answered

	pane   *jsontree.Model // a message's JSON, when open
	paneOf *uikit.BusMessage
	folds  map[string]bool
}

// New is the view before it is first shown.
func New(c *uikit.Common) *Model {
	return &Model{c: c, following: true, only: -1, ends: map[string][]endAt{}, folds: map[string]bool{}}
}

// Size is the area SetSize gave.
func (v *Model) Size() (w, h int) { return v.w, v.h }

// SetSize lays the view out: the title, the topic table and the column
// titles above the rows, the position line below.
func (v *Model) SetSize(w, h int) {
	v.w, v.h = w, h
	v.cur.SetHeight(v.rowsH())
	v.cur.Scroll(len(v.shown()))
	if v.pane != nil {
		v.pane.SetSize(w, max(1, h-2))
	}
}

// tableH is the topic table's lines: its titles, a line per topic, a gap.
func (v *Model) tableH() int { return len(v.topics()) + 2 }

// rowsH is the message rows: what the title, the table, the column
// titles and the position line leave.
func (v *Model) rowsH() int { return max(1, v.h-v.tableH()-3) }

func (v *Model) topics() []uikit.BusTopic {
	if v.c.Deps.Bus == nil {
		return nil
	}
	return v.c.Deps.Bus.Topics()
}

// Busy reports whether the watch is starting.
func (v *Model) Busy() bool { return v.started && v.watch == nil && v.werr == nil }

// Following reports whether new messages show as they come.
func (v *Model) Following() bool { return v.following }

// Back closes the open message (esc); it reports whether there was one.
func (v *Model) Back() bool {
	if v.pane == nil {
		return false
	}
	v.pane, v.paneOf = nil, nil
	return true
}

// shown is the messages of the topic shown (all of them by default).
func (v *Model) shown() []uikit.BusMessage {
	if v.only < 0 {
		return v.msgs
	}
	name := v.topics()[v.only].Name
	var out []uikit.BusMessage
	for _, m := range v.msgs {
		if m.Topic == name {
			out = append(out, m)
		}
	}
	return out
}

// Selected is the selected message, nil when there is none.
func (v *Model) Selected() *uikit.BusMessage {
	rows := v.shown()
	if v.cur.Sel() >= len(rows) {
		return nil
	}
	return &rows[v.cur.Sel()]
}

// topicOf is the topic a message is of.
func (v *Model) topicOf(name string) uikit.BusTopic {
	for _, t := range v.topics() {
		if t.Name == name {
			return t
		}
	}
	return uikit.BusTopic{Name: name}
}

// add puts new messages (in the order read) on top, or holds them while
// paused; the selection stays on its message.
func (v *Model) add(batch []uikit.BusMessage) {
	// A batch comes partition by partition: newest first across them.
	newest := make([]uikit.BusMessage, len(batch))
	for i, m := range batch {
		newest[len(batch)-1-i] = m
	}
	sort.SliceStable(newest, func(i, j int) bool { return newest[i].Time.After(newest[j].Time) })
	if !v.following {
		v.held = trim(append(newest, v.held...))
		return
	}
	v.msgs = trim(append(newest, v.msgs...))
	v.cur.Scroll(len(v.shown()))
}

func trim(ms []uikit.BusMessage) []uikit.BusMessage {
	if len(ms) > maxMsgs {
		return ms[:maxMsgs]
	}
	return ms
}

// rateWindow is how far back a topic's rate looks: long enough that a
// pipeline announcing in batches (a batch every second or two) shows its
// mean rate, not 0.0 between two batches and a burst at each.
const rateWindow = 10 * time.Second

// endAt is a topic's end offset (the sum of its partitions') at a time.
type endAt struct {
	at  time.Time
	end int64
}

// onStats takes a stats answer, keeping each topic's end offsets of the
// last rateWindow for its rate.
func (v *Model) onStats(s uikit.BusStats, err error, at time.Time) {
	v.loading = false
	v.serr = err
	if err != nil {
		return
	}
	for _, t := range s.Topics {
		if t.Err != nil {
			continue
		}
		ends := v.ends[t.Name]
		n := len(ends)
		switch {
		case n > 0 && t.End < ends[n-1].end:
			ends = nil // recreated (or replaced, a topic file): count afresh
		case n > 0 && !at.After(ends[n-1].at):
			ends = ends[:n-1] // a clock that did not move: the newer end only
		}
		ends = append(ends, endAt{at, t.End})
		// The oldest kept is the newest at least rateWindow old.
		for len(ends) > 2 && at.Sub(ends[1].at) >= rateWindow {
			ends = ends[1:]
		}
		v.ends[t.Name] = ends
	}
	v.stats = s
}

// rate is a topic's messages per second over the last rateWindow (or
// since the view was first shown); false before two stats.
func (v *Model) rate(topic string) (float64, bool) {
	ends := v.ends[topic]
	if len(ends) < 2 {
		return 0, false
	}
	first, last := ends[0], ends[len(ends)-1]
	return float64(last.end-first.end) / last.at.Sub(first.at).Seconds(), true
}
