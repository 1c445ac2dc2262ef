package cli

import (
	"strings"
	"testing"
)

// hostile holds a screen clear, a cursor move, an OSC 52 clipboard write, a
// one-byte CSI and a bidi override.
const hostile = "clear\x1b[2J move\x1b[10;10H clip\x1b]52;c;ZXZpbA==\x07 csi\u009b31m bidi\u202eevil"

func TestCLINeverPrintsRawEscapes(t *testing.T) {
	c := newCLI(t)
	ev := `{"eventId":"hostile-1","timestamp":"2026-05-08T10:00:00Z","type":"user_input","context":{"sessionId":"s` + jsonEsc(hostile) + `"},"input":{"text":"` + jsonEsc(hostile) + `"},"action":{"reasoning":"` + jsonEsc(hostile) + `"},"tags":["t"]}`
	bad := `{"eventId":"` + jsonEsc(hostile) + `","timestamp":"x"}`
	out1, err1, _ := c.run(ev+"\n"+bad+"\n", "ingest", "--trace")
	out2, err2, code := c.run("", "show", "hostile-1")
	if code != 0 {
		t.Fatalf("show: %d %s", code, err2)
	}
	all := out1 + err1 + out2 + err2
	for _, raw := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(all, raw) {
			t.Fatalf("output holds raw %q:\n%q", raw, all)
		}
	}
	if !strings.Contains(out2, `\u001b[2J`) || !strings.Contains(out2, `\u202e`) {
		t.Fatalf("show output lost the escaped text:\n%s", out2)
	}
}

// jsonEsc writes s as the inside of a JSON string with \u escapes for
// controls, the way a producer would send it.
func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 {
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
