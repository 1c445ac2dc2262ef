package cli

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Fixed column widths of a streamed table (tail), where rows are not known
// in advance.
var streamWidths = []int{19, 11, 10, 20, 4, 4}

// writeTable prints rows (the first may be a header) aligned, every cell
// made printable. Widths are display widths: an East Asian wide character
// or an emoji takes two columns. The last column is cut to fit width, or
// kept whole when width <= 0 (--wide). With stream, the columns have the
// fixed streamWidths (cells cut to them).
func writeTable(w io.Writer, rows [][]string, width int, stream bool) error {
	if len(rows) == 0 {
		return nil
	}
	cells := make([][]string, len(rows))
	ncol := len(rows[0])
	widths := make([]int, ncol)
	for i, row := range rows {
		cells[i] = make([]string, len(row))
		for j, c := range row {
			c = printable(c)
			cells[i][j] = c
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	if stream {
		copy(widths, streamWidths)
	}
	used := 0
	for _, n := range widths[:ncol-1] {
		used += n + 2
	}
	last := max(width-used, 20)
	var b strings.Builder
	for _, row := range cells {
		for j, c := range row {
			if j == ncol-1 {
				if width > 0 {
					c = cut(c, last)
				}
				b.WriteString(c)
				break
			}
			c = cut(c, widths[j])
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[j]-ansi.StringWidth(c)+2))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cut shortens s to n columns of display, marking the cut with an
// ellipsis; a wide character that would straddle the edge goes whole.
func cut(s string, n int) string {
	if ansi.StringWidth(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return ansi.Truncate(s, n, "…")
}
