#!/usr/bin/env bash
# Instruction counts of an ingest (docs/benchmarks.md, "Stop 27: instructions"): the
# CPU work of `ingest --no-index` and of a full `ingest` on a small synthetic
# tree, counted by valgrind's callgrind, for this checkout and for REF (a git
# revision, default main), one after the other. A machine whose speed drifts
# by a fifth within minutes cannot show a change of a few percent in wall
# time without many rounds; a count of instructions is the same from run to
# run whatever else the machine does. It measures work, not time: the threads run one at a time under callgrind, the kernel's time
# (the floors' most) is not counted, and valgrind's CPU model has no SHA
# extensions, so the files' SHA-256 runs its AVX2 code, about 7x the
# instructions of the SHA-NI code the hardware runs: the totals are given
# with and without it, and for the code alone (below).
#
#   scripts/bench-instructions.sh [REF] [SIZE] [FILES] [WORKDIR]   (default main 30MB 250 /tmp/clawledger-instr)
set -euo pipefail
REF=${1:-main}
SIZE=${2:-30MB}
FILES=${3:-250}
WORK=${4:-/tmp/clawledger-instr}
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$WORK/bin"
go build -o "$WORK/bin/head" ./cmd/clawledger
go build -o "$WORK/bin/genstate" ./internal/cmd/genstate
rm -rf "$WORK/ref"
git worktree add -q --detach "$WORK/ref" "$REF"
trap 'git worktree remove --force "$WORK/ref"' EXIT
(cd "$WORK/ref" && go build -o "$WORK/bin/ref" ./cmd/clawledger)
TREE=$WORK/tree/.openclaw
[ -d "$TREE" ] || "$WORK/bin/genstate" -kind large -home "$WORK/tree" -size "$SIZE" -files "$FILES" -agents 3 >/dev/null
LINES=$(cat "$TREE"/agents/*/sessions/*.jsonl | wc -l)
echo "tree: $(du -sb "$TREE" | cut -f1) bytes, $LINES lines; ref $REF = $(git rev-parse --short "$REF"), head = $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + working tree')"

# count BIN ARGS...: instructions in all; without SHA-256's block function
# and the Go scheduler's spinning and parking (which vary with how the
# goroutines meet: 0.02-0.43 G in three counts of one full ingest); and
# those of the code alone (the program's packages, SQLite, its driver and
# database/sql, the JSON parser, gob), leaving out the Go runtime, whose
# collector and scheduler vary from run to run: the same binary's code
# counts agree within 0.2%, its totals within 2-8%.
count() {
  rm -f "$WORK"/ledger.db*
  GODEBUG=asyncpreemptoff=1 valgrind -q --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$@" >/dev/null
  callgrind_annotate --auto=no --threshold=100 "$WORK/cg.out" 2>/dev/null | awk '
    /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1; next }
    /^ *[0-9,]+ \(/ {
      n = $1; gsub(",", "", n)
      if ($0 ~ /sha256\.block|lock_spinbit\.go|runtime\.(procyield|osyield|futex|usleep|nanotime1|schedule|findRunnable|runqgrab|runqsteal|stealWork|checkTimers|mcall|gosched_m|goschedImpl|park_m|gopark|goready|wakep|startm|stopm|notesleep|notewakeup|semasleep|semawakeup|casgstatus|execute|resetspinning|netpoll|injectglist)/) skip += n
      if ($0 ~ /github\.com\/clawledger\/clawledger\/|modernc\.org\/|fastjson|encoding\/gob|database\/sql/) code += n
    }
    END { printf "%.0f %.0f %.0f\n", total, total - skip, code }'
}
printf "%-10s %-5s %14s %14s %14s %10s\n" command build instructions counted code "code/line"
for cmd in no-index full; do
  args=(ingest -q --state "$TREE" --db "$WORK/ledger.db")
  [ $cmd = no-index ] && args+=(--no-index)
  for b in ref head; do
    read -r total counted code < <(count "$WORK/bin/$b" "${args[@]}")
    printf "%-10s %-5s %14s %14s %14s %10s\n" $cmd $b "$total" "$counted" "$code" $((code / LINES))
  done
done
rm -f "$WORK"/ledger.db* "$WORK/cg.out"
