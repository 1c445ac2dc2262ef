package ui

import (
	"strings"
	"testing"

	"engram/ui/uikit"
)

// A read-only inspector says so in the header however narrow the window:
// at 60 columns the follow state shrinks to its glyph to make room, at 80
// both are whole. Without read-only, 60 columns keep the follow state whole.
func TestHeaderKeepsReadOnlyWhenNarrow(t *testing.T) {
	cases := []struct {
		name        string
		w           int
		set         func(*uikit.Options, *uikit.Deps)
		want, avoid []string
	}{
		{"--readonly 60", 60, func(o *uikit.Options, _ *uikit.Deps) { o.ReadOnly = true }, []string{"read-only · ●", "Overview"}, []string{"following"}},
		{"--readonly 80", 80, func(o *uikit.Options, _ *uikit.Deps) { o.ReadOnly = true }, []string{"read-only · ● following"}, nil},
		{"read-only directory 60", 60, func(_ *uikit.Options, d *uikit.Deps) { d.ReadOnlyWhy = "the data directory /mnt/ro is read-only" }, []string{"read-only · ●"}, nil},
		{"read-only directory 80", 80, func(_ *uikit.Options, d *uikit.Deps) { d.ReadOnlyWhy = "the data directory /mnt/ro is read-only" }, []string{"read-only · ● following"}, nil},
		{"writable 60", 60, func(*uikit.Options, *uikit.Deps) {}, []string{"● following"}, []string{"read-only"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, a := world(3, testBase)
			o, d := testOpts(t), testDeps(r, a)
			c.set(&o, &d)
			m := newTestModel(t, d, o, c.w, 24)
			head := strings.SplitN(screen(m), "\n", 2)[0]
			if w := uikit.Width(head); w > c.w {
				t.Fatalf("header is %d columns wide in %d: %q", w, c.w, head)
			}
			mustContain(t, head, c.want...)
			mustNotContain(t, head, c.avoid...)
		})
	}
}
