package topics

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/backend"
	"engram/ui/uikit"
	"engram/ui/widget/jsontree"
	"engram/ui/widget/list"
)

// startedMsg says a watch started (or could not).
type startedMsg struct {
	Gen   uint64
	Watch uikit.BusWatch
	Err   error
}

// polledMsg is what one poll of the watch read.
type polledMsg struct {
	Gen  uint64
	Msgs []uikit.BusMessage
	Err  error
}

// StatsMsg is the topics' state at At.
type StatsMsg struct {
	Stats uikit.BusStats
	Err   error
	At    time.Time
}

// statsTickMsg says it is time to ask for the stats again.
type statsTickMsg struct{}

// retryMsg: time to start a watch that failed again.
type retryMsg struct{ gen uint64 }

// Shown starts the watch and the stats the first time the view is shown.
func (v *Model) Shown() tea.Cmd {
	if v.started || v.c.Deps.Bus == nil {
		return nil
	}
	v.started = true
	return tea.Batch(v.start(), v.askStats())
}

func (v *Model) start() tea.Cmd {
	v.gen++
	v.watch, v.werr = nil, nil
	return start(v.c.Ctx, v.c.Deps.Bus, v.gen)
}

func (v *Model) askStats() tea.Cmd {
	v.loading = true
	return stats(v.c.Ctx, v.c.Deps.Bus, v.c.Deps.Now)
}

// Update takes the answers of the view's commands and its keys.
func (v *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case startedMsg:
		return v.onStarted(msg)
	case polledMsg:
		return v.onPolled(msg)
	case retryMsg:
		if msg.gen == v.gen {
			return v.start()
		}
	case StatsMsg:
		v.onStats(msg.Stats, msg.Err, msg.At)
		return v.c.After(statsPoll, statsTickMsg{})
	case statsTickMsg:
		return v.askStats()
	case docMissingMsg:
		return v.onDocMissing(msg)
	case tea.MouseWheelMsg:
		v.move(map[bool]int{true: -3, false: 3}[msg.Button == tea.MouseWheelUp])
	case tea.KeyPressMsg:
		if v.pane != nil {
			return v.paneKey(msg)
		}
		return v.onKey(msg)
	}
	return nil
}

func (v *Model) onStarted(msg startedMsg) tea.Cmd {
	if msg.Gen != v.gen {
		if msg.Watch != nil {
			msg.Watch.Close()
		}
		return nil
	}
	if msg.Err != nil {
		v.werr = msg.Err
		return v.c.After(5*time.Second, retryMsg{v.gen})
	}
	v.watch = msg.Watch
	return poll(v.c.Ctx, v.watch, v.gen)
}

func (v *Model) onPolled(msg polledMsg) tea.Cmd {
	if msg.Gen != v.gen {
		return nil
	}
	if msg.Err != nil {
		if v.c.Ctx.Err() != nil {
			return nil
		}
		// A read that failed (a broker down): said above the rows, and
		// read again in a while; what was read stays.
		v.werr = msg.Err
		ctx, w, gen := v.c.Ctx, v.watch, v.gen
		return tea.Tick(2*time.Second, func(time.Time) tea.Msg { return poll(ctx, w, gen)() })
	}
	v.werr = nil
	v.add(msg.Msgs)
	return poll(v.c.Ctx, v.watch, v.gen)
}

func (v *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	if delta, ok := list.Step(msg, km, v.rowsH(), len(v.shown())); ok {
		v.move(delta)
		return nil
	}
	switch {
	case key.Matches(msg, km.Pause):
		v.togglePause()
	case key.Matches(msg, km.TopicNext):
		v.only++
		if v.only >= len(v.topics()) {
			v.only = -1
		}
		v.cur.Reset()
	case key.Matches(msg, km.Retry) && v.werr != nil && v.watch == nil:
		return v.start()
	case key.Matches(msg, km.Enter):
		return v.open()
	}
	return nil
}

// move goes through the rows; leaving the newest pauses, coming back to
// it follows again (as the stream does).
func (v *Model) move(d int) {
	n := len(v.shown())
	v.cur.Move(d, n)
	if v.cur.Sel() > 0 && v.following {
		v.following = false
	}
	if v.cur.Sel() == 0 && d < 0 && !v.following {
		v.resume()
	}
}

func (v *Model) togglePause() {
	if v.following {
		v.following = false
		return
	}
	v.resume()
}

func (v *Model) resume() {
	v.following = true
	v.msgs = trim(append(v.held, v.msgs...))
	v.held = nil
	v.cur.Reset()
}

// open is enter on a message: a notification opens its event's detail,
// any other message (a raw event, a rejection) its JSON here.
func (v *Model) open() tea.Cmd {
	m := v.Selected()
	if m == nil {
		return nil
	}
	if v.topicOf(m.Topic).Announces() && m.Key != "" {
		return loadDoc(v.c.Ctx, v.c.Deps.Reader, *m)
	}
	return v.openJSON(*m)
}

// docMissingMsg says a notification's event is not in the index; its
// message is shown instead.
type docMissingMsg struct {
	Msg uikit.BusMessage
	Err error
}

// onDocMissing shows the message whose event the index does not hold.
func (v *Model) onDocMissing(msg docMissingMsg) tea.Cmd {
	return tea.Batch(v.openJSON(msg.Msg), uikit.StatusCmd("event "+uikit.Clean(msg.Msg.Key)+": "+uikit.ErrorText(msg.Err)+"; showing its message", true))
}

func (v *Model) openJSON(m uikit.BusMessage) tea.Cmd {
	root, err := jsontree.Parse(messageJSON(m), "")
	if err != nil {
		return uikit.StatusCmd("message: "+err.Error(), true)
	}
	v.pane, v.paneOf = jsontree.New(v.c, v.folds), &m
	v.pane.SetRoot(root)
	v.pane.SetSize(v.w, max(1, v.h-2))
	return nil
}

func (v *Model) paneKey(msg tea.KeyPressMsg) tea.Cmd {
	km := v.c.Keys
	j := v.pane
	if delta, ok := list.Step(msg, km, j.Height(), j.Len()); ok {
		j.Move(delta)
		return nil
	}
	t, f := true, false
	switch {
	case key.Matches(msg, km.Fold):
		j.SetFold(nil)
	case key.Matches(msg, km.Expand):
		j.SetFold(&f)
	case key.Matches(msg, km.Collapse):
		j.SetFold(&t)
	case key.Matches(msg, km.ExpandAll):
		j.FoldAll(false)
	case key.Matches(msg, km.CollapseAll):
		j.FoldAll(true)
	}
	return nil
}

// messageJSON is a message as tail --topic prints it: a value that is
// JSON as JSON, any other as a string.
func messageJSON(m uikit.BusMessage) []byte {
	type out struct {
		Topic     string            `json:"topic"`
		Partition int32             `json:"partition"`
		Offset    int64             `json:"offset"`
		Timestamp *time.Time        `json:"timestamp,omitempty"`
		Key       string            `json:"key"`
		Size      int               `json:"size"`
		Headers   map[string]string `json:"headers,omitempty"`
		Value     any               `json:"value"`
	}
	o := out{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Key: m.Key, Size: len(m.Value)}
	if !m.Time.IsZero() {
		o.Timestamp = &m.Time
	}
	for _, h := range m.Headers {
		if o.Headers == nil {
			o.Headers = map[string]string{}
		}
		o.Headers[h.Key] = h.Value
	}
	o.Value = string(m.Value)
	if json.Valid(m.Value) {
		o.Value = json.RawMessage(m.Value) // its members in their order
	}
	b, _ := json.Marshal(o)
	return b
}

// Every function below is a command: the I/O runs in its goroutine.

func start(ctx context.Context, bus uikit.Bus, gen uint64) tea.Cmd {
	return func() tea.Msg {
		w, err := bus.Watch(ctx, backlog)
		return startedMsg{Gen: gen, Watch: w, Err: err}
	}
}

func poll(ctx context.Context, w uikit.BusWatch, gen uint64) tea.Cmd {
	return func() tea.Msg {
		ms, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		return polledMsg{Gen: gen, Msgs: ms, Err: err}
	}
}

func stats(ctx context.Context, bus uikit.Bus, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := bus.Stats(sctx)
		if ctx.Err() != nil {
			return nil
		}
		return StatsMsg{Stats: s, Err: err, At: now()}
	}
}

// loadDoc looks a notification's event up in the index, to open it in
// the detail.
func loadDoc(ctx context.Context, r uikit.Reader, m uikit.BusMessage) tea.Cmd {
	return func() tea.Msg {
		d, err := r.Document(ctx, m.Key)
		if err != nil {
			if !errors.Is(err, backend.ErrNotFound) {
				err = errors.New(uikit.ErrorText(err))
			}
			return docMissingMsg{Msg: m, Err: err}
		}
		return uikit.OpenDetailMsg{Doc: d}
	}
}
