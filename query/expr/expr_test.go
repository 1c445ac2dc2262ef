package expr

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"engram/model"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParse(t *testing.T) {
	tests := []struct {
		in    string
		want  []Term
		canon string // "" means same as in
	}{
		{"", nil, ""},
		{"   \t\n ", nil, ""},
		{"memory", []Term{{Kind: KindText, Value: "memory"}}, ""},
		{"Memory index", []Term{{Kind: KindText, Value: "Memory"}, {Kind: KindText, Value: "index"}}, ""},
		{`"fast retrieval"`, []Term{{Kind: KindText, Value: "fast retrieval", Phrase: true}}, ""},
		{`"one"`, []Term{{Kind: KindText, Value: "one", Phrase: true}}, ""},
		{`"say \"hi\" \\ \x"`, []Term{{Kind: KindText, Value: `say "hi" \ \x`, Phrase: true}}, `"say \"hi\" \\ \\x"`},
		{"12:30 a1:b c++ don't", []Term{{Kind: KindText, Value: "12:30"}, {Kind: KindText, Value: "a1:b"}, {Kind: KindText, Value: "c++"}, {Kind: KindText, Value: "don't"}}, ""},
		{"-word", []Term{{Kind: KindText, Neg: true, Value: "word"}}, ""},
		{`-"a phrase"`, []Term{{Kind: KindText, Neg: true, Value: "a phrase", Phrase: true}}, ""},
		{"a-b", []Term{{Kind: KindText, Value: "a-b"}}, ""},
		{"type:tool_result", []Term{{Kind: KindField, Field: "type", Value: "tool_result"}}, ""},
		{"session:s-1", []Term{{Kind: KindField, Field: "session", Value: "s-1"}}, ""},
		{"turn:t:1", []Term{{Kind: KindField, Field: "turn", Value: "t:1"}}, ""},
		{"agent:planner", []Term{{Kind: KindField, Field: "agent", Value: "planner"}}, ""},
		{"tenant:acme", []Term{{Kind: KindField, Field: "tenant", Value: "acme"}}, ""},
		{"trace:abc123", []Term{{Kind: KindField, Field: "trace", Value: "abc123"}}, ""},
		{`tool:"web search"`, []Term{{Kind: KindField, Field: "tool", Value: "web search"}}, ""},
		{`tool:"search"`, []Term{{Kind: KindField, Field: "tool", Value: "search"}}, "tool:search"},
		{`tool:a\b`, []Term{{Kind: KindField, Field: "tool", Value: `a\b`}}, `tool:"a\\b"`},
		{"tag:demo", []Term{{Kind: KindField, Field: "tag", Value: "demo"}}, ""},
		{"-tag:demo", []Term{{Kind: KindField, Neg: true, Field: "tag", Value: "demo"}}, ""},
		{"id:demo-event-001", []Term{{Kind: KindField, Field: "id", Value: "demo-event-001"}}, ""},
		{"TYPE:Action Tag:Y", []Term{{Kind: KindField, Field: "type", Value: "action"}, {Kind: KindField, Field: "tag", Value: "Y"}}, "type:action tag:Y"},
		{`-type:"USER_INPUT"`, []Term{{Kind: KindField, Neg: true, Field: "type", Value: "user_input"}}, "-type:user_input"},
		{"success:true", []Term{{Kind: KindSuccess, Bool: true}}, ""},
		{"success:false", []Term{{Kind: KindSuccess}}, ""},
		{"success:FALSE", []Term{{Kind: KindSuccess}}, "success:false"},
		{"-success:true", []Term{{Kind: KindSuccess, Neg: true, Bool: true}}, ""},
		{"importance>=0.7", []Term{{Kind: KindCompare, Field: "importance", Op: OpGE, Num: 0.7}}, ""},
		{"importance>0.7", []Term{{Kind: KindCompare, Field: "importance", Op: OpGT, Num: 0.7}}, ""},
		{"reward<0.3", []Term{{Kind: KindCompare, Field: "reward", Op: OpLT, Num: 0.3}}, ""},
		{"reward<=.3", []Term{{Kind: KindCompare, Field: "reward", Op: OpLE, Num: 0.3}}, "reward<=0.3"},
		{"confidence=0.5", []Term{{Kind: KindCompare, Field: "confidence", Op: OpEQ, Num: 0.5}}, ""},
		{"latency>500", []Term{{Kind: KindCompare, Field: "latency", Op: OpGT, Num: 500}}, ""},
		{"latency>=1e3", []Term{{Kind: KindCompare, Field: "latency", Op: OpGE, Num: 1000}}, "latency>=1000"},
		{"reward>-0.5", []Term{{Kind: KindCompare, Field: "reward", Op: OpGT, Num: -0.5}}, ""},
		{`importance>="0.5"`, []Term{{Kind: KindCompare, Field: "importance", Op: OpGE, Num: 0.5}}, "importance>=0.5"},
		{"latency>5ms", []Term{{Kind: KindCompare, Field: "latency", Op: OpGT, Num: 5}}, "latency>5"},
		{"latency>1s", []Term{{Kind: KindCompare, Field: "latency", Op: OpGT, Num: 1000}}, "latency>1000"},
		{"latency<=1.5s", []Term{{Kind: KindCompare, Field: "latency", Op: OpLE, Num: 1500}}, "latency<=1500"},
		{"latency>=2m", []Term{{Kind: KindCompare, Field: "latency", Op: OpGE, Num: 120000}}, "latency>=120000"},
		{"latency<1h30m", []Term{{Kind: KindCompare, Field: "latency", Op: OpLT, Num: 5400000}}, "latency<5.4e+06"},
		{"latency<250us", []Term{{Kind: KindCompare, Field: "latency", Op: OpLT, Num: 0.25}}, "latency<0.25"},
		{"latency<250µs", []Term{{Kind: KindCompare, Field: "latency", Op: OpLT, Num: 0.25}}, "latency<0.25"},
		{"latency=1ns", []Term{{Kind: KindCompare, Field: "latency", Op: OpEQ, Num: 1e-6}}, "latency=1e-06"},
		{`-latency>"2s"`, []Term{{Kind: KindCompare, Neg: true, Field: "latency", Op: OpGT, Num: 2000}}, "-latency>2000"},
		{"-latency>500", []Term{{Kind: KindCompare, Neg: true, Field: "latency", Op: OpGT, Num: 500}}, ""},
		{"since:15m", []Term{{Kind: KindSince, Time: Time{Relative: true, Ago: 15 * time.Minute}}}, ""},
		{"since:30s", []Term{{Kind: KindSince, Time: Time{Relative: true, Ago: 30 * time.Second}}}, ""},
		{"since:120m", []Term{{Kind: KindSince, Time: Time{Relative: true, Ago: 2 * time.Hour}}}, "since:2h"},
		{"since:2d", []Term{{Kind: KindSince, Time: Time{Relative: true, Ago: 48 * time.Hour}}}, ""},
		{"since:14d", []Term{{Kind: KindSince, Time: Time{Relative: true, Ago: 14 * 24 * time.Hour}}}, "since:2w"},
		{"since:0s", []Term{{Kind: KindSince, Time: Time{Relative: true}}}, ""},
		{"since:2026-05-08", []Term{{Kind: KindSince, Time: Time{At: date(2026, 5, 8)}}}, ""},
		{"since:2026-05-08T10:00:00Z", []Term{{Kind: KindSince, Time: Time{At: time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)}}}, ""},
		{"until:2026-05-08T12:00:00+02:00", []Term{{Kind: KindUntil, Time: Time{At: time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)}}}, "until:2026-05-08T10:00:00Z"},
		{"until:2026-05-08T00:00:00Z", []Term{{Kind: KindUntil, Time: Time{At: date(2026, 5, 8)}}}, "until:2026-05-08"},
		{`until:"2026-05-08T10:00:00.5Z"`, []Term{{Kind: KindUntil, Time: Time{At: time.Date(2026, 5, 8, 10, 0, 0, 5e8, time.UTC)}}}, "until:2026-05-08T10:00:00.5Z"},
		{"until:1w", []Term{{Kind: KindUntil, Time: Time{Relative: true, Ago: 7 * 24 * time.Hour}}}, ""},
		{"-since:1h", []Term{{Kind: KindSince, Neg: true, Time: Time{Relative: true, Ago: time.Hour}}}, ""},
		{"  memory   tag:demo\u00a0-tool:x  ", []Term{{Kind: KindText, Value: "memory"}, {Kind: KindField, Field: "tag", Value: "demo"}, {Kind: KindField, Neg: true, Field: "tool", Value: "x"}}, "memory tag:demo -tool:x"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !e.Equal(&Expr{Terms: tt.want}) {
			t.Errorf("Parse(%q) = %#v, want %#v", tt.in, e.Terms, tt.want)
		}
		canon := tt.canon
		if canon == "" && len(tt.want) > 0 {
			canon = tt.in
		}
		if got := e.String(); got != canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, canon)
		}
		e2, err := Parse(e.String())
		if err != nil || !e2.Equal(e) {
			t.Errorf("Parse(%q) does not read back: %v %#v", e.String(), err, e2)
		}
	}
}

func TestParseErrors(t *testing.T) {
	types := "user_input, tool_result, system_event, agent_action, environmental_observation, consolidation_output, observation, action, outcome"
	known := "; known fields: agent, confidence, id, importance, latency, reward, session, since, source, success, tag, tenant, tool, trace, turn, type, until"
	tests := []struct {
		in, want string
	}{
		{"foo:bar", `column 1: unknown field "foo"` + known},
		{"memory Size>3", `column 8: unknown field "size"` + known},
		{"-", `column 1: expected a term after "-"`},
		{"a - b", `column 3: expected a term after "-"`},
		{"--x", `column 1: expected a term after "-"`},
		{`"unterminated`, `column 1: unterminated quote`},
		{`a "b`, `column 3: unterminated quote`},
		{`"a\"`, `column 1: unterminated quote`},
		{`""`, `column 1: empty phrase`},
		{`x -""`, `column 4: empty phrase`},
		{`"a"b`, `column 4: expected a space after the closing quote`},
		{`ab"c"`, `column 3: unexpected '"' inside a word (put a space before a quoted phrase)`},
		{"type:", `column 6: expected a value after "type:"`},
		{"type: x", `column 6: expected a value after "type:"`},
		{`tool:""`, `column 6: expected a value after "tool:"`},
		{`tool:"web`, `column 6: unterminated quote`},
		{`tool:"a"b`, `column 9: expected a space after the closing quote`},
		{`tool:a"b"`, `column 7: unexpected '"' inside a value (quote the whole value)`},
		{"type=x", `column 5: expected ':' after "type", as in type:VALUE`},
		{"tag>x", `column 4: expected ':' after "tag", as in tag:VALUE`},
		{"success:yes", `column 9: expected true or false after "success:"`},
		{"success:", `column 9: expected a value after "success:"`},
		{"success=true", `column 8: expected ':' after "success", as in success:false`},
		{"importance:0.7", `column 11: expected one of >, >=, <, <=, = after "importance", as in importance>=0.5`},
		{"tag:x importance>=", `column 19: expected a value after "importance>="`},
		{"importance>=high", `column 13: expected a number after "importance>="`},
		{"latency>fast", `column 9: expected milliseconds or a duration (like 500, 250ms, 1.5s, 2m) after "latency>"`},
		{"latency>1d", `column 9: expected milliseconds or a duration (like 500, 250ms, 1.5s, 2m) after "latency>"`},
		{"importance>5ms", `column 12: expected a number after "importance>"`},
		{"type:x", `column 6: unknown type "x"; valid types: ` + types},
		{"memory -type:toolresult", `column 14: unknown type "toolresult"; valid types: ` + types},
		{`type:"tool result"`, `column 6: unknown type "tool result"; valid types: ` + types},
		{"reward<NaN", `column 8: expected a number after "reward<"`},
		{"reward<inf", `column 8: expected a number after "reward<"`},
		{"reward<1e999", `column 8: expected a number after "reward<"`},
		{"reward<0x10", `column 8: expected a number after "reward<"`},
		{"confidence==1", `column 12: expected a number after "confidence="`},
		{"since:yesterday", `column 7: expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z) after "since:"`},
		{"since:15", `column 7: expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z) after "since:"`},
		{"since:1.5h", `column 7: expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z) after "since:"`},
		{"until:2026-05-08T10:00:00", `column 7: expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z) after "until:"`},
		{"until:2026-02-30", `column 7: expected a duration (like 15m, units s m h d w) or a time (like 2026-05-08 or 2026-05-08T10:00:00Z) after "until:"`},
		{"since:99999999999999999999w", `column 7: duration too long after "since:"`},
		{"since:100000w", `column 7: duration too long after "since:"`},
		{"since:0000-01-01T00:00:00+01:00", `column 7: time out of range (years 0001 to 9999 in UTC) after "since:"`},
		{"since<1h", `column 6: expected ':' after "since", as in since:15m`},
		{"until>1h", `column 6: expected ':' after "until", as in until:15m`},
		{"ok \xff", `column 4: invalid UTF-8`},
		{"é \xe2\x82", `column 3: invalid UTF-8`},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SyntaxError", tt.in, e, err)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tt.in, got, tt.want)
		}
		if e != nil {
			t.Errorf("Parse(%q) returned an expression with its error", tt.in)
		}
	}
}

func TestResolve(t *testing.T) {
	now := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	e, err := Parse("since:15m until:2026-05-09")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Terms[0].Time.Resolve(now); !got.Equal(now.Add(-15 * time.Minute)) {
		t.Errorf("since:15m resolves to %v", got)
	}
	if got := e.Terms[1].Time.Resolve(now); !got.Equal(date(2026, 5, 9)) {
		t.Errorf("until resolves to %v", got)
	}
}

func TestHasText(t *testing.T) {
	for in, want := range map[string]bool{
		"": false, "tag:x": false, "-word": false, "word": true, `"a b" tag:x`: true, "-a b": true,
	} {
		e, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if e.HasText() != want {
			t.Errorf("HasText(%q) = %v", in, !want)
		}
	}
}

func TestOp(t *testing.T) {
	for _, c := range []struct {
		op   Op
		a, b float64
		want bool
	}{{OpEQ, 1, 1, true}, {OpEQ, 1, 2, false}, {OpLT, 1, 2, true}, {OpLT, 2, 2, false}, {OpLE, 2, 2, true},
		{OpGT, 3, 2, true}, {OpGT, 2, 2, false}, {OpGE, 2, 2, true}, {Op(0), 1, 1, false}} {
		if got := c.op.Holds(c.a, c.b); got != c.want {
			t.Errorf("%v %v %v = %v", c.a, c.op, c.b, got)
		}
	}
	if Op(9).String() != "Op(9)" || KindText.String() != "text" || Kind(0).String() != "Kind(0)" {
		t.Error("String of unknown values")
	}
}

// checkParse is the property FuzzParse checks.
func checkParse(t *testing.T, s string) {
	e, err := Parse(s)
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q): error %T %v is not a *SyntaxError", s, err, err)
		}
		if e != nil {
			t.Fatalf("Parse(%q): expression and error", s)
		}
		if se.Col < 1 || se.Col > utf8.RuneCountInString(s)+1 || se.Msg == "" {
			t.Fatalf("Parse(%q): bad error %+v", s, se)
		}
		return
	}
	if e == nil {
		t.Fatalf("Parse(%q): nil expression without error", s)
	}
	c := e.String()
	e2, err := Parse(c)
	if err != nil {
		t.Fatalf("Parse(%q).String() = %q does not parse: %v", s, c, err)
	}
	if !e2.Equal(e) {
		t.Fatalf("Parse(%q) = %#v; its String %q parses to %#v", s, e.Terms, c, e2.Terms)
	}
	if c2 := e2.String(); c2 != c {
		t.Fatalf("canonical form not stable: %q then %q", c, c2)
	}
	if strings.TrimSpace(s) != "" && e.Empty() {
		t.Fatalf("Parse(%q): no terms", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "memory", `"fast retrieval" -tag:demo`, `tool:"web search" importance>=0.7`,
		"since:15m until:2026-05-08T10:00:00Z", "success:false reward<0.3 latency>500",
		`type:tool_result session:s1 turn:t1 agent:a tenant:acme trace:x id:e-1`, "-word --x", `"\"\\"`,
	} {
		f.Add(s)
	}
	f.Fuzz(checkParse)
}

func TestTooManyTerms(t *testing.T) {
	ok := strings.Repeat("a ", maxTerms)
	if _, err := Parse(ok); err != nil {
		t.Fatalf("%d terms: %v", maxTerms, err)
	}
	var se *SyntaxError
	_, err := Parse(ok + "b")
	if !errors.As(err, &se) || se.Col != 2*maxTerms+1 || !strings.Contains(se.Msg, "too many terms") {
		t.Fatalf("%d terms: %v, want a syntax error at column %d", maxTerms+1, err, 2*maxTerms+1)
	}
}

// TestValues: the closed sets completion offers are the ones Parse
// accepts, and every event type is among them.
func TestValues(t *testing.T) {
	types := values(FieldType)
	if len(types) != len(model.EventTypes) {
		t.Fatalf("Values(type) = %q, want %q", types, model.EventTypes)
	}
	for i, v := range types {
		if v != model.EventTypes[i] {
			t.Fatalf("Values(type) = %q, want %q", types, model.EventTypes)
		}
		if _, err := Parse("type:" + v); err != nil {
			t.Errorf("type:%s: %v", v, err)
		}
	}
	types[0] = "changed"
	if values("TYPE")[0] != model.EventTypes[0] {
		t.Error("Values hands out the package's slice")
	}
	for _, v := range values(FieldSuccess) {
		if _, err := Parse("success:" + v); err != nil {
			t.Errorf("success:%s: %v", v, err)
		}
	}
	for _, f := range []string{FieldTool, FieldTag, FieldAgent, FieldLatency, "nope"} {
		if v := values(f); v != nil {
			t.Errorf("Values(%s) = %q, want nil (any value)", f, v)
		}
	}
}
