#!/usr/bin/env bash
# Search benchmarks (docs/benchmarks.md, "Search"): builds a synthetic
# corpus of 1,000,000 messages straight into a ledger (through the store's
# Writer, not JSONL ingest) plus the same transcripts as JSONL files for rg,
# indexes it with `clawledger reindex`, then measures full-text query
# latency (pure-Go and cgo SQLite drivers), rg over the raw files, hybrid
# latency over 100,000 chunks of 384 dimensions, and a few end-to-end CLI
# calls. Re-running reuses the corpora in DIR.
#
#   scripts/bench-search.sh [DIR]      (default /tmp/clawledger-bench; ~3 GB)
#   MESSAGES=200000 RUNS=50 scripts/bench-search.sh
set -euo pipefail
dir=${1:-/tmp/clawledger-bench}
messages=${MESSAGES:-1000000}
runs=${RUNS:-200}
mkdir -p "$dir"
cd "$(dirname "$0")/.."
command -v rg >/dev/null || { echo "rg (ripgrep) is needed: apt-get install ripgrep" >&2; exit 1; }

go build -o "$dir/clawledger" ./cmd/clawledger
go build -o "$dir/gensearch" ./internal/cmd/gensearch
go build -o "$dir/benchsearch" ./internal/cmd/benchsearch
cgo=""
if command -v cc >/dev/null && go build -tags sqlite_fts5 -o "$dir/benchsearch-cgo" ./internal/cmd/benchsearch; then
	cgo="$dir/benchsearch-cgo"
fi

echo "## machine"
echo "nproc: $(nproc); $(lscpu | grep 'Model name' | sed 's/  */ /g'); RAM: $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "go: $(go version | cut -d' ' -f3); load: $(uptime | sed 's/.*load average: //')"

if [ ! -f "$dir/ledger.db" ]; then
	echo "## corpus: $messages messages"
	/usr/bin/time -f "written in %e s" "$dir/gensearch" -db "$dir/ledger.db" -raw "$dir/raw" -messages "$messages" -model "$dir/model384" > "$dir/planted.json"
	cat "$dir/planted.json"
	/usr/bin/time -f "reindex: %e s, %M KiB max RSS" "$dir/clawledger" --db "$dir/ledger.db" reindex
fi
echo "ledger: $(du -h "$dir/ledger.db" | cut -f1), raw JSONL: $(du -sh "$dir/raw" | cut -f1)"

# a ledger just written is still being written back to disk: reads meanwhile
# are slow in every pread (seen here as 1.2-1.8x slower queries)
sync
echo "## full-text search, modernc.org/sqlite (pure Go), $runs runs per query"
"$dir/benchsearch" -db "$dir/ledger.db" -raw "$dir/raw" -n "$runs"
if [ -n "$cgo" ]; then
	echo "## full-text search, mattn/go-sqlite3 (cgo, -tags sqlite_fts5)"
	"$cgo" -db "$dir/ledger.db" -n "$runs"
fi

echo "## CLI end to end (process start, open, query, print; --no-refresh), best and median of 11"
for q in zanzibarite kubernetes error; do
	ts=()
	for _ in $(seq 11); do
		s=$(date +%s%N)
		"$dir/clawledger" --db "$dir/ledger.db" search --no-refresh --json "$q" > /dev/null
		ts+=($(( ($(date +%s%N) - s) / 1000000 )))
	done
	sorted=($(printf '%s\n' "${ts[@]}" | sort -n))
	echo "search $q: best ${sorted[0]} ms, median ${sorted[5]} ms"
done

if [ ! -f "$dir/hybrid.db" ]; then
	echo "## hybrid corpus: 100,000 messages, static model of 384 dimensions"
	"$dir/gensearch" -db "$dir/hybrid.db" -messages 100000 > /dev/null
	/usr/bin/time -f "reindex: %e s" "$dir/clawledger" --db "$dir/hybrid.db" reindex
	/usr/bin/time -f "embed: %e s" "$dir/clawledger" --db "$dir/hybrid.db" embed --provider static --model-dir "$dir/model384"
fi
echo "## hybrid search (weighted fusion, limit 10), $runs runs per query"
"$dir/benchsearch" -db "$dir/hybrid.db" -mode hybrid -model "$dir/model384" -n "$runs"
echo "load: $(uptime | sed 's/.*load average: //')"
