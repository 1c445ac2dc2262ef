package model_test

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"engram/model"
)

// Every combination of t (type), g (tags), a (action) and s (success). The
// expected value is computed in integer thousandths, independently of the
// float formula: 0.3·t + 0.2·g + 0.2·a + 0.3·s with t, s in tenths is
// 30·t + 200·g + 200·a + 30·s thousandths.
func TestImportanceEveryCombination(t *testing.T) {
	yes := true
	no := false
	types := []struct {
		typ    string
		tenths int
	}{
		{model.TypeUserInput, 3}, {model.TypeSystemEvent, 3},
		{model.TypeToolResult, 10}, {model.TypeAgentAction, 10}, {model.TypeEnvironmentalObservation, 10},
		{model.TypeConsolidationOutput, 10}, {model.TypeObservation, 10}, {model.TypeAction, 10},
		{model.TypeOutcome, 10},
	}
	successes := []struct {
		name   string
		result *model.Result
		tenths int
	}{
		{"no result", nil, 5},
		{"success absent", &model.Result{Output: "x"}, 5},
		{"success true", &model.Result{Output: "x", Success: &yes}, 10},
		{"success false", &model.Result{Output: "x", Success: &no}, 1},
	}
	for _, ty := range types {
		for _, tags := range [][]string{nil, {}, {"a"}, {"a", "b", "c"}} {
			for _, action := range []*model.Action{nil, {}, {Tool: "t"}} {
				for _, s := range successes {
					e := &model.Event{Type: ty.typ, Tags: tags, Action: action, Result: s.result}
					g, a := 0, 0
					if len(tags) > 0 {
						g = 1
					}
					if action != nil {
						a = 1
					}
					thousandths := 30*ty.tenths + 200*g + 200*a + 30*s.tenths
					want := float64(thousandths) / 1000
					got := model.Importance(e)
					if got != want {
						t.Errorf("Importance(type %s, %d tags, action %v, %s) = %v, want %v",
							ty.typ, len(tags), action != nil, s.name, got, want)
					}
					// Rounded to 3 decimals: no float noise such as 0.6399999999999999.
					if str := strconv.FormatFloat(got, 'f', -1, 64); len(str) > 5 {
						t.Errorf("Importance = %s, more than 3 decimals", str)
					}
					// Clamping cannot be reached with these weights (the
					// extremes are 0.12 and 1); the range still must hold.
					if got < 0 || got > 1 {
						t.Errorf("Importance = %v outside [0, 1]", got)
					}
				}
			}
		}
	}
}

func TestImportanceNamedCases(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		e    model.Event
		want float64
	}{
		{"demo: user_input, tags, action, success", model.Event{Type: "user_input", Tags: []string{"memory"},
			Action: &model.Action{}, Result: &model.Result{Success: &yes}}, 0.79},
		{"maximum", model.Event{Type: "agent_action", Tags: []string{"x"}, Action: &model.Action{},
			Result: &model.Result{Success: &yes}}, 1},
		{"minimum", model.Event{Type: "system_event", Result: &model.Result{Success: &no}}, 0.12},
		{"routine, nothing else: result absent counts 0.5", model.Event{Type: "user_input"}, 0.24},
		{"routine, result without success: also 0.5", model.Event{Type: "user_input", Result: &model.Result{}}, 0.24},
		{"routine, success false: 0.1", model.Event{Type: "user_input", Result: &model.Result{Success: &no}}, 0.12},
		{"non-routine bare", model.Event{Type: "tool_result"}, 0.45},
		{"unknown type counts as non-routine", model.Event{Type: "whatever"}, 0.45},
		{"float noise rounded: 0.09+0.2+0.2+0.15", model.Event{Type: "user_input", Tags: []string{"a"},
			Action: &model.Action{}}, 0.64},
	}
	for _, c := range cases {
		if got := model.Importance(&c.e); got != c.want {
			t.Errorf("%s: Importance = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStubEmbedding(t *testing.T) {
	cases := []struct {
		name string
		text string
		dim  int
		want []float64
	}{
		// Seed 10051 (every character is ASCII, so the seed is the plain
		// sum of bytes; TestDemoEvent checks the sum itself).
		{"demo", demoText, 8, []float64{0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7}},
		{"demo, dimension 3", demoText, 3, []float64{0.51, 0.68, 0.85}},
		// Component 8 = ((10051 + 17·8) mod 100) / 100 = 10187 mod 100 = 0.87.
		{"demo, dimension 10", demoText, 10, []float64{0.51, 0.68, 0.85, 0.02, 0.19, 0.36, 0.53, 0.7, 0.87, 0.04}},
		{"dimension 0", demoText, 0, []float64{}},
		// Seed 0: components 17·i mod 100.
		{"empty text", "", 8, []float64{0, 0.17, 0.34, 0.51, 0.68, 0.85, 0.02, 0.19}},
		// é is U+00E9 = 233 (its UTF-8 bytes, 0xC3 0xA9, would sum to 364):
		// 233, 250, 267, 284, 301, 318, 335, 352 mod 100.
		{"two-byte character counts by code point", "é", 8,
			[]float64{0.33, 0.5, 0.67, 0.84, 0.01, 0.18, 0.35, 0.52}},
		// 😀 is U+1F600, above the BMP: its UTF-16 high surrogate is
		// 0xD800 + ((0x1F600 - 0x10000) >> 10) = 0xD800 + (0xF600 >> 10)
		// = 0xD800 + 0x3D = 0xD83D = 55357. (The code point itself,
		// 128512, would give 0.12 first; both surrogates, 55357 + 0xDE00
		// = 112189, would give 0.89.) 55357 + 17·i mod 100:
		// 57, 74, 91, 08, 25, 42, 59, 76.
		{"emoji uses its high surrogate", "😀", 8,
			[]float64{0.57, 0.74, 0.91, 0.08, 0.25, 0.42, 0.59, 0.76}},
		// "a😀" = 97 + 55357 = 55454: 54, 71, 88, 05, 22, 39, 56, 73.
		{"ASCII plus emoji", "a😀", 8,
			[]float64{0.54, 0.71, 0.88, 0.05, 0.22, 0.39, 0.56, 0.73}},
		// 𝄞 is U+1D11E: (0x1D11E - 0x10000) >> 10 = 0xD11E >> 10 = 0x34,
		// high surrogate 0xD834 = 55348: 48, 65, 82, 99, 16, 33, 50, 67.
		{"musical symbol", "𝄞", 8,
			[]float64{0.48, 0.65, 0.82, 0.99, 0.16, 0.33, 0.5, 0.67}},
		// "a😀𝄞é" = 97 + 55357 + 55348 + 233 = 111035:
		// 35, 52, 69, 86, 03, 20, 37, 54.
		{"mixed", "a😀𝄞é", 8,
			[]float64{0.35, 0.52, 0.69, 0.86, 0.03, 0.2, 0.37, 0.54}},
	}
	for _, c := range cases {
		got := model.StubEmbedding(c.text, c.dim)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: StubEmbedding(%q, %d) = %v, want %v", c.name, c.text, c.dim, got, c.want)
		}
	}
	if model.StubDimension != 8 {
		t.Errorf("StubDimension = %d, want 8", model.StubDimension)
	}
}

func TestSummary(t *testing.T) {
	cases := []struct {
		text string
		n    int
		want string
	}{
		{"hello", 3, "hel"},
		{"héllo wörld", 4, "héll"},
		{"日本語テキスト", 3, "日本語"},
		{"😀😁😂", 2, "😀😁"},
		{"a😀b", 2, "a😀"},
		{"short", 5, "short"},
		{"short", 6, "short"},
		{"short", 0, "short"},
		{"short", -1, "short"},
		{"", 3, ""},
	}
	for _, c := range cases {
		got := model.Summary(c.text, c.n)
		if got != c.want {
			t.Errorf("Summary(%q, %d) = %q, want %q", c.text, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Summary(%q, %d) split a character: %q", c.text, c.n, got)
		}
	}
	if model.DefaultSummaryLen != 1000 {
		t.Errorf("DefaultSummaryLen = %d, want 1000", model.DefaultSummaryLen)
	}
	// Every cut of a multi-byte text is valid UTF-8 and exactly n characters.
	text := strings.Repeat("ä日😀", 50)
	for n := 1; n < utf8.RuneCountInString(text); n++ {
		got := model.Summary(text, n)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) != n || !strings.HasPrefix(text, got) {
			t.Fatalf("Summary(text, %d) = %q", n, got)
		}
	}
}

func ExampleStubEmbedding() {
	fmt.Println(model.StubEmbedding("😀", 4))
	// Output: [0.57 0.74 0.91 0.08]
}
