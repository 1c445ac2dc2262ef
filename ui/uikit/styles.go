package uikit

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"

	"engram/themes"
)

// Styles is every style the inspector draws with, built from a palette so
// that a theme change (or the terminal background answering) rebuilds it
// in one place.
type Styles struct {
	Palette themes.Palette

	App      lipgloss.Style
	Title    lipgloss.Style
	Tab      lipgloss.Style
	TabOn    lipgloss.Style
	Header   lipgloss.Style
	Muted    lipgloss.Style
	Subtle   lipgloss.Style
	Text     lipgloss.Style
	Accent   lipgloss.Style
	Bold     lipgloss.Style
	Success  lipgloss.Style
	Warning  lipgloss.Style
	Error    lipgloss.Style
	Selected lipgloss.Style
	Match    lipgloss.Style
	CurMatch lipgloss.Style // the match n and N are on
	Border   lipgloss.Style

	Status struct{ Info, Warning, Error lipgloss.Style }
	Table  struct{ Head lipgloss.Style }
	Phase  [3]lipgloss.Style // by model.Phase
	JSON   struct {
		Key, String, Number, Bool, Null, Punct, Marker lipgloss.Style
	}
	Stage struct {
		Pending, Running, Done, Failed, Skipped, Slowest lipgloss.Style
	}
	Help help.Styles
}

// NewStyles builds the styles of a palette.
func NewStyles(p themes.Palette) *Styles {
	s := &Styles{Palette: p}
	base := lipgloss.NewStyle()
	fg := func(c color.Color) lipgloss.Style { return base.Foreground(c) }
	s.Text = fg(p.Text)
	s.Muted = fg(p.Muted)
	s.Subtle = fg(p.Subtle)
	s.Accent = fg(p.Accent)
	s.Bold = base.Bold(true)
	s.Success = fg(p.Success)
	s.Warning = fg(p.Warning)
	s.Error = fg(p.Error)
	s.Border = fg(p.Border)
	s.Title = fg(p.Accent).Bold(true)
	s.Header = base
	s.Tab = fg(p.Muted).Padding(0, 1)
	s.TabOn = fg(p.Accent).Bold(true).Underline(true).Padding(0, 1)
	s.Selected = base.Foreground(p.SelectionFg).Background(p.SelectionBg).Bold(true)
	s.Match = base.Background(p.Match).Underline(true)
	s.CurMatch = base.Foreground(p.SelectionFg).Background(p.SelectionBg).Underline(true).Bold(true)
	if p.Mono {
		// Without colour, selection and matches must still be visible,
		// the current match apart from the others.
		s.Selected = base.Reverse(true)
		s.Match = base.Underline(true).Bold(true)
		s.CurMatch = base.Reverse(true).Underline(true).Bold(true)
		s.TabOn = base.Bold(true).Underline(true).Padding(0, 1)
	}
	s.Status.Info = fg(p.Accent)
	s.Status.Warning = fg(p.Warning)
	s.Status.Error = fg(p.Error).Bold(true)
	s.Table.Head = fg(p.Muted).Bold(true)
	s.Phase = [3]lipgloss.Style{fg(p.Observation), fg(p.Action), fg(p.Outcome)}
	s.JSON.Key = fg(p.Key)
	s.JSON.String = fg(p.String)
	s.JSON.Number = fg(p.Number)
	s.JSON.Bool = fg(p.Bool)
	s.JSON.Null = fg(p.Null)
	s.JSON.Punct = fg(p.Muted)
	s.JSON.Marker = fg(p.Warning).Bold(true)
	s.Stage.Pending = fg(p.Subtle)
	s.Stage.Running = fg(p.Accent)
	s.Stage.Done = fg(p.Success)
	s.Stage.Failed = fg(p.Error).Bold(true)
	s.Stage.Skipped = fg(p.Subtle)
	s.Stage.Slowest = fg(p.Warning).Bold(true)
	s.Help = help.Styles{
		ShortKey: fg(p.Accent), ShortDesc: fg(p.Muted), ShortSeparator: fg(p.Subtle),
		FullKey: fg(p.Accent), FullDesc: fg(p.Muted), FullSeparator: fg(p.Subtle),
		Ellipsis: fg(p.Subtle),
	}
	return s
}
