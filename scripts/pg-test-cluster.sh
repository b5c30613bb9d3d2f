#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the PostgreSQL run of the test suite.
#
#   scripts/pg-test-cluster.sh start [DIR] [PORT]   # prints the BLUELINE_TEST_DATABASE URL
#   scripts/pg-test-cluster.sh stop  [DIR]
#
# Defaults: DIR /tmp/bl-pg, PORT 54329. Uses the newest /usr/lib/postgresql/*/bin (Debian's
# postgresql package; `apt-get install -y --no-upgrade postgresql postgresql-contrib` on CI).
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
# Durability is off (fsync, synchronous_commit, full_page_writes): a test cluster, thrown away.
set -euo pipefail

cmd="${1:-}"
dir="${2:-/tmp/bl-pg}"
port="${3:-54329}"
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$pgbin" ]; then
  echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin)." >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$1"; else bash -c "$1"; fi
}

case "$cmd" in
  start)
    if [ "$(id -u)" -eq 0 ]; then install -d -o postgres "$dir"; else mkdir -p "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "'$pgbin/initdb' -D '$dir/data' -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8" >/dev/null
    fi
    as_owner "'$pgbin/pg_ctl' -D '$dir/data' -l '$dir/log' -w start -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200\"" >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "'$pgbin/pg_ctl' -D '$dir/data' -m fast -w stop" >/dev/null
    fi
    ;;
  *)
    echo "usage: $0 start|stop [DIR] [PORT]" >&2
    exit 2
    ;;
esac
