package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func completion(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}, []string{"completion", shell}); code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
	}
	return out.String()
}

// The bash script completes commands and a command's flags (run in bash
// when there is one); zsh and fish name every command and flag.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		s := completion(t, shell)
		for _, want := range []string{"search", "similar", "version", "--limit", "--follow"} {
			if !strings.Contains(s, strings.TrimPrefix(want, "--")) {
				t.Errorf("%s completion lacks %s", shell, want)
			}
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the bash script in")
	}
	script := filepath.Join(t.TempDir(), "engram.bash")
	if err := os.WriteFile(script, []byte(completion(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := `source "$1"; COMP_WORDS=(engram sim); COMP_CWORD=1; _engram; echo "${COMPREPLY[*]}";` +
		` COMP_WORDS=(engram search --li); COMP_CWORD=2; _engram; echo "${COMPREPLY[*]}"`
	out, err := exec.Command(bash, "-c", probe, "probe", script).CombinedOutput()
	if got := string(out); err != nil || got != "similar\n--limit\n" {
		t.Fatalf("bash completion: %q (%v)", got, err)
	}
}

func TestCompletionNeedsAShell(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), &env{strings.NewReader(""), &out, &errb, func(string) string { return "" }}, []string{"completion", "tcsh"})
	if code != 2 || !strings.Contains(errb.String(), "bash|zsh|fish") {
		t.Fatalf("completion tcsh: exit %d, %q", code, errb.String())
	}
}
