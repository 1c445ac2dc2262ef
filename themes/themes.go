package themes

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
)

// Palette is one theme's semantic colours.
type Palette struct {
	Name string
	// Dark says the palette is meant for a dark background.
	Dark bool
	// Mono: no colour at all (NO_COLOR); emphasis comes from bold,
	// underline and reverse video only.
	Mono bool

	Text, Muted, Subtle color.Color
	Accent, Accent2     color.Color
	Success, Warning    color.Color
	Error               color.Color
	Border              color.Color
	SelectionFg         color.Color
	SelectionBg         color.Color
	// Match is the background of a search hit.
	Match color.Color

	// JSON tokens.
	Key, String, Number, Bool, Null color.Color

	// Phases of the causal chain.
	Observation, Action, Outcome color.Color
}

// Dark is the default palette for dark terminals.
func Dark() Palette {
	c := lipgloss.Color
	return Palette{
		Name: "dark", Dark: true,
		Text: c("#DDDDDD"), Muted: c("#8A8A8A"), Subtle: c("#5C5C5C"),
		Accent: c("#7AA2F7"), Accent2: c("#BB9AF7"),
		Success: c("#9ECE6A"), Warning: c("#E0AF68"), Error: c("#F7768E"),
		Border:      c("#3B4261"),
		SelectionFg: c("#FFFFFF"), SelectionBg: c("#2E3C64"),
		Match: c("#6B5300"),
		Key:   c("#7DCFFF"), String: c("#9ECE6A"), Number: c("#FF9E64"), Bool: c("#BB9AF7"), Null: c("#8A8A8A"),
		Observation: c("#7DCFFF"), Action: c("#E0AF68"), Outcome: c("#BB9AF7"),
	}
}

// light is the palette for light terminals.
func light() Palette {
	c := lipgloss.Color
	return Palette{
		Name: "light",
		Text: c("#24292F"), Muted: c("#6E7781"), Subtle: c("#AFB8C1"),
		Accent: c("#0550AE"), Accent2: c("#8250DF"),
		Success: c("#1A7F37"), Warning: c("#9A6700"), Error: c("#CF222E"),
		Border:      c("#D0D7DE"),
		SelectionFg: c("#000000"), SelectionBg: c("#DDF4FF"),
		Match: c("#FFF8C5"),
		Key:   c("#0550AE"), String: c("#0A3069"), Number: c("#953800"), Bool: c("#8250DF"), Null: c("#6E7781"),
		Observation: c("#0969DA"), Action: c("#9A6700"), Outcome: c("#8250DF"),
	}
}

// highContrast uses the 16 basic ANSI colours at full strength on black,
// so that the terminal's own accessible palette applies.
func highContrast() Palette {
	c := lipgloss.Color
	return Palette{
		Name: "high-contrast", Dark: true,
		Text: c("15"), Muted: c("7"), Subtle: c("7"),
		Accent: c("14"), Accent2: c("13"),
		Success: c("10"), Warning: c("11"), Error: c("9"),
		Border:      c("15"),
		SelectionFg: c("0"), SelectionBg: c("11"),
		Match: c("13"),
		Key:   c("14"), String: c("10"), Number: c("11"), Bool: c("13"), Null: c("7"),
		Observation: c("14"), Action: c("11"), Outcome: c("13"),
	}
}

// Mono is the palette of NO_COLOR: every colour is the terminal's default.
func Mono() Palette {
	n := lipgloss.NoColor{}
	return Palette{
		Name: "mono", Dark: true, Mono: true,
		Text: n, Muted: n, Subtle: n, Accent: n, Accent2: n,
		Success: n, Warning: n, Error: n, Border: n,
		SelectionFg: n, SelectionBg: n, Match: n,
		Key: n, String: n, Number: n, Bool: n, Null: n,
		Observation: n, Action: n, Outcome: n,
	}
}

var builtin = map[string]func() Palette{
	"dark":          Dark,
	"light":         light,
	"high-contrast": highContrast,
	"mono":          Mono,
}

// Names lists the built-in themes, sorted.
func Names() []string {
	names := make([]string, 0, len(builtin))
	for n := range builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ByName returns a built-in palette.
func ByName(name string) (Palette, error) {
	if f, ok := builtin[strings.ToLower(name)]; ok {
		return f(), nil
	}
	return Palette{}, fmt.Errorf("no theme %q (themes: %s)", name, strings.Join(Names(), ", "))
}

// ForBackground picks the default palette for a terminal background.
func ForBackground(dark bool) Palette {
	if dark {
		return Dark()
	}
	return light()
}
