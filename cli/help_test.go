package cli

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"strings"
	"testing"
)

// engram help CMD lists the command's own flags first, then the config
// file's, then the settings grouped by area; every flag once.
func TestHelpGroupsFlags(t *testing.T) {
	e := &env{strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" }}
	for _, c := range commands() {
		if c.flags == nil {
			continue
		}
		var out bytes.Buffer
		e.stdout = &out
		if code := run(context.Background(), e, []string{"help", c.name}); code != 0 {
			t.Fatalf("help %s: exit %d", c.name, code)
		}
		help := out.String()
		headings := regexp.MustCompile(`(?m)^([A-Z][^:\n]*):$`).FindAllStringSubmatch(help, -1)
		var names []string
		for _, h := range headings {
			names = append(names, h[1])
		}
		want := []string{"Config file", "Stores", "Recall", "S3 archive (--archive s3)", "OpenSearch index (--index opensearch)", "Kafka", "Worker health server", "Embedder", "Tracing (OpenTelemetry)", "Inspector"}
		if len(names) > 0 && names[0] == "Flags" {
			names = names[1:]
		}
		if strings.Join(names, "|") != strings.Join(want, "|") {
			t.Errorf("help %s: headings %q, want [Flags] then %q", c.name, names, want)
		}
		sections := map[string]string{}
		for _, part := range strings.Split(help, "\n\n")[1:] {
			head, body, _ := strings.Cut(part, ":\n")
			sections[head] = body
		}
		c.flags(e).VisitAll(func(f *flag.Flag) {
			if n := strings.Count(help, "  --"+f.Name+" ") + strings.Count(help, "  --"+f.Name+"\n"); n != 1 {
				t.Errorf("help %s: --%s listed %d times", c.name, f.Name, n)
			}
		})
		for _, s := range settingsTable {
			if s.flag != "" && strings.Contains(sections["Flags"], "--"+s.flag+" ") {
				t.Errorf("help %s: the setting --%s among the command's own flags", c.name, s.flag)
			}
		}
	}
	var out bytes.Buffer
	e.stdout = &out
	run(context.Background(), e, []string{"help", "search"})
	help := out.String()
	for _, order := range [][2]string{
		{"Flags:\n  --json\n", "--wide\n"}, {"--wide\n", "Config file:\n  --config string"},
		{"Stores:\n  --data string", "S3 archive (--archive s3):\n  --s3-endpoint string"},
		{"--rank-window N|all", "--hop-timeout duration"}, {"--embed-dim int", "--otel-endpoint string"},
	} {
		i, j := strings.Index(help, order[0]), strings.Index(help, order[1])
		if i < 0 || j < 0 || i > j {
			t.Errorf("help search: want %q before %q:\n%s", order[0], order[1], help)
		}
	}
}

// An unknown command suggests the nearest one, and exits 2.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serach", "x"}, `engram: unknown command "serach"; did you mean search?`},
		{[]string{"ingset"}, `engram: unknown command "ingset"; did you mean ingest?`},
		{[]string{"tunrs"}, `engram: unknown command "tunrs"; did you mean turns?`},
		{[]string{"comp"}, `engram: unknown command "comp"; did you mean completion?`},
		{[]string{"xyzzy"}, `engram: unknown command "xyzzy"; run 'engram help'`},
		{[]string{"help", "verfy"}, `engram: no command "verfy"; did you mean verify?`},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}, tc.args)
		if code != 2 || strings.TrimSpace(errb.String()) != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb.String(), tc.want)
		}
	}
	for name, want := range map[string]string{"search": "search", "serch": "search", "ui": "ui", "u": "ui", "ver": "", "v": "", "demo2": "demo", "kafak": "kafka"} {
		if got := nearestCommand(name); got != want {
			t.Errorf("nearestCommand(%q) = %q, want %q", name, got, want)
		}
	}
}
