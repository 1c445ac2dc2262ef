package model

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// unsafeRune reports runes that a terminal may act on instead of showing:
// C0 and C1 controls (ESC starts CSI, OSC and DCS sequences; U+009B is a
// one-character CSI), DEL, and the bidirectional overrides and isolates that
// reorder what follows them on screen.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == utf8.RuneError:
		return true
	}
	return false
}

// Printable makes untrusted text safe to write to a terminal: every rune a
// terminal could interpret is shown escaped (\x1b, \u202e), so an event can
// never clear a screen, move the cursor, write the clipboard or reorder text.
// Newlines and tabs are kept only when keepLayout is true.
func Printable(s string, keepLayout bool) string {
	if !needsEscape(s, keepLayout) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
		}
		if keepLayout && (r == '\n' || r == '\t') || !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		if r < 0x100 {
			fmt.Fprintf(&b, `\x%02x`, r)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func needsEscape(s string, keepLayout bool) bool {
	for _, r := range s {
		if unsafeRune(r) && !(keepLayout && (r == '\n' || r == '\t')) {
			return true
		}
	}
	return false
}

// SafeJSON escapes, inside a JSON text, every rune a terminal could
// interpret, as \uXXXX. Such runes can only stand inside strings of valid
// JSON, where \uXXXX means the same, so the result is equivalent JSON.
func SafeJSON(b []byte) []byte {
	s := string(b)
	if !needsEscape(s, true) {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		if r != '\n' && r != '\t' && r != '\r' && unsafeRune(r) && r != utf8.RuneError {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}
