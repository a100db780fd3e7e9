#!/usr/bin/env bash
# Captures ccusage's reports on the project's usage fixture into
# cmd/clawledger/testdata/ccusage/, the reference the usage tests compare
# `clawledger usage` with. Needs Go, Node and npm.
#
#   scripts/ccusage-capture.sh
#
# ccusage 20.0.24 is pinned: 20.0.26 ships no Linux binary.
set -euo pipefail

version=20.0.24
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/cmd/clawledger/testdata/ccusage
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm install --prefix "$work/npm" --no-save --no-audit --no-fund --loglevel=error \
  "ccusage@$version" "@ccusage/ccusage-linux-x64@$version" >/dev/null
chmod +x "$work/npm/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage" # npm drops the run bit
ccusage=$work/npm/node_modules/.bin/ccusage

(cd "$root" && go run ./internal/cmd/genstate -kind usage -home "$work/home")

# HOME points at an empty directory so no user config changes the result
run() { # name, ccusage arguments...
  local name=$1
  shift
  HOME=$work/empty "$ccusage" openclaw "$@" --json --offline >"$out/$name.json"
  echo "ccusage openclaw $* --json --offline > $name.json"
}
mkdir -p "$work/empty" "$out"
run agree-daily-utc daily --timezone UTC --open-claw-path "$work/home/agree/.openclaw"
run agree-daily-kolkata daily --timezone Asia/Kolkata --open-claw-path "$work/home/agree/.openclaw"
run agree-monthly-utc monthly --timezone UTC --open-claw-path "$work/home/agree/.openclaw"
run agree-session-utc session --timezone UTC --open-claw-path "$work/home/agree/.openclaw"
run differ-session-utc session --timezone UTC --open-claw-path "$work/home/differ/.openclaw"
