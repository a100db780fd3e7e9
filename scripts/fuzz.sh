#!/usr/bin/env bash
# Runs every fuzz target of the module (every `func FuzzXxx` in a _test.go
# file), one after the other, for DURATION each. The CI runs it briefly;
# run it longer by hand:
#
#   scripts/fuzz.sh            # 1m per target
#   scripts/fuzz.sh 30m        # a long run (go test's -fuzztime syntax: 30s, 10m, 2h, 100000x)
#
# A failing input is written to the target package's testdata/fuzz/<target>/
# and then replays in every plain `go test` run: commit it with the fix.
set -euo pipefail
DURATION=${1:-1m}
cd "$(dirname "$0")/.."
grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . | sort |
while IFS=: read -r file _ decl; do
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")
  pkg=./$(dirname "${file#./}")
  echo "== $pkg $target ($DURATION)"
  go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$DURATION"
done
