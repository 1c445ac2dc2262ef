package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// configFields lists the leaf fields of a config (those a setting fills)
// by address, with their dotted paths.
func configFields(c *config) map[uintptr]string {
	out := map[uintptr]string{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if v.Kind() == reflect.Struct && (v.Type().Name() == "" || v.Type() == reflect.TypeFor[config]()) {
			for i := range v.NumField() {
				walk(v.Field(i), strings.TrimPrefix(path+"."+v.Type().Field(i).Name, "."))
			}
			return
		}
		out[v.Addr().Pointer()] = path
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

// Every row of the settings table fills exactly one field of the typed
// configuration, named after its key (s3.ca_file: S3.CAFile), and every
// field is filled by exactly one row: a setting is read as conf.S3.CAFile
// or not at all.
func TestSettingsMapOntoTypedConfig(t *testing.T) {
	c := new(config)
	fields := configFields(c)
	taken := map[uintptr]string{}
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", ".", "").Replace(s)) }
	for _, s := range settingsOf(c) {
		p := reflect.ValueOf(s.to)
		if p.Kind() != reflect.Pointer {
			t.Errorf("%s: to is %T, want a pointer into the config", s.key, s.to)
			continue
		}
		path, ok := fields[p.Pointer()]
		if !ok {
			t.Errorf("%s: to points at no field of the config", s.key)
			continue
		}
		if other, dup := taken[p.Pointer()]; dup {
			t.Errorf("%s and %s both fill %s", s.key, other, path)
		}
		taken[p.Pointer()] = s.key
		name := norm(path)
		if p.Elem().Kind() == reflect.Slice && name == norm(s.key)+"s" {
			name = norm(s.key) // a list: opensearch.url fills OpenSearch.URLs
		}
		if name != norm(s.key) {
			t.Errorf("%s fills %s: name the field after the key", s.key, path)
		}
	}
	for addr, path := range fields {
		if _, ok := taken[addr]; !ok {
			t.Errorf("config field %s is filled by no setting", path)
		}
	}
}

// A value given for any key arrives, parsed, in its typed field.
func TestEverySettingReachesItsField(t *testing.T) {
	sample := func(s setting) (in string, want any) {
		if len(s.choices) > 0 {
			return s.choices[len(s.choices)-1], s.choices[len(s.choices)-1]
		}
		switch s.to.(type) {
		case *bool:
			return "yes", true
		case **bool:
			return "off", false
		case *int:
			return "12", 12
		case *time.Duration:
			return "1m30s", 90 * time.Second
		case *[]string:
			return " a:1, b:2 ,", []string{"a:1", "b:2"}
		case *searchWindow:
			return "all", searchWindow(-1)
		case *recallWeights:
			return "text=1", recallWeights{1}
		}
		return "value of " + s.key, "value of " + s.key
	}
	for _, row := range settingsTable {
		in, want := sample(row)
		conf, err := resolvedFrom(map[string]string{row.key: in})
		if err != nil {
			t.Errorf("%s = %q: %v", row.key, in, err)
			continue
		}
		for _, s := range settingsOf(&conf.config) {
			if s.key != row.key {
				continue
			}
			got := reflect.ValueOf(s.to).Elem()
			if got.Kind() == reflect.Pointer {
				got = got.Elem()
			}
			if !reflect.DeepEqual(got.Interface(), want) {
				t.Errorf("%s = %q: field holds %#v, want %#v", s.key, in, got.Interface(), want)
			}
		}
	}
	// A spot check through the names the commands use.
	conf, err := resolvedFrom(map[string]string{"s3.endpoint": "minio:9000", "kafka.brokers": "k1:9092,k2:9092", "opensearch.timeout": "5m", "s3.tls": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if conf.S3.Endpoint != "minio:9000" || len(conf.Kafka.Brokers) != 2 || conf.OpenSearch.Timeout != 5*time.Minute || conf.S3.TLS == nil || *conf.S3.TLS {
		t.Fatalf("typed config: %+v %+v %+v", conf.S3, conf.Kafka.Brokers, conf.OpenSearch.Timeout)
	}
	if conf.OTel.Protocol != "http/protobuf" || conf.Search.RankWindow != 2000 || conf.UI.HopTimeout != 30*time.Second {
		t.Fatalf("defaults not filled: %q %d %v", conf.OTel.Protocol, conf.Search.RankWindow, conf.UI.HopTimeout)
	}
	if _, err := resolvedFrom(map[string]string{"s3.endpont": "x"}); err == nil {
		t.Fatal("a misspelt key was accepted")
	}
}

// Values a typed field cannot hold are refused naming the key, the value
// and where it came from.
func TestTypedSettingRefusals(t *testing.T) {
	c := newCLI(t)
	for _, bad := range []struct{ flag, want string }{
		{"--opensearch-timeout=soon", `opensearch.timeout = "soon" (flag --opensearch-timeout): want a duration above zero`},
		{"--kafka-session-timeout=0s", `kafka.session_timeout = "0s" (flag --kafka-session-timeout): want a duration above zero`},
		{"--embed-dim=-3", `embedder.dimension = "-3" (flag --embed-dim): want a positive whole number`},
		{"--rank-window=most", `search.rank_window = "most" (flag --rank-window): want a positive whole number or all`},
	} {
		if _, stderr, code := c.run("", "config", bad.flag); code != 1 || !strings.Contains(stderr, bad.want) {
			t.Errorf("%s: code %d, stderr %q, want %q", bad.flag, code, stderr, bad.want)
		}
	}
}

// The commands read settings only through the typed configuration: there
// is no lookup by key, and the key-value maps are read only where settings
// are resolved (settings.go) and listed (config.go), so a misspelt setting
// does not compile.
func TestSettingsReadOnlyTyped(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "settings.go" || name == "config.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "values", "sources":
					t.Errorf("%s: .%s: read settings through the typed configuration (conf.S3.Endpoint)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
