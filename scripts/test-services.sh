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
#   `postgres` user the package creates. A second cluster, which tests may
#   stop and start (a server restart mid-ingest), is exported as
#   CLAWLEDGER_TEST_POSTGRES_RESTARTABLE, with CLAWLEDGER_TEST_POSTGRES_CTL,
#   a command that takes `stop` or `start`.
# - Chromium from Debian's `chromium` package, exported as
#   CLAWLEDGER_TEST_CHROMIUM.
#
# Without this script the PostgreSQL and browser tests skip, saying how to
# run them. Set CLAWLEDGER_TEST_POSTGRES yourself to use a server of your own.
set -euo pipefail

scripts_dir=$(cd "$(dirname "$0")" && pwd)
"$scripts_dir/install-services.sh"
SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

if [ -z "${CLAWLEDGER_TEST_POSTGRES:-}" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  as_pg() {
    if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else $SUDO -u postgres sh -c "$*"; fi
  }
  free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
      echo $((20000 + RANDOM % 20000))
  }
  clusters=()
  stop_pg() {
    for data in "${clusters[@]}"; do
      as_pg "'$bin/pg_ctl' -D '$data/db' -m immediate stop" >/dev/null 2>&1 || true
      rm -rf "$data"
    done
  }
  trap stop_pg EXIT
  # cluster DATA PORT: a throwaway cluster, started, with DATA/ctl to stop and start it
  cluster() {
    local data=$1 port=$2
    chmod 0777 "$data" # the postgres user writes its socket and data here
    clusters+=("$data")
    as_pg "'$bin/initdb' -D '$data/db' -A trust -U postgres -E UTF8 --locale=C.UTF-8" >/dev/null
    cat >"$data/ctl" <<CTL
#!/bin/sh
# stop or start the throwaway cluster in $data
cmd="'$bin/pg_ctl' -D '$data/db' -l '$data/log' -w -m fast -o \\"-p $port -k '$data' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300\\" \$1"
if [ "\$(id -u)" = 0 ]; then exec su postgres -s /bin/sh -c "\$cmd"; else exec $SUDO -u postgres sh -c "\$cmd"; fi
CTL
    chmod 0755 "$data/ctl"
    "$data/ctl" start >/dev/null
  }
  data=$(mktemp -d /tmp/clawledger-pg.XXXXXX)
  port=$(free_port)
  echo "== PostgreSQL: throwaway cluster on 127.0.0.1:$port ($data)"
  cluster "$data" "$port"
  export CLAWLEDGER_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  data2=$(mktemp -d /tmp/clawledger-pg.XXXXXX)
  port2=$(free_port)
  echo "== PostgreSQL: a second, restartable cluster on 127.0.0.1:$port2 ($data2)"
  cluster "$data2" "$port2"
  export CLAWLEDGER_TEST_POSTGRES_RESTARTABLE="postgres://postgres@127.0.0.1:$port2/postgres?sslmode=disable"
  export CLAWLEDGER_TEST_POSTGRES_CTL="$data2/ctl"
fi

export CLAWLEDGER_TEST_CHROMIUM="${CLAWLEDGER_TEST_CHROMIUM:-$(command -v chromium)}"

"$@"
