package ui

import (
	"context"
	"maps"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/query"
	"engram/themes"
	"engram/ui/uikit"
	"engram/ui/widget/textinput"
)

// cmdLine is the ":" command line (as k9s has) for what has no key of
// its own. It draws over the status and footer lines, as the filter bar.
type cmdLine struct {
	open  bool
	input textinput.Model
	comp  completer
	// on is the event the focused view was on when the line opened: the
	// tail may move the selection while the command is typed.
	on *model.IndexDoc
}

func newCmdLine() cmdLine {
	return cmdLine{input: textinput.Model{Prompt: ": ", Placeholder: "command: search, goto, turn, time, theme, export, q (tab completes)", Limit: 500}}
}

// commandHelp names each command with what it takes; tab completes them.
var commandHelp = map[string]string{
	"goto": "goto EVENT_ID: show an event in the detail", "turn": "turn TURN_KEY: show a turn's causal chain",
	"theme": "theme NAME: " + strings.Join(themes.Names(), ", "), "export": "export [PATH]: write the event to PATH (a file or a directory)",
	"q": "q: quit", "quit": "quit", "search": "search TERM: go to the rows that hold TERM (n/N), not filtering them",
	"time": "time 2026-05-08T22:00: the stream by event time from that moment back (local time unless a zone is given)",
}

func (c *cmdLine) show(on *model.IndexDoc) {
	c.open, c.on = true, on
	c.comp.reset()
	c.input.SetValue("")
	c.input.Focus()
}

// update handles a key while the line is open; it returns the line to
// run when enter is pressed.
func (c *cmdLine) update(msg tea.Msg) (run string, ok bool) {
	if k, isKey := msg.(tea.KeyPressMsg); isKey {
		switch k.String() {
		case "esc":
			c.open = false
			return "", false
		case "enter":
			c.open = false
			return strings.TrimSpace(c.input.Value()), true
		case "tab", "shift+tab":
			c.input.SetValue(c.comp.tab(c.input.Value(), map[string]int{"tab": 1, "shift+tab": -1}[k.String()], commandCands))
			return "", false
		}
	}
	c.comp.reset()
	c.input.Update(msg)
	return "", false
}

// commandCands completes a command's name, or the theme :theme takes.
func commandCands(typed string) (head string, cands []string, spaced bool) {
	name, arg, hasArg := strings.Cut(typed, " ")
	all := slices.Sorted(maps.Keys(commandHelp))
	prefix := name
	if hasArg {
		if name != "theme" {
			return typed, nil, false
		}
		head, all, prefix = "theme ", themes.Names(), strings.TrimSpace(arg)
	}
	for _, c := range all {
		if strings.HasPrefix(c, prefix) {
			cands = append(cands, c)
		}
	}
	return head, cands, !hasArg
}

// view is the line and, under it, what the command typed takes.
func (c *cmdLine) view(st *uikit.Styles, w int) []string {
	name, _, _ := strings.Cut(strings.TrimSpace(c.input.Value()), " ")
	hint := "enter runs · esc cancels · tab completes"
	if cands, at := c.comp.listed(); cands != nil {
		return []string{c.input.View(st, w), candLine(st, cands, at, w)}
	}
	if h, ok := commandHelp[name]; ok {
		hint = h
	} else if name == "" {
		hint = "commands: " + strings.Join(slices.Sorted(maps.Keys(commandHelp)), ", ")
	}
	return []string{c.input.View(st, w), st.Muted.Render(" " + hint)}
}

// runCommand does what a command line says.
func (m *Model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch {
	case name == "":
		return nil
	case name == "q" || name == "quit":
		return m.quit()
	case name == "theme":
		return m.setTheme(arg)
	case name == "export":
		return m.exportCommand(arg)
	case (name == "goto" || name == "turn") && arg == "":
		return uikit.StatusCmd(commandHelp[name], true)
	case name == "goto":
		return gotoEvent(m.c.Ctx, m.c.Deps.Reader, arg)
	case name == "search" || name == "find":
		return tea.Batch(m.setFocus(viewStream), m.stream.Find(arg))
	case name == "turn":
		return tea.Batch(m.setFocus(viewTurns), m.turns.OpenChain(arg))
	case name == "time":
		at, err := parseMoment(arg, m.c.Opts.Location)
		if err != nil {
			return uikit.StatusCmd("time: "+err.Error(), true)
		}
		return tea.Batch(m.setFocus(viewStream), m.stream.SeekTime(at), m.turns.SetOrder(query.SortTime, m.stream.Seen()))
	}
	return uikit.StatusCmd(":"+uikit.Clean(name)+": no such command (search, goto, turn, time, theme, export, q)", true)
}

// setTheme switches the palette for the rest of the session.
func (m *Model) setTheme(name string) tea.Cmd {
	p, err := themes.ByName(name)
	if err != nil {
		return uikit.StatusCmd("theme: "+err.Error(), true)
	}
	m.setPalette(p)
	m.themeFixed = true // the terminal's background no longer decides
	return uikit.StatusCmd("theme "+p.Name, false)
}

// gotMsg is the event :goto looked up.
type gotMsg struct {
	id  string
	doc *model.IndexDoc
	err error
}

func gotoEvent(ctx context.Context, r uikit.Reader, id string) tea.Cmd {
	return func() tea.Msg {
		d, err := r.Document(ctx, id)
		return gotMsg{id, d, err}
	}
}

// onGot shows the event :goto found, stepping through the stream when it
// is one of its rows.
func (m *Model) onGot(msg gotMsg) tea.Cmd {
	if msg.err != nil || msg.doc == nil {
		why := "not in the index"
		if msg.err != nil {
			why = uikit.ErrorText(msg.err)
		}
		return uikit.StatusCmd("goto "+uikit.Clean(msg.id)+": "+why, true)
	}
	var nav uikit.Navigator
	if m.stream.Rows().Index(msg.doc.EventID) >= 0 {
		nav = m.stream
	}
	if m.focus != viewDetail {
		m.back = m.focus
	}
	m.focus = viewDetail
	return m.detail.Open(msg.doc, nav)
}
