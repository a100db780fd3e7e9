#!/usr/bin/env bash
# Ingest benchmark (docs/benchmarks.md, "Ingest"): builds a large synthetic
# state dir and times, on the same tree,
#   - the read floor:    rg -c -uu '"type"' over every file
#   - the storage floor: internal/cmd/rawfloor (each line's bytes into a one-table SQLite db),
#                        at SQLite's default page size and at the ledger's 16 KiB
#   - clawledger ingest --no-index: a full ingest into a fresh ledger (every derived
#                        table but the search index: the target's terms)
#   - clawledger ingest: the same with the search index built too
#   - the no-op floor:   find -newer over the tree
#   - clawledger ingest: a no-op re-ingest
# and the peak RSS of the full ingest and of a single 500 MB transcript; then
# a full and a no-op ingest of an OpenClaw 2026.7+ tree (5,000 sessions in one
# agent database, genstate -kind sqlite-large).
#
#   scripts/bench-ingest.sh [SIZE] [FILES] [WORKDIR]     (default 600MB 5000 /tmp/clawledger-bench)
#
# RT=1 runs the full-ingest comparison (the first hyperfine) at real-time
# priority (chrt -f 10, as root):
# on a machine shared with other work, those commands then have the cores
# as on a quiet machine (the kernel still leaves others 5% of each second);
# without it, on a loaded machine, each time measures the others' load.
set -euo pipefail
SIZE=${1:-600MB}
FILES=${2:-5000}
WORK=${3:-/tmp/clawledger-bench}
cd "$(dirname "$0")/.."
mkdir -p "$WORK/bin"
go build -o "$WORK/bin/clawledger" ./cmd/clawledger
go build -o "$WORK/bin/rawfloor" ./internal/cmd/rawfloor
go build -o "$WORK/bin/genstate" ./internal/cmd/genstate
B=$WORK/bin
RUN=()
if [ "${RT:-}" = 1 ]; then
  RUN=(chrt -f 10)
fi
TREE=$WORK/tree/.openclaw
if [ ! -d "$TREE" ]; then
  "$B/genstate" -kind large -home "$WORK/tree" -size "$SIZE" -files "$FILES" -agents 3
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
echo "tree: $(du -sb "$TREE" | cut -f1) bytes in $(find "$TREE" -name '*.jsonl' | wc -l) transcripts, $(cat "$TREE"/agents/*/sessions/*.jsonl | wc -l) lines"
echo "load: $(uptime)"
sync

"${RUN[@]}" hyperfine --warmup 1 --runs 3 --export-json "$WORK/full.json" \
  --prepare "rm -f $WORK/floor.db* $WORK/ledger.db*" \
  -n read-floor "rg -c -uu '\"type\"' $TREE" \
  -n storage-floor "$B/rawfloor -db $WORK/floor.db $TREE" \
  -n storage-floor-16k "$B/rawfloor -page-size 16384 -db $WORK/floor.db $TREE" \
  -n clawledger-ingest-no-index "$B/clawledger ingest -q --no-index --state $TREE --db $WORK/ledger.db" \
  -n clawledger-ingest "$B/clawledger ingest -q --state $TREE --db $WORK/ledger.db"

# the ledger for the no-op runs
rm -f "$WORK"/ledger.db*
"$B/clawledger" ingest -q --state "$TREE" --db "$WORK/ledger.db"
touch -d '1 hour ago' "$WORK/stamp"
sync # the ledger's gigabyte of dirty pages, written back meanwhile, would slow every stat
hyperfine --warmup 2 --runs 10 --export-json "$WORK/noop.json" \
  -n find-newer "find $TREE -newer $WORK/stamp" \
  -n clawledger-noop "$B/clawledger ingest -q --state $TREE --db $WORK/ledger.db"

echo "peak RSS, full ingest:"
rm -f "$WORK"/ledger.db*
/usr/bin/time -f "  %M KiB, %e s" "$B/clawledger" ingest -q --no-index --state "$TREE" --db "$WORK/ledger.db"
echo "peak RSS, full ingest with the search index:"
rm -f "$WORK"/ledger.db*
/usr/bin/time -f "  %M KiB, %e s" "$B/clawledger" ingest -q --state "$TREE" --db "$WORK/ledger.db"

ONE=$WORK/one/.openclaw
if [ ! -d "$ONE" ]; then
  "$B/genstate" -kind large -home "$WORK/one" -size 500MB -files 1 -agents 1
fi
echo "peak RSS, one $(du -h "$ONE"/agents/main/sessions/*.jsonl | cut -f1) transcript:"
rm -f "$WORK"/one.db*
/usr/bin/time -f "  %M KiB, %e s" "$B/clawledger" ingest -q --no-index --state "$ONE" --db "$WORK/one.db"
echo "peak RSS, the same with the search index:"
rm -f "$WORK"/one.db*
/usr/bin/time -f "  %M KiB, %e s" "$B/clawledger" ingest -q --state "$ONE" --db "$WORK/one.db"

# OpenClaw 2026.7+: the same measures on 5,000 sessions held in one agent
# database (no transcript files) and a workspace of ten files, as real
# installs have (files stored after the database's sessions: docs/benchmarks.md,
# "Stop 26"), left alone for over 2 s before the no-op runs (a database
# written more recently is always asked what changed)
ERA=$WORK/era/.openclaw
if [ ! -d "$ERA" ]; then
  "$B/genstate" -kind sqlite-large -home "$WORK/era" -files 5000
  mkdir -p "$ERA/workspace/memory"
  printf -- '- the deploy key lives in the vault\n- prefer postgres for the fleet\n' >"$ERA/workspace/MEMORY.md"
  printf 'calm, precise\n' >"$ERA/workspace/SOUL.md"
  for d in 01 02 03 04 05 06 07 08; do
    printf '# 2026-11-%s\n- worked on the ingest benchmark, kubernetes rollout notes\n' "$d" >"$ERA/workspace/memory/2026-11-$d.md"
  done
fi
echo "SQLite-era tree: $(du -sb "$ERA" | cut -f1) bytes, one agent database of 5000 sessions and a workspace of 10 files"
find "$ERA" -exec touch -h -d '1 hour ago' {} +
hyperfine --warmup 1 --runs 3 --export-json "$WORK/era-full.json" \
  --prepare "rm -f $WORK/era.db*" \
  -n era-ingest-no-index "$B/clawledger ingest -q --no-index --state $ERA --db $WORK/era.db" \
  -n era-ingest "$B/clawledger ingest -q --state $ERA --db $WORK/era.db"
hyperfine --warmup 2 --runs 10 --export-json "$WORK/era-noop.json" \
  -n era-noop "$B/clawledger ingest -q --state $ERA --db $WORK/era.db"
echo "peak RSS, SQLite-era full ingest:"
rm -f "$WORK"/era.db*
/usr/bin/time -f "  %M KiB, %e s" "$B/clawledger" ingest -q --no-index --state "$ERA" --db "$WORK/era.db"
