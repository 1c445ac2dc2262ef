package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"engram/ui"
	"engram/ui/uikit"
)

// screenProbe keeps the inspector's last frame, colours stripped, for a
// flow to wait on.
type screenProbe struct {
	*ui.Model
	mu   sync.Mutex
	last string
}

func (p *screenProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

func (p *screenProbe) View() tea.View {
	v := p.Model.View()
	p.mu.Lock()
	p.last = ansi.Strip(v.Content)
	p.mu.Unlock()
	return v
}

func (p *screenProbe) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// The inspector on the real broker, opened as `engram` opens it, with a
// real worker ingesting into the same data directory: the Topics view
// shows what `engram produce` sends, and the record form's event sent to
// the raw topic goes through every hop of the deployment.
func TestInspectorOnKafka(t *testing.T) {
	_, kargs := testKafka(t)
	kargs = append(kargs, "--kafka-group", fmt.Sprintf("engram-ui-%08x", rand.Uint32()))
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	e := &env{strings.NewReader(""), &syncBuffer{}, &syncBuffer{}, func(k string) string {
		return map[string]string{"DISABLE_HEALTH_SERVER": "true"}[k]
	}}
	fs, o := uiFlags(e)
	if err := parse(fs, append([]string{"--data", data}, kargs...)); err != nil {
		t.Fatal(err)
	}
	deps, closeAll := openUIDeps(ctx, o, fs, e)
	defer closeAll()
	if deps.Err != nil || deps.Bus == nil {
		t.Fatalf("deps: %v, bus %v", deps.Err, deps.Bus)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone, werr := startWorker(wctx, data, kargs)
	defer func() { stopWorker(); <-workerDone }()

	p := &screenProbe{Model: ui.New(deps, uikit.Options{Theme: "dark", Location: time.UTC})}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(120, 40))
	defer tm.Quit()
	wait := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok(p.screen()) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; the screen:\n%s\nworker: %s", what, p.screen(), werr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	wait("the Topics view", func(s string) bool {
		return strings.Contains(s, "Topics · kafka") && strings.Contains(s, "no message yet")
	})

	line := strings.TrimSpace(demoLines(1))
	id := line[strings.Index(line, `"eventId":"`)+11:]
	id = id[:strings.Index(id, `"`)]
	if code := run(ctx, &env{strings.NewReader(line + "\n"), &syncBuffer{}, &syncBuffer{}, e.getenv}, append([]string{"produce"}, kargs...)); code != 0 {
		t.Fatalf("produce: exit %d", code)
	}
	wait("the produced event on the raw topic and its notifications", func(s string) bool {
		return strings.Count(s, id[:12]) >= 3 && strings.Contains(s, "raw ") && strings.Contains(s, "indexed ")
	})

	tm.Send(tea.KeyPressMsg{Code: 'R', Text: "R"})
	wait("the record form", func(s string) bool { return strings.Contains(s, "send to "+"engram-cli-") })
	tm.Type("ui-kafka-session")
	for range 4 {
		tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	tm.Type("sent through the real broker")
	tm.Send(tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl})
	wait("every hop", func(s string) bool {
		return strings.Contains(s, "✓ archived") && strings.Contains(s, "✓ through the deployment in") && strings.Contains(s, ".raw[")
	})
	// The stream has selected the sent event: esc lands on it, though
	// an agent has produced another since (which, following, the stream
	// would select instead).
	later := strings.Split(strings.TrimSpace(demoLines(2)), "\n")[1]
	if code := run(ctx, &env{strings.NewReader(later + "\n"), &syncBuffer{}, &syncBuffer{}, e.getenv}, append([]string{"produce"}, kargs...)); code != 0 {
		t.Fatalf("produce: exit %d", code)
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	wait("the sent event selected in the stream, the later one above it or held", func(s string) bool {
		if strings.Contains(s, "Record a test event") { // esc not taken yet
			return false
		}
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "›") {
				// The later one is above it (the tail brought both at
				// once) or held above (paused on the sent one).
				later := i >= 3 || strings.Contains(lines[0], "1 new")
				return later && strings.Contains(l, "sent through the real broker")
			}
		}
		return false
	})
}
