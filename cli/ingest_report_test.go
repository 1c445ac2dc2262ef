package cli

import (
	"bytes"
	"strings"
	"testing"

	"charm.land/bubbles/v2/progress"
)

// Progress lines written to a pipe or a file carry no escape codes, and a
// terminal's bar has no colour under NO_COLOR.
func TestProgressLinesArePlain(t *testing.T) {
	for _, c := range []struct {
		tty     bool
		noColor string
	}{{false, ""}, {true, "1"}} {
		var errb bytes.Buffer
		e := &env{stderr: &errb, getenv: func(k string) string {
			if k == "NO_COLOR" {
				return c.noColor
			}
			return ""
		}}
		r := newReporter(e, false, nil)
		r.tty = c.tty
		r.total.Store(100)
		r.bytesRead.Store(40)
		r.finished.Store(7)
		bar := progress.New(progress.WithWidth(30), progress.WithoutPercentage())
		r.drawProgress(&bar)
		out := errb.String()
		if c.tty {
			out = strings.TrimPrefix(out, "\r\x1b[2K") // the terminal's line clearing is not colour
		}
		if strings.Contains(out, "\x1b") || !strings.Contains(out, "40%") {
			t.Fatalf("tty %v NO_COLOR %q: progress %q", c.tty, c.noColor, out)
		}
	}
}
