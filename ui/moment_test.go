package ui

import (
	"strings"
	"testing"
	"time"
)

func TestParseMoment(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CEST", 2*3600)
	}
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-05-08T22:00", time.Date(2026, 5, 8, 20, 0, 0, 0, time.UTC)},
		{" 2026-05-08 22:00:30 ", time.Date(2026, 5, 8, 20, 0, 30, 0, time.UTC)},
		{"2026-05-08", time.Date(2026, 5, 7, 22, 0, 0, 0, time.UTC)},
		{"2026-05-08T22:00:00Z", time.Date(2026, 5, 8, 22, 0, 0, 0, time.UTC)},
		{"2026-05-08T22:00:00.5+01:00", time.Date(2026, 5, 8, 21, 0, 0, 5e8, time.UTC)},
	} {
		got, err := parseMoment(c.in, paris)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseMoment(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "tomorrow", "22:00", "2026-13-01"} {
		if _, err := parseMoment(bad, paris); err == nil || !strings.Contains(err.Error(), "2026-05-08T22:00") {
			t.Errorf("parseMoment(%q): %v; want an error showing the form", bad, err)
		}
	}
}
