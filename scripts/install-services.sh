#!/usr/bin/env bash
# Installs what the backend and browser tests need, from Debian's packages,
# when it is missing: `postgresql` (the second backend's conformance,
# end-to-end and fleet tests run on a throwaway cluster of it) and
# `chromium` (the web UI's browser test). Fails when either cannot be had.
# .ci/run and scripts/test-services.sh call it.
set -euo pipefail
SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]} (Debian packages)"
  # APT::Sandbox::User=root: apt's _apt user cannot write a /tmp that is not world-writable
  $SUDO apt-get -o APT::Sandbox::User=root update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o APT::Sandbox::User=root install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
ls /usr/lib/postgresql/*/bin/initdb >/dev/null || { echo "PostgreSQL's initdb not found after installing postgresql" >&2; exit 1; }
command -v chromium >/dev/null || { echo "chromium not found after installing it" >&2; exit 1; }
