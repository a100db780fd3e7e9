#!/usr/bin/env bash
# Installs and starts what the backend and browser tests need, then runs the
# command given (the tests) with it in the environment, and stops it after:
#
#   scripts/test-services.sh go test ./...
#
# - PostgreSQL from Debian's `postgresql` package: a throwaway cluster
#   (initdb in a temp dir, trust auth, a random free port on 127.0.0.1,
#   stopped and removed at exit), exported as CLAWLEDGER_TEST_POSTGRES.
#   PostgreSQL refuses to run as root, so the cluster runs as the
#   `postgres` user the package creates.
# - Chromium from Debian's `chromium` package, exported as
#   CLAWLEDGER_TEST_CHROMIUM.
#
# Without this script the PostgreSQL and browser tests skip, saying how to
# run them. Set CLAWLEDGER_TEST_POSTGRES yourself to use a server of your own.
set -euo pipefail

SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]} (Debian packages)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ -z "${CLAWLEDGER_TEST_POSTGRES:-}" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  data=$(mktemp -d /tmp/clawledger-pg.XXXXXX)
  chmod 0777 "$data" # the postgres user writes its socket and data here
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + RANDOM % 20000)))
  as_pg() {
    if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else $SUDO -u postgres sh -c "$*"; fi
  }
  stop_pg() {
    as_pg "'$bin/pg_ctl' -D '$data/db' -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$data"
  }
  trap stop_pg EXIT
  echo "== PostgreSQL: throwaway cluster on 127.0.0.1:$port ($data)"
  as_pg "'$bin/initdb' -D '$data/db' -A trust -U postgres -E UTF8 --locale=C.UTF-8" >/dev/null
  as_pg "'$bin/pg_ctl' -D '$data/db' -l '$data/log' -w -o \"-p $port -k '$data' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300\" start" >/dev/null
  export CLAWLEDGER_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
fi

export CLAWLEDGER_TEST_CHROMIUM="${CLAWLEDGER_TEST_CHROMIUM:-$(command -v chromium)}"

"$@"
