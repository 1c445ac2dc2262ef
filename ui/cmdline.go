package ui

import (
	"context"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"engram/model"
	"engram/themes"
	"engram/ui/uikit"
	"engram/ui/widget/textinput"
)

// cmdLine is the ":" command line (as k9s has) for what has no key of
// its own. It draws over the status and footer lines, as the filter bar.
type cmdLine struct {
	open  bool
	input textinput.Model
}

func newCmdLine() cmdLine {
	return cmdLine{input: textinput.Model{Prompt: ": ", Placeholder: "command: search TERM, goto ID, turn KEY, theme NAME, export, q (tab completes)", Limit: 500}}
}

// commandHelp names each command with what it takes; tab completes them.
var commandHelp = map[string]string{
	"goto": "goto EVENT_ID: show an event in the detail", "turn": "turn TURN_KEY: show a turn's causal chain",
	"theme": "theme NAME: " + strings.Join(themes.Names(), ", "), "export": "export: write the current event to a file",
	"q": "q: quit", "quit": "quit", "search": "search TERM: go to the rows that hold TERM (n/N), not filtering them",
}

func (c *cmdLine) show() {
	c.open = true
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
		case "tab":
			c.complete()
			return "", false
		}
	}
	c.input.Update(msg)
	return "", false
}

// complete finishes the command name when what is typed starts one only.
func (c *cmdLine) complete() {
	typed := c.input.Value()
	if strings.Contains(typed, " ") {
		return
	}
	var hits []string
	for name := range commandHelp {
		if strings.HasPrefix(name, typed) {
			hits = append(hits, name)
		}
	}
	if len(hits) == 1 {
		c.input.SetValue(hits[0] + " ")
	}
}

// view is the line and, under it, what the command typed takes.
func (c *cmdLine) view(st *uikit.Styles, w int) []string {
	name, _, _ := strings.Cut(strings.TrimSpace(c.input.Value()), " ")
	hint := "enter runs · esc cancels · tab completes"
	if h, ok := commandHelp[name]; ok {
		hint = h
	} else if name == "" {
		names := make([]string, 0, len(commandHelp))
		for n := range commandHelp {
			names = append(names, n)
		}
		sort.Strings(names)
		hint = "commands: " + strings.Join(names, ", ")
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
	case name == "export" && m.c.CanWrite() && m.current() != nil:
		return export(m.c.Ctx, m.c.Deps.Archive, m.current(), m.c.Opts.ExportDir)
	case name == "export":
		return uikit.StatusCmd("export: no event here to export (or read-only)", true)
	case (name == "goto" || name == "turn") && arg == "":
		return uikit.StatusCmd(commandHelp[name], true)
	case name == "goto":
		return gotoEvent(m.c.Ctx, m.c.Deps.Reader, arg)
	case name == "search" || name == "find":
		return tea.Batch(m.setFocus(viewStream), m.stream.Find(arg))
	case name == "turn":
		return tea.Batch(m.setFocus(viewTurns), m.turns.OpenChain(arg))
	}
	return uikit.StatusCmd(":"+uikit.Clean(name)+": no such command (search, goto, turn, theme, export, q)", true)
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
