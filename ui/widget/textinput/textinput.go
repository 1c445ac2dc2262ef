// Package textinput is a one-line text field: the filter bar, the detail
// search and the record form's fields. (bubbles' textinput needs a
// clipboard module this build does not carry; this is the little of it
// engram uses.) The cursor is drawn in reverse video, so it does not blink
// and snapshots are stable.
package textinput

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"engram/ui/uikit"
)

// Model is one text field.
type Model struct {
	Prompt      string
	Placeholder string
	Limit       int // runes; 0 = no limit
	// Multiline fields keep line breaks (ctrl+j or alt+enter types one, a
	// paste keeps them) and show each as ↵ on their one line.
	Multiline bool

	val     []rune
	pos     int
	focused bool
}

// Value is the text typed.
func (in *Model) Value() string { return string(in.val) }

// SetValue replaces the text, cut to Limit, with the cursor at its end.
func (in *Model) SetValue(s string) {
	in.val = []rune(s)
	if in.Limit > 0 && len(in.val) > in.Limit {
		in.val = in.val[:in.Limit]
	}
	in.pos = len(in.val)
}

// Focus shows the cursor; Blur hides it.
func (in *Model) Focus() { in.focused = true }

// Blur hides the cursor.
func (in *Model) Blur() { in.focused = false }

// Update edits the value; it reports whether the value changed.
func (in *Model) Update(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		if in.Multiline {
			return in.insert(lineBreaks.Replace(msg.Content))
		}
		return in.insert(strings.Join(strings.Fields(msg.Content), " "))
	case tea.KeyPressMsg:
		return in.key(msg)
	}
	return false
}

// lineBreaks turns a paste's CRLF and lone CR (what terminals send for a
// pasted line break) into the \n the field keeps.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

func (in *Model) key(msg tea.KeyPressMsg) bool {
	before := string(in.val)
	switch msg.String() {
	case "left", "ctrl+b":
		in.pos = max(0, in.pos-1)
	case "right", "ctrl+f":
		in.pos = min(len(in.val), in.pos+1)
	case "home", "ctrl+a":
		in.pos = 0
	case "end", "ctrl+e":
		in.pos = len(in.val)
	case "backspace", "ctrl+h":
		if in.pos > 0 {
			in.val = append(in.val[:in.pos-1], in.val[in.pos:]...)
			in.pos--
		}
	case "delete", "ctrl+d":
		if in.pos < len(in.val) {
			in.val = append(in.val[:in.pos], in.val[in.pos+1:]...)
		}
	case "ctrl+w", "alt+backspace":
		i := in.pos
		for i > 0 && unicode.IsSpace(in.val[i-1]) {
			i--
		}
		for i > 0 && !unicode.IsSpace(in.val[i-1]) {
			i--
		}
		in.val = append(in.val[:i], in.val[in.pos:]...)
		in.pos = i
	case "ctrl+j", "alt+enter":
		if in.Multiline {
			return in.insert("\n")
		}
	case "ctrl+u":
		in.val, in.pos = in.val[in.pos:], 0
	case "ctrl+k":
		in.val = in.val[:in.pos]
	default:
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			return in.insert(msg.Text)
		}
	}
	return string(in.val) != before
}

func (in *Model) insert(s string) bool {
	rs := []rune(s)
	if in.Limit > 0 {
		rs = rs[:max(0, min(len(rs), in.Limit-len(in.val)))]
	}
	if len(rs) == 0 {
		return false
	}
	in.val = append(in.val[:in.pos], append(rs, in.val[in.pos:]...)...)
	in.pos += len(rs)
	return true
}

// View draws the field in w cells, scrolled so the cursor shows. Typed text
// is cleaned like event text: a paste cannot drive the terminal either.
func (in *Model) View(st *uikit.Styles, w int) string {
	pw := ansi.StringWidth(in.Prompt)
	room := max(1, w-pw)
	if len(in.val) == 0 && !in.focused {
		return st.Accent.Render(in.Prompt) + st.Subtle.Render(uikit.Trunc(in.Placeholder, room))
	}
	show := func(rs []rune) string {
		if in.Multiline {
			return uikit.Clean(strings.ReplaceAll(string(rs), "\n", "↵"))
		}
		return uikit.Clean(string(rs))
	}
	if !in.focused { // no cursor to keep in view: the value from its start
		return st.Accent.Render(in.Prompt) + uikit.Trunc(show(in.val), room)
	}
	before := show(in.val[:in.pos])
	at, after := " ", ""
	if in.pos < len(in.val) {
		at = show(in.val[in.pos : in.pos+1])
		after = show(in.val[in.pos+1:])
	}
	// Keep the cursor in view: drop cells from the left of what is before it.
	for ansi.StringWidth(before)+ansi.StringWidth(at) > room && before != "" {
		before = ansi.TruncateLeft(before, 1, "")
	}
	cursor := lipgloss.NewStyle().Reverse(true)
	if !in.focused {
		cursor = lipgloss.NewStyle()
	}
	rest := uikit.Trunc(after, max(0, room-ansi.StringWidth(before)-ansi.StringWidth(at)))
	if len(in.val) == 0 && in.Placeholder != "" {
		ph := []rune(in.Placeholder)
		return st.Accent.Render(in.Prompt) + cursor.Render(string(ph[0])) + st.Subtle.Render(uikit.Trunc(string(ph[1:]), room-1))
	}
	return st.Accent.Render(in.Prompt) + before + cursor.Render(at) + rest
}
