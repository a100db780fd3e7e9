#!/usr/bin/env bash
# Runs every fuzz target of the module (every `func FuzzXxx` in a _test.go
# file), one after the other, for BUDGET each (go test's -fuzztime: a duration
# such as 30s, 10m, 2h, or a number of executions such as 30000x):
#
#   scripts/fuzz.sh            # 1m per target
#   scripts/fuzz.sh 30m        # a long run
#   scripts/fuzz.sh 30000x     # what CI runs
#
# CI gives each target a number of executions, not a duration: with a duration,
# Go 1.26's fuzz coordinator can report "context deadline exceeded" as a
# failure at the end of the budget on a loaded machine, with no failing input
# (golang/go#75804, fixed in Go 1.27). Such a failure by hand, with no new file
# in testdata/fuzz/, is that race, not a bug found.
#
# A failing input is written to the target package's testdata/fuzz/<target>/
# and then replays in every plain `go test` run: commit it with the fix.
set -euo pipefail
BUDGET=${1:-1m}
cd "$(dirname "$0")/.."
grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . | sort |
while IFS=: read -r file _ decl; do
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")
  pkg=./$(dirname "${file#./}")
  echo "== $pkg $target ($BUDGET)"
  go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$BUDGET"
done
