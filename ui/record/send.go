package record

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"engram/backend"
	"engram/ingest"
	"engram/model"
	"engram/query"
	"engram/ui/uikit"
)

// sent is the form's event sent to the raw topic, followed hop by hop
// through the deployment: produced, enriched, indexed, found in the index,
// archive object readable.
type sent struct {
	run    uint64
	id     string
	start  time.Time
	at     [uikit.NumHops]time.Time // zero: not yet
	where  string                   // the raw topic's partition and offset
	last   string                   // the latest word on the hop awaited (an error)
	stuck  bool                     // the awaited hop did not come in time
	after  time.Duration            // how long it was waited for
	err    error                    // the produce failed
	ctx    context.Context          // ends with the send: every look runs under it
	cancel context.CancelFunc
}

// next is the first hop not seen yet (NumHops when all were).
func (s *sent) next() uikit.Hop {
	for h := range uikit.NumHops {
		if s.at[h].IsZero() {
			return h
		}
	}
	return uikit.NumHops
}

// since is when the awaited hop's wait began: the last hop seen.
func (s *sent) since() time.Time {
	if h := s.next(); h > 0 {
		return s.at[h-1]
	}
	return s.start
}

// before is when the hop before h came: the latest earlier hop seen
// before it (the two notifications may come in either order).
func (s *sent) before(h uikit.Hop) time.Time {
	from := s.start
	for k := range h {
		if at := s.at[k]; !at.IsZero() && !at.After(s.at[h]) && at.After(from) {
			from = at
		}
	}
	return from
}

// running: hops are still awaited.
func (s *sent) running() bool { return s.err == nil && !s.stuck && s.next() < uikit.NumHops }

// hopMsg is a hop of a sent event (or the end of its Send).
type hopMsg struct {
	Run  uint64
	Msg  uikit.BusMessage
	Done bool  // Send returned
	Err  error // with Done: why it failed
}

// foundMsg is a look for the sent event's document in the index.
type foundMsg struct {
	run uint64
	doc *model.IndexDoc
	err error
}

// archivedMsg is a read of the sent event's archived object.
type archivedMsg struct {
	run uint64
	doc *model.IndexDoc
	err error
}

// HopTickMsg says it is time to look whether the hop awaited is overdue.
type HopTickMsg struct{ Run uint64 }

// CanSend reports whether the form can send its event to the deployment's
// raw topic.
func (v *Model) CanSend() bool { return v.c.Deps.Bus != nil && v.c.Deps.Bus.CanSend() }

// rawTopic is the raw topic's name, for the labels.
func (v *Model) rawTopic() string {
	for _, t := range v.c.Deps.Bus.Topics() {
		if t.Role == uikit.RoleRaw {
			return t.Name
		}
	}
	return "the raw topic"
}

// send produces the form's event to the raw topic and follows its hops.
func (v *Model) send() tea.Cmd {
	if !v.CanSend() {
		return uikit.StatusCmd("sending needs Kafka: set kafka.brokers (--kafka-brokers or KAFKA_BROKERS)", true)
	}
	if v.Busy() {
		return uikit.StatusCmd("an event is on its way", false)
	}
	ev, cmd := v.checked()
	if ev == nil {
		return cmd
	}
	if v.sending != nil && v.sending.cancel != nil {
		v.sending.cancel()
	}
	v.runs++
	ctx, cancel := context.WithCancel(v.c.Ctx)
	v.sending = &sent{run: v.runs, id: ev.EventID, start: v.c.Deps.Now(), ctx: ctx, cancel: cancel}
	v.live = nil
	hops := make(chan hopMsg, 8)
	return tea.Batch(sendCmd(ctx, v.c.Deps.Bus, ev, hops, v.runs), waitHop(hops), v.c.After(hopTick, HopTickMsg{Run: v.runs}))
}

// hopTick is how often an overdue hop is looked for.
const hopTick = 250 * time.Millisecond

// onHop updates the sent event's hops; the index and the archive are
// looked at once memory.indexed has told of it.
func (v *Model) onHop(msg hopMsg) tea.Cmd {
	s := v.sending
	if s == nil || msg.Run != s.run {
		return nil
	}
	if msg.Done {
		if msg.Err != nil && s.running() && !errors.Is(msg.Err, context.Canceled) {
			if s.at[uikit.HopProduced].IsZero() {
				s.err = msg.Err
				s.cancel()
			} else {
				s.last = uikit.ErrorText(msg.Err)
			}
		}
		return nil
	}
	h := msg.Msg.Hop
	if h >= uikit.NumHops || !s.at[h].IsZero() {
		return nil
	}
	s.at[h] = v.c.Deps.Now()
	s.last = ""
	if h == uikit.HopProduced {
		s.where = fmt.Sprintf("%s[%d]@%d", uikit.Clean(msg.Msg.Topic), msg.Msg.Partition, msg.Msg.Offset)
	}
	return v.afterHop()
}

// afterHop starts the next look the hops need: the index once both
// notifications came (it is written before them), the archive once the
// index has the document.
func (v *Model) afterHop() tea.Cmd {
	s := v.sending
	if s.next() == uikit.HopFound {
		return findDoc(s.ctx, v.c.Deps.Reader, s.id, s.run)
	}
	if !s.running() {
		s.cancel()
		return uikit.StatusCmd(fmt.Sprintf("sent %s in %s: selected in the stream", uikit.Clean(s.id), uikit.FormatDuration(s.at[uikit.NumHops-1].Sub(s.start))), false)
	}
	return nil
}

func (v *Model) onFound(msg foundMsg) tea.Cmd {
	s := v.sending
	if s == nil || msg.run != s.run || !s.running() {
		return nil
	}
	if msg.err != nil {
		s.last = lookNote(msg.err)
		return later(findDoc(s.ctx, v.c.Deps.Reader, s.id, s.run))
	}
	s.at[uikit.HopFound], s.last = v.c.Deps.Now(), ""
	id := s.id
	found := func() tea.Msg { return FoundMsg{ID: id} }
	return tea.Batch(fetchObject(s.ctx, v.c.Deps.Archive, msg.doc, s.run, v.c.Opts.ArchiveLimit), found)
}

// FoundMsg says the sent event is in the index. The root selects it in the
// stream, as it does an event recorded in this process (DoneMsg).
type FoundMsg struct{ ID string }

// lookNote is what a look that found nothing says, for a stuck hop.
func lookNote(err error) string {
	if errors.Is(err, backend.ErrNotFound) {
		return "not there yet"
	}
	return uikit.ErrorText(err)
}

func (v *Model) onArchived(msg archivedMsg) tea.Cmd {
	s := v.sending
	if s == nil || msg.run != s.run || !s.running() {
		return nil
	}
	if msg.err != nil {
		s.last = lookNote(msg.err)
		return later(fetchObject(s.ctx, v.c.Deps.Archive, msg.doc, s.run, v.c.Opts.ArchiveLimit))
	}
	s.at[uikit.HopArchived], s.last = v.c.Deps.Now(), ""
	return v.afterHop()
}

// onHopTick shows the awaited hop stuck once it is HopTimeout late.
func (v *Model) onHopTick(msg HopTickMsg) tea.Cmd {
	s := v.sending
	if s == nil || msg.Run != s.run || !s.running() {
		return nil
	}
	if wait := v.c.Deps.Now().Sub(s.since()); wait >= v.c.Opts.HopTimeout {
		s.stuck, s.after = true, wait
		s.cancel()
		return uikit.StatusCmd(fmt.Sprintf("%s is stuck at %s after %s", uikit.Clean(s.id), s.next(), uikit.FormatDuration(wait)), true)
	}
	return v.c.After(hopTick, HopTickMsg{Run: s.run})
}

// Every function below is a command: the I/O runs in its goroutine.

// sendCmd runs the bus's Send, its hops to hops; hops closes after the
// last word.
func sendCmd(ctx context.Context, bus uikit.Bus, ev *model.Event, hops chan<- hopMsg, run uint64) tea.Cmd {
	return func() tea.Msg {
		err := bus.Send(ctx, ev, func(m uikit.BusMessage) {
			select {
			case hops <- hopMsg{Run: run, Msg: m}:
			case <-ctx.Done():
			}
		})
		hops <- hopMsg{Run: run, Done: true, Err: err}
		close(hops)
		return nil
	}
}

// waitHop is the next hop of a send; it re-arms itself until the send ends.
func waitHop(hops <-chan hopMsg) tea.Cmd {
	return func() tea.Msg {
		m, ok := <-hops
		if !ok {
			return nil
		}
		return hopBatch{m, waitHop(hops)}
	}
}

// hopBatch is a hop with the command that waits for the next one.
type hopBatch struct {
	hopMsg
	next tea.Cmd
}

// lookEvery is the pause between two looks at the index or the archive.
const lookEvery = 100 * time.Millisecond

// later runs cmd after lookEvery: the next look, after one that found
// nothing yet.
func later(cmd tea.Cmd) tea.Cmd {
	return tea.Tick(lookEvery, func(time.Time) tea.Msg { return cmd() })
}

// findDoc looks the event up in the index once.
func findDoc(ctx context.Context, r uikit.Reader, id string, run uint64) tea.Cmd {
	return func() tea.Msg {
		d, err := r.Document(ctx, id)
		if ctx.Err() != nil {
			return nil
		}
		return foundMsg{run: run, doc: d, err: err}
	}
}

// fetchObject reads the event's archived object once.
func fetchObject(ctx context.Context, ar ingest.ArchiveReader, d *model.IndexDoc, run uint64, limit int64) tea.Cmd {
	return func() tea.Msg {
		_, err := query.FetchArchive(ctx, ar, d, limit)
		if ctx.Err() != nil {
			return nil
		}
		return archivedMsg{run: run, doc: d, err: err}
	}
}
