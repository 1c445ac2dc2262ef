package ui

import (
	"fmt"
	"strings"
	"time"
)

// momentLayouts are the forms :time reads, without a zone (read in the
// inspector's location) or with one.
var momentLayouts = []string{
	"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02",
}

// parseMoment reads the moment of :time: an RFC 3339 time with a zone, or
// a date and time (to the minute or second) or a date in loc.
func parseMoment(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("which moment? like 2026-05-08T22:00")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if loc == nil {
		loc = time.Local
	}
	for _, l := range momentLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a moment: write it like 2026-05-08T22:00, 2026-05-08 22:00:30 or 2026-05-08T22:00:00Z", s)
}
