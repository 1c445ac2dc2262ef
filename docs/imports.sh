#!/usr/bin/env bash
# Prints engram's package import graph (engram packages only, tests left
# out) as Graphviz dot: bash docs/imports.sh | dot -Tsvg > imports.svg
# With --text, one line per package: the engram packages it imports.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fmt='{{.ImportPath}}{{range .Imports}} {{.}}{{end}}'
lines=$(go list -f "$fmt" ./... | awk '{ out=$1":"; for (i=2;i<=NF;i++) if ($i ~ /^engram(\/|$)/) out=out" "$i; print out }')
if [[ "${1:-}" == "--text" ]]; then
  echo "$lines" | sed 's/^engram\///; s/ engram\// /g; s/:$/: -/'
  exit 0
fi
echo "digraph engram {"
echo '  rankdir=LR; node [shape=box, fontname="monospace", fontsize=10];'
echo "$lines" | while read -r pkg deps; do
  pkg=${pkg%:}
  for d in $deps; do echo "  \"${pkg#engram/}\" -> \"${d#engram/}\";"; done
done
echo "}"
