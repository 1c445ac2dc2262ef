package textinput

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/themes"
	"engram/ui/uikit"
)

func keys(in *Model, names ...string) {
	special := map[string]tea.KeyPressMsg{
		"left": {Code: tea.KeyLeft}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
		"backspace": {Code: tea.KeyBackspace}, "ctrl+w": {Code: 'w', Mod: tea.ModCtrl},
		"ctrl+u": {Code: 'u', Mod: tea.ModCtrl}, "ctrl+k": {Code: 'k', Mod: tea.ModCtrl},
	}
	for _, n := range names {
		if k, ok := special[n]; ok {
			in.Update(k)
			continue
		}
		for _, r := range n {
			in.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

func TestEditing(t *testing.T) {
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{"type:action"}, "type:action"},
		{[]string{"ab", "left", "X"}, "aXb"},
		{[]string{"one two", "ctrl+w"}, "one "},
		{[]string{"abc", "home", "ctrl+k"}, ""},
		{[]string{"abc", "left", "ctrl+u"}, "c"},
		{[]string{"abc", "backspace", "home", "backspace"}, "ab"},
	}
	for _, tt := range tests {
		var in Model
		keys(&in, tt.keys...)
		if got := in.Value(); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.keys, got, tt.want)
		}
	}
}

func TestLimitAndPasteOnOneLine(t *testing.T) {
	in := Model{Limit: 5}
	in.Update(tea.PasteMsg{Content: "ab\ncd\tefgh"})
	if in.Value() != "ab cd" {
		t.Fatalf("pasted %q, want the words on one line cut to 5 runes", in.Value())
	}
}

func TestViewCleansAndKeepsTheCursorInSight(t *testing.T) {
	in := Model{Prompt: "/ "}
	in.Focus()
	in.SetValue(strings.Repeat("x", 40) + "\x1b[2J")
	v := ansi.Strip(in.View(uikit.NewStyles(themes.Dark()), 20))
	if strings.Contains(v, "\x1b") || ansi.StringWidth(v) > 20 || !strings.HasPrefix(v, "/ ") || !strings.Contains(v, `\x1b[2J`) {
		t.Fatalf("view %q", v)
	}
}

// Terminals send a paste's line breaks as CR (tmux paste-buffer -p does):
// a multi-line field keeps them as line breaks, never as raw CRs.
func TestPasteCarriageReturnsAreLineBreaks(t *testing.T) {
	for _, paste := range []string{"line one\rline two\r", "line one\r\nline two\r\n", "line one\nline two\n"} {
		in := Model{Multiline: true}
		in.Focus()
		in.Update(tea.PasteMsg{Content: paste})
		if got, want := in.Value(), "line one\nline two\n"; got != want {
			t.Errorf("paste %q: value %q, want %q", paste, got, want)
		}
	}
	one := Model{}
	one.Update(tea.PasteMsg{Content: "line one\rline two"})
	if got := one.Value(); got != "line one line two" {
		t.Errorf("one-line field: %q", got)
	}
}

// A field without the focus shows the start of a long value, not its end
// (where the cursor was left).
func TestBlurredFieldShowsItsStart(t *testing.T) {
	in := Model{}
	in.SetValue("Decide how to handle: a long perception of the agent")
	got := ansi.Strip(in.View(uikit.NewStyles(themes.Dark()), 20))
	if !strings.HasPrefix(got, "Decide how") {
		t.Fatalf("blurred field shows %q", got)
	}
}
