package recall_test

import (
	"math"
	"strings"
	"testing"

	"engram/query/recall"
)

// TestParseWeightsBadInput: each bad --weights is one line naming what is
// wrong.
func TestParseWeightsBadInput(t *testing.T) {
	for in, want := range map[string]string{
		"bogus":                        `weight "bogus": want factor=number`,
		"text=-1":                      `weight "text=-1": want a number of 0 or more`,
		"text=NaN":                     `weight "text=NaN": want a number of 0 or more`,
		"text=1e999":                   `weight "text=1e999": want a number of 0 or more`,
		"nosuch=1":                     `unknown factor "nosuch"`,
		"text=0":                       "give at least one factor a weight above 0",
		"":                             "give at least one factor a weight above 0",
		"text=1,text=2":                `weight "text=2": text is given twice`,
		" Text=1 , text=2":             "text is given twice",
		"text=1e308,similarity=1e308":  "their sum overflows",
		"text=1e308,similarity=1e308,": "their sum overflows",
	} {
		_, err := recall.ParseWeights(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseWeights(%q) = %v, want one line with %q", in, err, want)
		}
	}
}

// FuzzParseWeights: whatever --weights says, ParseWeights refuses it in
// one line, or gives weights of 0 or more with a finite sum above 0 that
// its String reads back to (within String's four digits).
func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{
		"text=0.3,similarity=0.3,importance=0.15,recency=0.15,reward=0.05,decay=0.05",
		"text=1", "decay=2, reward=1", "text=1,text=2", "text=-1", "text=1e308,similarity=1e308",
		"=", ",,,", "text=0x1p-2", "similarity=1e-320", "TEXT = 5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := recall.ParseWeights(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseWeights(%q): error on more than one line: %q", s, err)
			}
			return
		}
		var sum float64
		for f := range recall.NumFactors {
			if !(w[f] >= 0) || math.IsInf(w[f], 0) {
				t.Fatalf("ParseWeights(%q): %s = %v", s, f, w[f])
			}
			sum += w[f]
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			t.Fatalf("ParseWeights(%q): sum %v", s, sum)
		}
		back, err := recall.ParseWeights(w.String())
		if err != nil {
			t.Fatalf("ParseWeights(%q).String() = %q does not parse: %v", s, w.String(), err)
		}
		for f := range recall.NumFactors {
			if d := math.Abs(back[f] - w[f]); d > 1e-3*math.Max(w[f], 1e-300)+1e-300 && d > 1e-3*sum {
				t.Fatalf("ParseWeights(%q) = %v; its String %q reads back as %v", s, w, w.String(), back)
			}
		}
	})
}
