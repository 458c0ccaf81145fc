#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of the gateway's Postgres store: Debian's `postgresql`
# package (installed by .ci/run when missing; this script installs nothing), a fresh cluster in a
# temporary directory, listening on 127.0.0.1 only, on an unusual port (54329, or $EFFECT_RESPONSES_PG_PORT).
#
#   scripts/postgres.sh start   # initdb + start + a database "effect_responses_test"; prints its URL and
#                               # writes it to /tmp/effect-responses-pg/url
#   scripts/postgres.sh stop    # stops the server and removes the cluster
#   scripts/postgres.sh url     # prints the URL of the running server
#
# The tests read the URL from $EFFECT_RESPONSES_TEST_PG_URL, else from /tmp/effect-responses-pg/url; they
# fail (not skip) when no server answers.
set -euo pipefail
state=/tmp/effect-responses-pg
port=${EFFECT_RESPONSES_PG_PORT:-54329}
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
  as_owner "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $state -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null \
    || { cat "$state/server.log" >&2; exit 1; }
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
