package model_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"engram/model"
)

func TestArchiveKey(t *testing.T) {
	cases := []struct {
		name, id, ts, want string
	}{
		{"demo", "demo-event-001", "2026-05-08T22:31:25.237Z", "events/2026/05/08/demo-event-001.json"},
		// 23:30 at UTC-5 is 04:30 UTC the next day.
		{"west of UTC rolls forward", "e", "2026-05-08T23:30:00-05:00", "events/2026/05/09/e.json"},
		// 00:10 at UTC+5 is 19:10 UTC the previous day.
		{"east of UTC just after local midnight", "e", "2026-05-09T00:10:00+05:00", "events/2026/05/08/e.json"},
		{"east of UTC at exactly local midnight", "e", "2026-05-09T00:00:00+05:00", "events/2026/05/08/e.json"},
		{"east of UTC, late enough to stay", "e", "2026-05-09T05:00:00+05:00", "events/2026/05/09/e.json"},
		{"half-hour zone", "e", "2026-05-09T00:29:59.999+00:30", "events/2026/05/08/e.json"},
		{"zero padding", "e", "2026-01-02T03:04:05Z", "events/2026/01/02/e.json"},
		{"year end rolls into next year", "e", "2026-12-31T23:30:00-01:00", "events/2027/01/01/e.json"},
		{"year start rolls back", "e", "2027-01-01T00:30:00+01:00", "events/2026/12/31/e.json"},
		{"leap day", "e", "2028-03-01T01:00:00+02:00", "events/2028/02/29/e.json"},
		{"four-digit year padding", "e", "0999-07-04T12:00:00Z", "events/0999/07/04/e.json"},
		{"id kept verbatim", "Évt 1:a", "2026-05-08T00:00:00Z", "events/2026/05/08/Évt 1:a.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := model.ArchiveKey(c.id, c.ts)
			if err != nil || got != c.want {
				t.Errorf("ArchiveKey(%q, %q) = %q, %v; want %q", c.id, c.ts, got, err, c.want)
			}
		})
	}
}

func TestArchiveKeyErrors(t *testing.T) {
	cases := []struct{ id, ts, want string }{
		{"e", "2026-05-08T10:00:00", `"2026-05-08T10:00:00" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`},
		{"e", "", `"" is not an RFC 3339 timestamp with a zone (like 2026-05-08T22:31:25Z)`},
		{"../e", "2026-05-08T10:00:00Z", `"../e" must not contain / or \ (it is the last part of an object key)`},
		{"", "2026-05-08T10:00:00Z", "required"},
	}
	for _, c := range cases {
		got, err := model.ArchiveKey(c.id, c.ts)
		if err == nil || err.Error() != c.want {
			t.Errorf("ArchiveKey(%q, %q) = %q, %v; want error %q", c.id, c.ts, got, err, c.want)
		}
	}
}

func TestArchivePrefix(t *testing.T) {
	plus5 := time.FixedZone("+05", 5*3600)
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 5, 9, 0, 10, 0, 0, plus5), "events/2026/05/08/"},
		{time.Date(2026, 5, 9, 5, 0, 0, 0, plus5), "events/2026/05/09/"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "events/2026/01/02/"},
	}
	for _, c := range cases {
		if got := model.ArchivePrefix(c.t); got != c.want {
			t.Errorf("ArchivePrefix(%v) = %q, want %q", c.t, got, c.want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	got, err := model.ParseTimestamp("2026-05-08T23:30:00.5-05:00")
	want := time.Date(2026, 5, 9, 4, 30, 0, 500_000_000, time.UTC)
	if err != nil || !got.Equal(want) {
		t.Errorf("ParseTimestamp = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"2026-05-08T10:00:00", "2026-05-08 10:00:00Z", "20260508T100000Z", "2026-05-08T10:00Z"} {
		if _, err := model.ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q) accepted", bad)
		}
	}
}

func TestTurnKey(t *testing.T) {
	cases := []struct{ turn, trace, id, want string }{
		{"turn-1", "trace-1", "evt-1", "turn-1"},
		{"turn-1", "", "evt-1", "turn-1"},
		{"", "trace-1", "evt-1", "trace-1"},
		{"", "", "evt-1", "evt-1"},
		{"", "", "", ""},
	}
	for _, c := range cases {
		if got := model.TurnKey(c.turn, c.trace, c.id); got != c.want {
			t.Errorf("TurnKey(%q, %q, %q) = %q, want %q", c.turn, c.trace, c.id, got, c.want)
		}
		e := &model.Event{EventID: c.id, Context: model.Context{TurnID: c.turn, TraceID: c.trace}}
		if got := e.TurnKey(); got != c.want {
			t.Errorf("Event.TurnKey() = %q, want %q", got, c.want)
		}
		d := &model.IndexDoc{EventID: c.id, TurnID: c.turn, TraceID: c.trace}
		if got := d.TurnKey(); got != c.want {
			t.Errorf("IndexDoc.TurnKey() = %q, want %q", got, c.want)
		}
	}
}

func TestPhaseOf(t *testing.T) {
	cases := []struct {
		typ  string
		want model.Phase
	}{
		{model.TypeUserInput, model.PhaseObservation},
		{model.TypeEnvironmentalObservation, model.PhaseObservation},
		{model.TypeSystemEvent, model.PhaseObservation},
		{model.TypeObservation, model.PhaseObservation},
		{model.TypeAgentAction, model.PhaseAction},
		{model.TypeAction, model.PhaseAction},
		{model.TypeToolResult, model.PhaseOutcome},
		{model.TypeConsolidationOutput, model.PhaseOutcome},
		{model.TypeOutcome, model.PhaseOutcome},
		{"something_new", model.PhaseObservation},
		{"", model.PhaseObservation},
	}
	if len(cases)-2 != len(model.EventTypes) {
		t.Fatalf("PhaseOf cases cover %d types, EventTypes has %d", len(cases)-2, len(model.EventTypes))
	}
	for _, c := range cases {
		if got := model.PhaseOf(c.typ); got != c.want {
			t.Errorf("PhaseOf(%q) = %v, want %v", c.typ, got, c.want)
		}
		d := &model.IndexDoc{EventType: c.typ}
		if got := d.Phase(); got != c.want {
			t.Errorf("IndexDoc.Phase() of %q = %v, want %v", c.typ, got, c.want)
		}
	}
	if !(model.PhaseObservation < model.PhaseAction && model.PhaseAction < model.PhaseOutcome) {
		t.Error("phases are not in causal order")
	}
	for p, want := range map[model.Phase]string{
		model.PhaseObservation: "observation", model.PhaseAction: "action", model.PhaseOutcome: "outcome",
	} {
		if p.String() != want {
			t.Errorf("Phase(%d).String() = %q, want %q", int(p), p.String(), want)
		}
	}
}

// RFC 3339 offsets run to ±23:59, and keys stay in date order only for
// years 0001 to 9999 in UTC: anything else is rejected, saying why.
func TestParseTimestampRange(t *testing.T) {
	for bad, why := range map[string]string{
		"2026-05-08T10:00:00+24:00": "offset +24:00 is outside ±23:59",
		"2026-05-08T10:00:00-24:00": "offset -24:00 is outside ±23:59",
		"0000-05-08T10:00:00Z":      "year 0 (in UTC) is outside 0001 to 9999",
		"0001-01-01T00:30:00+01:00": "year 0 (in UTC) is outside 0001 to 9999",
		"9999-12-31T23:30:00-01:00": "year 10000 (in UTC) is outside 0001 to 9999",
	} {
		_, err := model.ParseTimestamp(bad)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseTimestamp(%q) = %v, want %q", bad, err, why)
		}
	}
	for _, good := range []string{"2026-05-08T10:00:00+23:59", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"} {
		if _, err := model.ParseTimestamp(good); err != nil {
			t.Errorf("ParseTimestamp(%q): %v", good, err)
		}
	}
}

// ArchivePrefix, built by hand, is the prefix fmt's "events/%04d/%02d/%02d/"
// gives of the UTC date, for any time a timestamp can hold, in any zone;
// AppendArchivePrefix appends the same.
func TestArchivePrefixFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	for range 20000 {
		ts := time.Unix(lo+r.Int64N(hi-lo), r.Int64N(1e9)).In(time.FixedZone("", (r.IntN(47)-23)*3600))
		u := ts.UTC()
		want := fmt.Sprintf("events/%04d/%02d/%02d/", u.Year(), int(u.Month()), u.Day())
		if got := model.ArchivePrefix(ts); got != want {
			t.Fatalf("%v: ArchivePrefix %q, want %q", ts, got, want)
		}
		if got := string(model.AppendArchivePrefix([]byte("x"), ts)); got != "x"+want {
			t.Fatalf("%v: AppendArchivePrefix %q, want %q", ts, got, "x"+want)
		}
	}
}

func TestArchiveKeyDay(t *testing.T) {
	ts := time.Date(2026, 3, 1, 23, 59, 59, 0, time.FixedZone("", -5*3600))
	day, ok := model.ArchiveKeyDay(model.ArchivePrefix(ts) + "ev.json")
	if want := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC); !ok || !day.Equal(want) {
		t.Fatalf("ArchiveKeyDay = %v, %v; want %v", day, ok, want)
	}
	for _, k := range []string{"", "events/", "events/2026/03/", "events/2026/13/01/x", "other/2026/03/01/x"} {
		if _, ok := model.ArchiveKeyDay(k); ok {
			t.Errorf("ArchiveKeyDay(%q) is a day", k)
		}
	}
}
