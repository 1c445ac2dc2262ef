package cli

import (
	"strings"
	"testing"
)

// TestConfigBadInputNewSettings: a bad value of the newer settings in a
// config file, or a setting outside a profile (which was ignored without a
// word), is one line naming the key and where it comes from, exit 1.
func TestConfigBadInputNewSettings(t *testing.T) {
	for body, want := range map[string]string{
		"[recall]\nweights = \"text=1\"\n":                         `top-level key "recall": settings go in a profile, as [profiles.default] recall`,
		"data = \"/tmp/x\"\n":                                      `top-level key "data"`,
		"[profiles.default.recall]\nweights = \"text=1,text=2\"\n": `recall.weights = "text=1,text=2" (profile default): weight "text=2": text is given twice`,
		"[profiles.default.recall]\nformula = 5\n":                 `recall.formula = "5" (profile default): want hybrid, salience`,
		"[profiles.default.recall]\nwindow = -1\n":                 `recall.window = "-1" (profile default): want a positive whole number`,
		"[profiles.default.recall]\nhalf_life = \"0s\"\n":          `recall.half_life = "0s" (profile default): want a duration above zero`,
		"[profiles.default.recall]\nnosuch = 1\n":                  `profile default: unknown key "recall.nosuch"`,
	} {
		cfg := writeConfig(t, body)
		c := newCLI(t)
		_, stderr, code := c.run("", "recall", "--config", cfg, "vector")
		if code != 1 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("config %q: exit %d, stderr %q; want 1 and one line with %q", body, code, stderr, want)
		}
	}
}
