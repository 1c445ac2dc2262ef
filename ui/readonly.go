package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"engram/ui/uikit"
)

// readOnlyWhy is why nothing can be written here, as a refused key says.
func (m *Model) readOnlyWhy() string {
	switch {
	case m.c.Deps.ReadOnlyWhy != "":
		return uikit.Clean(m.c.Deps.ReadOnlyWhy)
	case m.c.Opts.ReadOnly:
		return "engram was started with --readonly"
	}
	return "this inspector has no pipeline to write with"
}

// refuse says why a write key does nothing, rather than nothing.
func (m *Model) refuse(msg tea.KeyPressMsg) tea.Cmd {
	km := m.c.Keys
	what := "recording"
	switch {
	case key.Matches(msg, km.Export):
		what = "export"
	case key.Matches(msg, km.Duplicate):
		what = "duplicating"
	}
	return uikit.StatusCmd(uikit.Clean(msg.String())+": "+what+" is off: read-only, "+m.readOnlyWhy(), true)
}

// exportCommand is :export [PATH]: the event the focused view was on when
// the line opened, to PATH (a directory takes the usual name) or, with
// none, where e writes.
func (m *Model) exportCommand(path string) tea.Cmd {
	d := m.cmdLine.on
	switch {
	case !m.c.CanWrite():
		return uikit.StatusCmd("export is off: read-only, "+m.readOnlyWhy(), true)
	case d == nil:
		return uikit.StatusCmd("export: no event was selected when : was pressed", true)
	case path == "":
		return export(m.c.Ctx, m.c.Deps.Archive, d, m.c.Opts.ExportDir)
	}
	return exportTo(m.c.Ctx, m.c.Deps.Archive, d, path)
}
