package detail

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"engram/ui/internal/fixture"
)

// leaves calls fn with the path (as jsontree paths spell it) of every scalar
// under v, and a function that replaces that scalar with another value.
func leaves(v any, path string, fn func(path string, perturb func())) {
	switch x := v.(type) {
	case map[string]any:
		for k, kid := range x {
			k := k
			if isScalar(kid) {
				fn(memberPath(path, k), func() { x[k] = other(kid) })
			} else {
				leaves(kid, memberPath(path, k), fn)
			}
		}
	case []any:
		for i, kid := range x {
			i := i
			if isScalar(kid) {
				fn(fmt.Sprintf("%s[%d]", path, i), func() { x[i] = other(kid) })
			} else {
				leaves(kid, fmt.Sprintf("%s[%d]", path, i), fn)
			}
		}
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func other(v any) any {
	switch x := v.(type) {
	case string:
		return x + "-x"
	case float64:
		return x + 1.125
	case bool:
		return !x
	}
	return "x"
}

// The members the detail leaves unmarked (indexHolds) are exactly those
// model.NewIndexDoc reads: changing one changes the index document.
func TestIndexHeldIsWhatNewIndexDocReads(t *testing.T) {
	var base map[string]any
	if err := json.Unmarshal([]byte(fixture.FullEvent), &base); err != nil {
		t.Fatal(err)
	}
	want := fixture.IndexJSON(t, base)
	leaves(base, "", func(path string, _ func()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(fixture.FullEvent), &ev); err != nil {
			t.Fatal(err)
		}
		leaves(ev, "", func(p string, perturb func()) {
			if p == path {
				perturb()
			}
		})
		read := !reflect.DeepEqual(fixture.IndexJSON(t, ev), want)
		if read != indexHolds(path) {
			t.Errorf("%s: NewIndexDoc reads it: %v; indexHeld holds it: %v", path, read, indexHolds(path))
		}
	})
}

func memberPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}
