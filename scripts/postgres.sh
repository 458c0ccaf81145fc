#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of the gateway's Postgres store: Debian's `postgresql`
# package (installed by .ci/run when missing; this script installs nothing), a fresh cluster in a
# temporary directory ($EFFECT_RESPONSES_PG_STATE, default /tmp/effect-responses-pg), listening on 127.0.0.1
# only, on $EFFECT_RESPONSES_PG_PORT or else the first free port from 54329 on (so that two runs on one
# machine, each with its own state directory, do not meet).
#
#   scripts/postgres.sh start   # initdb + start + a database "effect_responses_test"; prints its URL and
#                               # writes it to $state/url
#   scripts/postgres.sh stop    # stops the server and removes the cluster
#   scripts/postgres.sh url     # prints the URL of the running server
#
# `npm test` runs it itself (vitest.postgres.ts: its own state directory, stopped at the end) unless
# $EFFECT_RESPONSES_TEST_PG_URL names a server; so does the bench's store section (packages/bench/src/Store.ts).
set -euo pipefail
state=${EFFECT_RESPONSES_PG_STATE:-/tmp/effect-responses-pg}
database=effect_responses_test

bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$dir" ] || [ ! -x "$dir/initdb" ]; then
    echo "postgres.sh: no PostgreSQL server found (install Debian's postgresql package: apt-get install -y postgresql)" >&2
    exit 1
  fi
  echo "$dir"
}

# initdb and postgres refuse to run as root: run them as the package's `postgres` user then.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  if [ -f "$state/url" ] && [ -d "$state/data" ] && as_owner "$(bindir)/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
    cat "$state/url"; return
  fi
  rm -rf "$state"
  mkdir -p "$state"
  [ "$(id -u)" = 0 ] && chown postgres "$state"
  local bin user
  bin=$(bindir)
  user=$(as_owner id -un)
  as_owner "$bin/initdb" -D "$state/data" -U "$user" --auth=trust --encoding=UTF8 --no-locale >"$state/initdb.log" 2>&1 \
    || { cat "$state/initdb.log" >&2; exit 1; }
  local port ports started=""
  ports=${EFFECT_RESPONSES_PG_PORT:-$(seq 54329 54348)}
  for port in $ports; do
    # a port something answers on is taken; one taken between this probe and the server's start fails it
    # with "could not bind", and the next port is tried (each attempt logs on its own: pg_ctl -l appends)
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    rm -f "$state/server.log"
    if as_owner "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $state -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null; then
      started=$port
      break
    fi
    grep -q "could not bind" "$state/server.log" 2>/dev/null || { cat "$state/server.log" >&2; exit 1; }
  done
  [ -n "$started" ] || { echo "postgres.sh: no free port among" $ports >&2; exit 1; }
  port=$started
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" "$database"
  echo "postgres://$user@127.0.0.1:$port/$database" > "$state/url"
  chmod a+r "$state/url"
  cat "$state/url"
}

stop() {
  if [ -d "$state/data" ]; then
    as_owner "$(bindir)/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) cat "$state/url" ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
