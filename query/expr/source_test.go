package expr

import (
	"strings"
	"testing"
)

// TestSourceField: source: takes session, ambient or system (any case),
// is a keyword field with a closed set, and refuses another value naming
// the ones it takes.
func TestSourceField(t *testing.T) {
	e, err := Parse("source:System -source:ambient")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Terms) != 2 || e.Terms[0].Kind != KindField || e.Terms[0].Field != FieldSource || e.Terms[0].Value != "system" ||
		!e.Terms[1].Neg || e.Terms[1].Value != "ambient" {
		t.Fatalf("%+v", e.Terms)
	}
	if got := e.String(); got != "source:system -source:ambient" {
		t.Errorf("String %q", got)
	}
	_, err = Parse("source:daemon")
	if err == nil || !strings.Contains(err.Error(), "valid sources: session, ambient, system") {
		t.Errorf("source:daemon: %v", err)
	}
	if v := values(FieldSource); strings.Join(v, ",") != "session,ambient,system" {
		t.Errorf("Values %v", v)
	}
}
