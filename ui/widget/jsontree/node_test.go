package jsontree

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseJSONKeepsOrderAndDepthLimit(t *testing.T) {
	n, err := Parse([]byte(`{"b":1,"a":[true,null,"x"],"c":{}}`), "r")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	walk(n, func(n *Node) { paths = append(paths, n.path) })
	if got := strings.Join(paths, " "); got != "r r.b r.a r.a[0] r.a[1] r.a[2] r.c" {
		t.Fatalf("paths %s", got)
	}
	deep := strings.Repeat("[", 500) + strings.Repeat("]", 500)
	if _, err := Parse([]byte(deep), ""); err == nil {
		t.Fatal("500 levels of nesting accepted")
	}
	if _, err := Parse([]byte(`{} {}`), ""); err == nil {
		t.Fatal("two values accepted")
	}
	var v any
	_ = json.Unmarshal([]byte(`1`), &v)
}
