#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (test/postgres, test/workers):
#   eval "$(bash .ci/postgres.sh start)"   # prints `export PG_URL=postgres://postgres@127.0.0.1:<port>/postgres`
#   bash .ci/postgres.sh stop
# Installs Debian's `postgresql` package when initdb is missing (as root), then runs initdb and pg_ctl as an
# unprivileged user (they refuse root: Debian's `postgres` when running as root), in a temp dir, on a free loopback
# port, trust auth, fsync off. Idempotent: `start` on a running cluster prints its URL again, `stop` without one does
# nothing. Only the export line goes to stdout; everything else to stderr.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() {
  echo "postgres.sh: $*" >&2
  exit 1
}

# One cluster per clone: the state dir is keyed by this checkout's path.
key=$(printf %s "$PWD" | cksum | cut -d' ' -f1)
state="${TMPDIR:-/tmp}/langgraph-guards-pg-$key"
data="$state/data"

find_bindir() {
  local dir
  for dir in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null || true)" \
    $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -rn); do
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

owner=""
if [ "$(id -u)" = 0 ]; then
  owner=postgres
fi

# Runs a command as the cluster's owner (the current user unless we are root).
as_owner() {
  if [ -z "$owner" ]; then
    "$@"
  elif command -v runuser >/dev/null; then
    runuser -u "$owner" -- "$@"
  else
    su -s /bin/sh "$owner" -c "$(printf '%q ' "$@")"
  fi
}

start() {
  local bin
  if ! bin=$(find_bindir); then
    [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed (no initdb) and installing it needs root"
    command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get to install it"
    echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; } \
      >"${TMPDIR:-/tmp}/langgraph-guards-pg-install.log" 2>&1 ||
      die "apt-get install postgresql failed: $(tail -n 1 "${TMPDIR:-/tmp}/langgraph-guards-pg-install.log")"
    bin=$(find_bindir) || die "PostgreSQL installed but initdb/pg_ctl not found"
  fi
  if [ -n "$owner" ]; then
    id -u "$owner" >/dev/null 2>&1 || die "running as root and there is no '$owner' user to run PostgreSQL"
  fi

  # Already running (idempotent start): print its URL again.
  if [ -f "$state/url" ] && as_owner "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1; then
    echo "export PG_URL=$(cat "$state/url")"
    return 0
  fi
  stop_cluster >/dev/null 2>&1 || true

  mkdir -p "$state"
  chmod 755 "$state"
  [ -z "$owner" ] || chown "$owner:" "$state"
  (cd "$state" && as_owner env LC_ALL=C LANG=C "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 \
    --locale=C --no-sync) >"$state/initdb.log" 2>&1 || die "initdb failed: $(tail -n 1 "$state/initdb.log")"
  cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$state'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
shared_buffers = 32MB
EOF

  local attempt port
  for attempt in 1 2 3; do
    port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    if (cd "$state" && as_owner "$bin/pg_ctl" start -D "$data" -l "$state/server.log" -w -t 30 -o "-p $port") \
      >"$state/pg_ctl.log" 2>&1; then
      echo "postgres://postgres@127.0.0.1:$port/postgres" >"$state/url"
      echo "postgres.sh: PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port ($state)" >&2
      echo "export PG_URL=postgres://postgres@127.0.0.1:$port/postgres"
      return 0
    fi
    grep -qiE 'already in use|could not bind' "$state/server.log" 2>/dev/null || break
  done
  die "pg_ctl start failed: $(tail -n 1 "$state/server.log" 2>/dev/null || tail -n 1 "$state/pg_ctl.log")"
}

stop_cluster() {
  [ -d "$state" ] || return 0
  local bin
  if [ -d "$data" ] && bin=$(find_bindir); then
    (cd "$state" && as_owner "$bin/pg_ctl" stop -D "$data" -m immediate -w) >/dev/null 2>&1 || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
start) start ;;
stop) stop_cluster ;;
*) die "usage: bash .ci/postgres.sh start|stop" ;;
esac
