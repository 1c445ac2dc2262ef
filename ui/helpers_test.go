package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/ui/uikit"
)

var (
	testNow  = time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	testBase = testNow.Add(-2 * time.Hour)
)

// testDeps are deps over the fakes with a fixed clock.
func testDeps(r uikit.Reader, a *memArchive) uikit.Deps {
	n := 0
	return uikit.Deps{
		Reader: r, Archive: a, Backend: "memory", Profile: "test",
		Now:   func() time.Time { return testNow },
		NewID: func() string { n++; return fmt.Sprintf("new-%03d", n) },
	}
}

// testOpts never fire the tail on their own: tests send stream.TickMsg.
func testOpts(t testing.TB) uikit.Options {
	return uikit.Options{Theme: "dark", Location: time.UTC, Poll: time.Hour, ExportDir: t.TempDir(), PageSize: 50, BufferRows: 200}
}

// harness drives a model as a program would: commands run in their own
// goroutines and their messages come back to Update one at a time, on the
// test's goroutine, with the stages the pipelines report. Timers never fire
// (uikit.Common.Manual): tests send stream.TickMsg and the like themselves. settle
// returns when no command is running and nothing is waiting, not counting
// the commands parked on purpose (a stuck fetch).
type harness struct {
	msgs     chan tea.Msg
	inflight atomic.Int64
}

var harnesses sync.Map // *Model → *harness

// A model's commands stuck on purpose (a fetch that never answers) are
// counted in its context (parkedIn); settle does not wait for them. The
// count is the model's own: a test's parked commands end some time after
// its model is cancelled, and a count shared by all models let the next
// test's settle return while its own commands still ran (flaky under load).
type parkKey struct{}

// strayParked counts parked commands of contexts of no test model.
var strayParked atomic.Int64

// parkedIn is the parked count of the model ctx derives from.
func parkedIn(ctx context.Context) *atomic.Int64 {
	if p, ok := ctx.Value(parkKey{}).(*atomic.Int64); ok {
		return p
	}
	return &strayParked
}

func harnessOf(m *Model) *harness {
	h, _ := harnesses.LoadOrStore(m, &harness{msgs: make(chan tea.Msg, 4096)})
	return h.(*harness)
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	h.inflight.Add(1)
	go func() {
		defer h.inflight.Add(-1)
		if msg := cmd(); msg != nil {
			h.msgs <- msg
		}
	}()
}

// newTestModel builds the inspector at w×h and lets its first loads land.
func newTestModel(t testing.TB, deps uikit.Deps, opts uikit.Options, w, h int) *Model {
	t.Helper()
	m := New(deps, opts)
	m.c.Ctx = context.WithValue(m.c.Ctx, parkKey{}, new(atomic.Int64)) // before any command exists
	m.c.Manual = true
	t.Cleanup(m.cancel)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	settle(t, m, m.Init())
	return m
}

// settle runs cmds and every command their messages start, until quiet.
func settle(t testing.TB, m *Model, cmds ...tea.Cmd) {
	t.Helper()
	h := harnessOf(m)
	for _, c := range cmds {
		h.run(c)
	}
	deadline := time.After(30 * time.Second)
	for {
		var msg tea.Msg
		select {
		case msg = <-h.msgs:
		case msg = <-m.events:
		case <-time.After(time.Millisecond):
			if len(h.msgs) == 0 && len(m.events) == 0 && h.inflight.Load() <= parkedIn(m.c.Ctx).Load() {
				return
			}
			continue
		case <-deadline:
			t.Fatal("settle: the model never went quiet")
		}
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				h.run(c)
			}
			continue
		}
		_, next := m.Update(msg)
		h.run(next)
	}
}

// send delivers one message and settles what it starts.
func send(t testing.TB, m *Model, msg tea.Msg) {
	t.Helper()
	_, cmd := m.Update(msg)
	settle(t, m, cmd)
}

// press types keys: names like "down", "enter", "ctrl+s", or text.
func press(t testing.TB, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		send(t, m, keyMsg(k))
	}
}

// typeText types every rune of s as its own key.
func typeText(t testing.TB, m *Model, s string) {
	t.Helper()
	for _, r := range s {
		send(t, m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(s string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "pgup": {Code: tea.KeyPgUp},
		"pgdown": {Code: tea.KeyPgDown}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
		"backspace": {Code: tea.KeyBackspace}, "space": {Code: tea.KeySpace, Text: " "},
		"ctrl+s": {Code: 's', Mod: tea.ModCtrl}, "ctrl+c": {Code: 'c', Mod: tea.ModCtrl},
		"ctrl+d": {Code: 'd', Mod: tea.ModCtrl}, "ctrl+u": {Code: 'u', Mod: tea.ModCtrl},
	}
	if k, ok := special[s]; ok {
		return tea.KeyPressMsg(k)
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// screen is what the terminal shows, colours stripped.
func screen(m *Model) string { return ansi.Strip(m.View().Content) }

func mustContain(t testing.TB, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Fatalf("screen lacks %q:\n%s", w, s)
		}
	}
}

func mustNotContain(t testing.TB, s string, nots ...string) {
	t.Helper()
	for _, w := range nots {
		if strings.Contains(s, w) {
			t.Fatalf("screen has %q:\n%s", w, s)
		}
	}
}

// runCmd runs one command, waiting at most wait (0: without waiting on
// anything slow) for its message.
func runCmd(cmd tea.Cmd, wait time.Duration) (tea.Msg, bool) {
	if cmd == nil {
		return nil, false
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		return msg, true
	case <-time.After(max(wait, 100*time.Millisecond)):
		return nil, false
	}
}

func fmtType(v any) string { return fmt.Sprintf("%T", v) }
