#!/usr/bin/env bash
# PostgreSQL benchmark (docs/benchmarks.md, "PostgreSQL"): on the 600 MB
# tree of scripts/bench-ingest.sh, and on it split in 4 state dirs (every
# 4th transcript, hard links), in ROUNDS rounds, each timing in turn
#   - clawledger's SQLite ledger ingesting the whole tree (the reference),
#   - one host ingesting the whole tree into PostgreSQL,
#   - PostgreSQL's own COPY of the raw lines into an unindexed table (the floor),
#   - 4 hosts ingesting the 4 quarters at once,
#   - 4 COPY streams of the 4 quarters at once;
# then the reports' latency (usage daily, sessions, search) at 1,000,000
# messages (internal/cmd/gensearch's transcripts) on both ledgers.
#
#   scripts/bench-postgres.sh DSN [WORKDIR] [ROUNDS]
#
# DSN is a server the benchmark may create schemas and tables on: give it
# its settings for production (fsync on; e.g. shared_buffers=1GB,
# max_wal_size=8GB), not the test clusters' (fsync off).
set -euo pipefail
DSN=${1:?usage: scripts/bench-postgres.sh DSN [WORKDIR] [ROUNDS]}
WORK=${2:-/tmp/clawledger-pgbench}
ROUNDS=${3:-3}
cd "$(dirname "$0")/.."
mkdir -p "$WORK/bin"
go build -o "$WORK/bin/genstate" ./internal/cmd/genstate
go build -o "$WORK/bin/gensearch" ./internal/cmd/gensearch
go build -o "$WORK/bin/fleetbench" ./internal/cmd/fleetbench
B=$WORK/bin
TREE=$WORK/tree/.openclaw
[ -d "$TREE" ] || "$B/genstate" -kind large -home "$WORK/tree" -size 600MB -files 5000 -agents 3
if [ ! -d "$WORK/split" ]; then
  i=0
  for f in $(cd "$WORK/tree/.openclaw" && find agents -name '*.jsonl' | sort); do
    h=$((i % 4 + 1)); i=$((i + 1))
    mkdir -p "$WORK/split/h$h/.openclaw/$(dirname "$f")"
    ln "$TREE/$f" "$WORK/split/h$h/.openclaw/$f"
  done
fi
QUARTERS="$WORK/split/h1/.openclaw $WORK/split/h2/.openclaw $WORK/split/h3/.openclaw $WORK/split/h4/.openclaw"
with_schema() { # DSN with its search_path set to a schema made afresh
  psql "$DSN" -qc "DROP SCHEMA IF EXISTS $1 CASCADE" 2>/dev/null
  psql "$DSN" -qc "CREATE SCHEMA $1"
  case "$DSN" in *\?*) echo "$DSN&search_path=$1" ;; *) echo "$DSN?search_path=$1" ;; esac
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
echo "server: $(psql "$DSN" -Atc 'SELECT version()' | cut -d' ' -f1-2), fsync $(psql "$DSN" -Atc 'SHOW fsync'), shared_buffers $(psql "$DSN" -Atc 'SHOW shared_buffers')"
echo "tree: $(du -sb "$TREE" | cut -f1) bytes in $(find "$TREE" -name '*.jsonl' | wc -l) transcripts"
for r in $(seq "$ROUNDS"); do
  echo "== round $r, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -f "$WORK"/lite.db*; sync
  echo -n "sqlite, one ledger: "; "$B/fleetbench" ingest -db "$WORK/lite.db" "$TREE"
  sync; echo -n "postgres, one host: "; "$B/fleetbench" ingest -db "$(with_schema one)" "$TREE"
  sync; echo -n "postgres: "; "$B/fleetbench" copyfloor -db "$DSN" "$TREE"
  sync; echo -n "postgres: "; "$B/fleetbench" fleet -db "$(with_schema four)" $QUARTERS
  sync; echo -n "postgres: "; "$B/fleetbench" copyfloor -db "$DSN" -streams 4 $QUARTERS
done

# the reports at 1,000,000 messages
MSGS=$WORK/messages
if [ ! -d "$MSGS/raw" ]; then
  "$B/gensearch" -db "$MSGS/gen.db" -raw "$MSGS/raw"
  rm -f "$MSGS"/gen.db*
fi
RAW=$MSGS/raw # the state dir gensearch's ledger names
if [ ! -f "$MSGS/lite.db" ]; then
  echo -n "sqlite, 1M messages, with the search index: "; "$B/fleetbench" ingest -index -db "$MSGS/lite.db" "$RAW"
  PGM=$(with_schema messages)
  echo -n "postgres, 1M messages, with the search index: "; "$B/fleetbench" ingest -index -db "$PGM" "$RAW"
  psql "$DSN" -qc "VACUUM ANALYZE"
fi
PGM=$(case "$DSN" in *\?*) echo "$DSN&search_path=messages" ;; *) echo "$DSN?search_path=messages" ;; esac)
echo "== reports at 1M messages, load: $(cut -d' ' -f1-3 /proc/loadavg)"
# gensearch's words (it prints how many messages hold each): common, a
# phrase, CJK, rare. Its transcripts carry no usage: usage daily here
# times an empty report (docs/benchmarks.md's usage figures were taken on
# a 1.7 GB genstate tree of about 1M messages)
for q in kubernetes '"the deployment failed"' 数据库连接超时 zanzibarite; do
  echo "-- sqlite"; "$B/fleetbench" reports -db "$MSGS/lite.db" -n 20 -query "$q"
  echo "-- postgres"; "$B/fleetbench" reports -db "$PGM" -n 20 -query "$q"
done
