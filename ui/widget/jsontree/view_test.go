package jsontree

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"engram/themes"
	"engram/ui/uikit"
)

// Regression: the search highlight slices the text by offsets found in its
// lower-cased copy; equal total length does not mean equal offsets, so a
// rune is cut and a lone continuation byte (0x9b, an 8-bit CSI) is written.
func TestSearchHighlightKeepsRunesWhole(t *testing.T) {
	c := &uikit.Common{Styles: uikit.NewStyles(themes.Dark())}
	j := New(c, map[string]bool{})
	j.term = "û"
	out := j.paint(seg{"ȺÛİq", rString}, false)
	if !utf8.ValidString(out) || ansi.Strip(out) != "ȺÛİq" {
		t.Fatalf("highlight cut runes: %q", out)
	}
	if !strings.Contains(out, c.Styles.Match.Render("Û")) {
		t.Fatalf("Û is not highlighted for û: %q", out)
	}
}
