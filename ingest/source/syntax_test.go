package source

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzSyntax: syntax, followed a line at a time, finds a syntax error in a
// value exactly when the decoder does (the cut detection relies on it).
func FuzzSyntax(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2.5e+3,true,null,"x\u00e9\n"]}`, "{\"a\":\n[\n{},\n", `{"a" 1}`, `{"a":01}`,
		`{"a":[1,]}`, `{"a":"\x"}`, `{"a":tru}`, "{\"a\":\"b\n\"}", `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
		`{"a":{"b":[]},"c":[[{}]]} x`, `{"a":[}`, `{"a":1,}`, `{,}`, `{"a":[0x1]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if len(input) == 0 || input[0] != '{' {
			return
		}
		var s syntax
		s.feed([]byte(input))
		_, err := firstValue([]byte(input))
		var syn *json.SyntaxError
		if want := errors.As(err, &syn); s.failed != want {
			t.Errorf("%q: failed %v, decoder says %v", input, s.failed, err)
		}
		if !s.failed && s.done != (err == nil) {
			t.Errorf("%q: done %v, decoder says %v", input, s.done, err)
		}
	})
}
