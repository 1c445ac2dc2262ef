package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// splitObject is splitValid for any input: what the fuzz target drives.
func splitObject(raw []byte) (object, error) {
	if !json.Valid(raw) {
		return nil, errNotObject
	}
	return splitValid(raw)
}

// splitReference is the straightforward splitObject, through
// encoding/json's Decoder: the fast one must agree with it on valid JSON.
func splitReference(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var obj object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		obj = append(obj, member{tok.(string), v})
	}
	return obj, nil
}

// FuzzSplitObject checks splitObject, and compactValid, against
// encoding/json on any input.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `[]`, `"s"`, `1`, `null`,
		`{"a":1,"b":"x","c":[1,{"d":"}"}],"e":{"f":null}}`,
		"{\n  \"a\" :\t-1.5e3 ,\r\n \"b\\\"q\\u00e9\": \"\\\\\" }",
		`{"a":true,"a":false,"A":[[],{}]}`,
		`{"":"","\ud83d\ude00":"😀"}`,
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile(filepath.Join("testdata", "demo-event.json")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := splitObject(raw)
		if !json.Valid(raw) {
			if err == nil {
				t.Fatalf("invalid JSON split without error: %q", raw)
			}
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatal(err)
		}
		if got := compactValid(nil, raw); !bytes.Equal(got, compact.Bytes()) {
			t.Fatalf("%q: compactValid %q, json.Compact %q", raw, got, compact.Bytes())
		}
		want, werr := splitReference(raw)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, reference %v", raw, err, werr)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%q:\n got %q\nwant %q", raw, got, want)
		}
	})
}
