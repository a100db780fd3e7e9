#!/usr/bin/env bash
# Cortex benchmark (docs/benchmarks.md, "Cortex"), on the ingest benchmark's
# tree (scripts/bench-ingest.sh): RUNS times, a full ingest (--no-index) of
# the tree into a fresh ledger, then a rebuild of that ledger's cortex
# (internal/cmd/cortexbench) and one with `clawledger cortex rebuild`, each
# with its wall and CPU time; then the
# incremental cost: ROUNDS times, one user message appended to each of
# APPEND transcripts, an ingest, and a timed cortex update. The appended
# lines are cut off the transcripts again at the end. cortexbench runs with
# the garbage collector settings the clawledger binary gives itself
# (cmd/clawledger/main.go: GOGC 400, a 64 MiB soft memory limit), as
# `cortex rebuild` does.
#
#   scripts/bench-cortex.sh [SIZE] [FILES] [WORKDIR]     (default 600MB 5000 /tmp/clawledger-bench)
set -euo pipefail
SIZE=${1:-600MB}
FILES=${2:-5000}
WORK=${3:-/tmp/clawledger-bench}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-5}
APPEND=${APPEND:-20}
cd "$(dirname "$0")/.."
mkdir -p "$WORK/bin"
go build -o "$WORK/bin/clawledger" ./cmd/clawledger
go build -o "$WORK/bin/genstate" ./internal/cmd/genstate
go build -o "$WORK/bin/cortexbench" ./internal/cmd/cortexbench
B=$WORK/bin
export GOGC=${GOGC:-400} GOMEMLIMIT=${GOMEMLIMIT:-64MiB}
TREE=$WORK/tree/.openclaw
DB=$WORK/cortex.db
if [ ! -d "$TREE" ]; then
  "$B/genstate" -kind large -home "$WORK/tree" -size "$SIZE" -files "$FILES" -agents 3
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
echo "tree: $(du -sb "$TREE" | cut -f1) bytes in $(find "$TREE" -name '*.jsonl' | wc -l) transcripts"

for i in $(seq "$RUNS"); do
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -f "$DB" "$DB-wal" "$DB-shm"
  /usr/bin/time -f "ingest --no-index: wall %e s, cpu %U user + %S sys s, %M KiB" \
    "$B/clawledger" ingest -q --no-index --state "$TREE" --db "$DB"
  sync
  /usr/bin/time -f "  (the process: wall %e s, cpu %U user + %S sys s, %M KiB)" "$B/cortexbench" -db "$DB"
  # the command, over the cortex just built (it empties it first)
  /usr/bin/time -f "cortex rebuild: wall %e s, cpu %U user + %S sys s, %M KiB" "$B/clawledger" cortex rebuild -q --db "$DB"
done

# the incremental cost per appended entry
mapfile -t APPENDED < <(find "$TREE" -name '*.jsonl' | sort | head -"$APPEND")
declare -A SIZES
for f in "${APPENDED[@]}"; do SIZES[$f]=$(stat -c %s "$f"); done
restore() {
  for f in "${APPENDED[@]}"; do truncate -s "${SIZES[$f]}" "$f"; done
}
trap restore EXIT
"$B/cortexbench" -db "$DB" -update >/dev/null # current before the first round
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for f in "${APPENDED[@]}"; do
    last=$(tail -1 "$f" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | head -1)
    printf '{"type":"message","id":"r%s%s","parentId":"%s","timestamp":"%s","message":{"role":"user","content":[{"type":"text","text":"round %s: check the deploy logs again"}]}}\n' \
      "$r" "$RANDOM$RANDOM" "$last" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" "$r" >>"$f"
  done
  "$B/clawledger" ingest -q --no-index --state "$TREE" --db "$DB"
  echo -n "update after appending to $APPEND transcripts: "
  "$B/cortexbench" -db "$DB" -update
done
restore
trap - EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
