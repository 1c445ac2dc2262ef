package ui

import (
	"context"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"engram/ingest/follow"
	"engram/query"
	"engram/themes"
	"engram/ui/compare"
	"engram/ui/detail"
	"engram/ui/overview"
	"engram/ui/pipeline"
	recallview "engram/ui/recall"
	"engram/ui/record"
	"engram/ui/session"
	"engram/ui/similar"
	"engram/ui/stream"
	"engram/ui/topics"
	"engram/ui/turns"
	"engram/ui/uikit"
)

// Model is the inspector's root: it routes messages (global keys, then the
// open overlay, then the focused view) and draws the frame around the
// focused view.
type Model struct {
	c      *uikit.Common
	cancel context.CancelFunc
	focus  viewID
	back   viewID // where Esc leaves the detail for

	// table is every view, keyed by id (views.go); the fields beside it
	// are the views the root works with by name.
	table    [numViews]entry
	stream   *stream.Model
	turns    *turns.Model
	overview *overview.Model
	// shown is the stream's expression the views last followed.
	shown    string
	detail   *detail.Model
	record   *record.Model
	pipeline *pipeline.Model
	similar  *similar.Model
	compare  *compare.Model
	session  *session.Model
	topics   *topics.Model
	recall   *recallview.Model
	filter   filterBar
	cmdLine  cmdLine
	help     help.Model
	helpView viewport.Model // the ? help, scrolled when taller than the body

	// simBack and simNav are where the detail was opened from when S
	// listed its event's neighbours: Esc from the list goes back there.
	simBack viewID
	simNav  uikit.Navigator
	// cmpFrom and cmpBack are the view = was pressed in and its way back.
	cmpFrom, cmpBack viewID
	// sesFrom and sesBack are the view g L was pressed in and its way back.
	sesFrom, sesBack viewID
	// whyFrom and whyBack are the view w was pressed in and its way back.
	whyFrom, whyBack viewID
	// drill is the stream an Overview bucket opened: its expression and
	// the filter before it, which Esc there puts back.
	drill struct {
		on         bool
		expr, prev string
	}

	showHelp bool
	// titleShown: the last header drawn kept the title (tabAt counts it).
	titleShown bool
	// tabsSkipped: the last header drew "…" for this many tabs on the
	// left, so that the focused one shows (tabAt skips them).
	tabsSkipped int
	chord       string // "y" or "g" while the second key is awaited
	status      string
	statusErr   bool
	fatal       error
	hint        string
	w, h        int

	count      int64
	countKnown bool
	// cov is which extension fields the documents carry (coverage.go),
	// nil until the reader has said, or when it cannot.
	cov        *query.Coverage
	spinning   bool
	themeFixed bool

	events    chan tea.Msg // stages and traces of the pipelines this process runs
	followers []*follower
	followRun uint64
}

// New builds the inspector over deps. Run it with tea.NewProgram, or use Run.
func New(deps uikit.Deps, opts uikit.Options) *Model {
	deps, opts = deps.WithDefaults(), opts.WithDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &uikit.Common{Keys: uikit.DefaultKeyMap(), Deps: deps, Opts: opts, Ctx: ctx, Missing: map[string]bool{}}
	c.Spin = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m := &Model{c: c, cancel: cancel, events: make(chan tea.Msg, 1024), fatal: deps.Err, hint: deps.Hint}
	m.themeFixed = m.applyTheme(opts)
	m.stream = stream.New(c)
	m.turns = turns.New(c)
	m.overview = overview.New(c, func() int { return m.stream.Seen() })
	m.detail = detail.New(c)
	m.record = record.New(c, m.events)
	m.pipeline = pipeline.New(c)
	m.similar = similar.New(c)
	m.compare = compare.New(c)
	m.session = session.New(c)
	m.topics = topics.New(c)
	m.recall = recallview.New(c)
	m.register()
	m.filter = newFilterBar(c)
	m.filter.rows = m.shownRows
	m.cmdLine = newCmdLine()
	m.help = help.New()
	m.help.Styles = c.Styles.Help
	m.helpView = newHelpView()
	if !c.CanWrite() {
		opts.Follow = nil
	}
	for _, f := range opts.Follow {
		m.followers = append(m.followers, &follower{File: follow.File{Name: f}})
	}
	return m
}

// applyTheme sets the styles from the options; it reports whether the
// theme is fixed (else the terminal background decides).
func (m *Model) applyTheme(o uikit.Options) bool {
	p := themes.Dark()
	fixed := true
	switch {
	case o.NoColor:
		p = themes.Mono()
	case o.Theme != "":
		if t, err := themes.ByName(o.Theme); err == nil {
			p = t
		} else {
			m.status, m.statusErr = err.Error(), true
		}
	default:
		fixed = false
	}
	m.setPalette(p)
	return fixed
}

func (m *Model) setPalette(p themes.Palette) {
	m.c.Styles = uikit.NewStyles(p)
	m.c.Spin.Style = m.c.Styles.Accent
	m.help.Styles = m.c.Styles.Help
}

// Init starts loading, the tail, the followers and the pipeline listener.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.listen()}
	if !m.themeFixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.fatal != nil {
		return tea.Batch(cmds...)
	}
	cmds = append(cmds, m.stream.Init(), uikit.LoadCount(m.c.Ctx, m.c.Deps.Reader), loadCoverage(m.c.Ctx, m.c.Deps.Reader))
	if len(m.followers) > 0 {
		cmds = append(cmds, m.c.After(m.c.Opts.Poll, followTickMsg{}))
	}
	return tea.Batch(append(cmds, m.startSpin())...)
}

// Update routes one message. Answers go to the view that asked; keys go
// to the global bindings, then the open overlay, then the focused view.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.BackgroundColorMsg:
		if !m.themeFixed {
			m.setPalette(themes.ForBackground(msg.IsDark()))
		}
	case tea.KeyPressMsg:
		cmd = m.onKey(msg)
	case tea.PasteMsg:
		cmd = m.onPaste(msg)
	case tea.MouseWheelMsg:
		if m.showHelp {
			m.helpView, cmd = m.helpView.Update(msg)
			break
		}
		cmd = m.focused().Update(msg)
	case tea.MouseClickMsg:
		cmd = m.onClick(msg)
	case spinner.TickMsg:
		cmd = m.onSpin(msg)
	default:
		cmd = m.onAnswer(msg)
	}
	return m, tea.Batch(cmd, m.startSpin())
}

// listen waits for the next stage or trace of this process's pipelines.
func (m *Model) listen() tea.Cmd {
	if m.c.Manual {
		return nil
	}
	return listen(m.c.Ctx, m.events)
}

func (m *Model) startSpin() tea.Cmd {
	if m.spinning || m.c.Manual || !m.busy() {
		return nil
	}
	m.spinning = true
	return m.c.Spin.Tick
}

func (m *Model) onSpin(msg spinner.TickMsg) tea.Cmd {
	var cmd tea.Cmd
	m.c.Spin, cmd = m.c.Spin.Update(msg)
	if !m.busy() {
		m.spinning = false
		return nil
	}
	return cmd
}

// cycle moves Tab's way through the views but the Record form: there Tab
// is the next field, so the form is opened with R and left with Esc.
func (m *Model) cycle(delta int) tea.Cmd {
	var ids []viewID
	for _, id := range m.views() {
		if id != viewRecord || m.focus == viewRecord {
			ids = append(ids, id)
		}
	}
	at := 0
	for i, id := range ids {
		if id == m.focus {
			at = i
		}
	}
	return m.setFocus(ids[(at+delta+len(ids))%len(ids)])
}

// Quit ends the program and every command still running.
func (m *Model) quit() tea.Cmd {
	m.cancel()
	return tea.Quit
}
