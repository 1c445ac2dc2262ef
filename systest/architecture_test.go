package systest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection holds the rules of docs/architecture.md: the domain
// imports nothing, the write and read paths no store, a store no other
// store and nothing above it, the inspector no store; only the commands
// open stores.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "engram/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		for _, imp := range imports {
			if !strings.HasPrefix(imp, "engram/") && imp != "engram" {
				continue
			}
			if why := forbidden(pkg, imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// store is a package of one external system.
func store(pkg string) bool { return strings.HasPrefix(pkg, "engram/backend/") }

func forbidden(pkg, imp string) string {
	switch {
	case pkg == "engram/model":
		return "model is the domain and imports no engram package"
	case (under(pkg, "engram/ingest") || under(pkg, "engram/query")) && store(imp) &&
		!(pkg == "engram/ingest/worker" && imp == "engram/backend/kafka"):
		return "the write and read paths declare interfaces; stores implement them"
	case store(pkg) && store(imp) && !under(imp, pkg) && !under(pkg, imp): // one store's packages may use each other
		return "a store does not use another store"
	case (store(pkg) || under(pkg, "engram/ingest") || under(pkg, "engram/query") || under(pkg, "engram/ui")) &&
		(under(imp, "engram/cli") || (under(imp, "engram/ui") && !under(pkg, "engram/ui"))):
		return "nothing below the commands imports them or the inspector"
	case under(pkg, "engram/ui") && store(imp):
		return "the inspector gets its stores as interfaces from the commands"
	}
	return ""
}
