#!/usr/bin/env bash
# Benchmarks `clawledger usage daily` (its automatic incremental refresh
# included) against `ccusage openclaw daily` on the same large state dir.
# Needs Go, Node, npm and hyperfine.
#
#   scripts/bench-usage.sh [WORKDIR]
#
# WORKDIR (default: a temp dir, removed afterwards) keeps the generated tree,
# the ledger and ccusage between runs. SIZE (default 500MB), FILES (5000)
# and RUNS (5) tune it. The tree is written by the project's own generator
# (internal/fixture, -kind large); the first ingest is timed once, then
# hyperfine times both tools twice: on an unchanged tree, and with one new
# assistant message appended to a transcript before every run (so clawledger
# ingests it first, as it would under a live agent).
set -euo pipefail

size=${SIZE:-500MB}
files=${FILES:-5000}
runs=${RUNS:-5}
version=20.0.24 # 20.0.26 ships no Linux binary
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then
  work=$1
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)

echo "== machine"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /cpu: /'
free -g | awk '/Mem:/ {print "ram: " $2 " GiB"}'
uptime

echo "== build"
(cd "$root" && go build -o "$work/clawledger" ./cmd/clawledger)
if [ ! -x "$work/npm/node_modules/.bin/ccusage" ]; then
  npm install --prefix "$work/npm" --no-save --no-audit --no-fund --loglevel=error \
    "ccusage@$version" "@ccusage/ccusage-linux-x64@$version" >/dev/null
fi
chmod +x "$work/npm/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage" # npm drops the run bit
ccusage=$work/npm/node_modules/.bin/ccusage
"$ccusage" --version

state=$work/home/.openclaw
if [ ! -d "$state" ]; then
  echo "== generate $size in $files transcripts"
  (cd "$root" && go run ./internal/cmd/genstate -kind large -home "$work/home" -size "$size" -files "$files")
fi
du -sh --apparent-size "$state"
find "$state" -name '*.jsonl*' | wc -l | sed 's/^/transcripts: /'

db=$work/ledger.db
cl=("$work/clawledger" --db "$db" --state "$state")
if [ ! -f "$db" ]; then
  echo "== first ingest (once)"
  /usr/bin/time -f "first ingest: %e s, max RSS %M KB" "${cl[@]}" ingest --quiet
fi

# both tools must agree before their times mean anything
ours=$("${cl[@]}" usage daily --json --timezone UTC | jq -c .totals)
theirs=$(HOME=$work "$ccusage" openclaw daily --json --offline --timezone UTC --open-claw-path "$state" | jq -c .totals)
echo "clawledger totals: $ours"
echo "ccusage totals:    $theirs"
[ "$(jq -S . <<<"$ours" | jq 'del(.totalCost)')" = "$(jq -S . <<<"$theirs" | jq 'del(.totalCost)')" ] || {
  echo "totals differ" >&2
  exit 1
}

# a new assistant message, as a live agent would append it
target=$(find "$state/agents" -name '*.jsonl' | sort | sed -n 1p)
append="$work/append-one.sh"
cat >"$append" <<EOF
#!/usr/bin/env bash
n=\$(date +%s%N)
printf '{"type":"message","id":"%08x","parentId":null,"timestamp":"2026-03-20T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"appended %s"}],"provider":"anthropic","model":"claude-sonnet-4","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.00045}},"stopReason":"stop","timestamp":%s}}\n' \$((n % 4294967296)) "\$n" "\$((n / 1000000))" >>"$target"
EOF
chmod +x "$append"

export HOME=$work
ccu="$ccusage openclaw daily --json --offline --timezone UTC --open-claw-path $state"
ours="${cl[*]} usage daily --json --timezone UTC"

echo "== unchanged tree"
hyperfine --warmup 1 --runs "$runs" --export-json "$work/unchanged.json" \
  -n clawledger "$ours" -n ccusage "$ccu"
echo "== one message appended before each run"
hyperfine --warmup 1 --runs "$runs" --prepare "$append" --export-json "$work/appended.json" \
  -n clawledger "$ours" -n ccusage "$ccu"

for f in unchanged appended; do
  jq -r --arg f "$f" '.results | (map({(.command): .mean}) | add) as $m |
    "\($f): clawledger \($m.clawledger * 1000 | round) ms, ccusage \($m.ccusage * 1000 | round) ms, ratio \($m.clawledger / $m.ccusage * 100 | round / 100)"' \
    "$work/$f.json"
done
uptime
