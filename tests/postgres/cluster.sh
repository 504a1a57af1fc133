#!/usr/bin/env bash
# A private, throwaway PostgreSQL cluster for tests: its own data folder, its own port on
# 127.0.0.1, trust authentication, no durability. Nothing here is fit for real data.
#
#   tests/postgres/cluster.sh start DIR     make (or bring back) the cluster; prints its URL
#   tests/postgres/cluster.sh url DIR       print the URL: postgresql://cudojo@127.0.0.1:PORT/cudojo
#   tests/postgres/cluster.sh restart DIR   fast restart on the same port (clients are cut off)
#   tests/postgres/cluster.sh kill DIR      SIGKILL the server and its backends, as a crash would;
#                                           `start DIR` brings the same cluster back
#   tests/postgres/cluster.sh stop DIR      stop it and delete its data
#
# Two optional environment variables, read by `start` when it makes a new cluster (a cluster
# brought back keeps the settings it was made with):
#   CUDOJO_PG_LISTEN="127.0.0.1,10.77.0.1"   the addresses the server listens on (default
#                                            127.0.0.1; the printed URL always names 127.0.0.1, so
#                                            keep it in the list)
#   CUDOJO_PG_TRUST="10.77.0.0/16 ..."       networks whose clients may connect, trusted like
#                                            loopback (default: loopback only)
#
# DIR is the caller's folder: it holds only `url` and `cluster-path`. The cluster itself lives in
# a folder made by mktemp under /tmp, named in DIR/cluster-path, because DIR may sit under a path
# the postgres user cannot enter (/work, /root) and because a unix socket path must stay short.
#
# PostgreSQL refuses to run as root. As root (here and in CI) the server-side programs run as the
# `postgres` user that Debian's postgresql package creates, and the cluster folder is theirs;
# clients (psql, pg_isready, createdb) connect over TCP and need no particular user.
set -euo pipefail

readonly DATABASE=cudojo
readonly ROLE=cudojo

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '/^#   tests\/postgres\/cluster.sh start/,/^#   tests\/postgres\/cluster.sh stop/p' "$0" |
    sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The newest installed server: /usr/lib/postgresql/15/bin on Debian 12.
find_bin_dir() {
  local newest
  newest=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  if [[ -z "$newest" || ! -x "$newest/initdb" || ! -x "$newest/pg_ctl" ]]; then
    die "no PostgreSQL server found under /usr/lib/postgresql/*/bin; install postgresql (scripts/setup.sh does)"
  fi
  echo "$newest"
}

# Runs a server-side program as someone PostgreSQL accepts. From the cluster folder, because
# runuser keeps the current directory and postgres may not be allowed to look at ours.
as_server_user() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$cluster" && runuser -u postgres -- "$@")
  else
    (cd "$cluster" && "$@")
  fi
}

# A port nothing listens on now. Another program may take it before the server binds; start()
# tries again with a new port when that happens.
free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    # Nothing answers a connection: free, as far as we can tell without binding.
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "found no free port on 127.0.0.1"
}

# Reads DIR's records into $cluster, $data, $log, $url; empty when there are none.
load_records() {
  cluster="" data="" log="" url=""
  if [[ -f "$dir/cluster-path" ]]; then
    cluster=$(<"$dir/cluster-path")
    data="$cluster/data"
    log="$cluster/postgres.log"
  fi
  if [[ -f "$dir/url" ]]; then url=$(<"$dir/url"); fi
}

port_of() { sed -n 's|.*@127\.0\.0\.1:\([0-9]*\)/.*|\1|p' <<<"$1"; }

is_ready() { [[ -n "$url" ]] && "$bin/pg_isready" -q -d "$url" -t 2; }

# CUDOJO_PG_LISTEN and CUDOJO_PG_TRUST, checked before anything is made.
check_options() {
  local network trust=${CUDOJO_PG_TRUST:-}
  # Addresses, host names, ',' and spaces only: the value goes between quotes in the settings.
  [[ ${CUDOJO_PG_LISTEN:-127.0.0.1} =~ ^[A-Za-z0-9.:,\ _-]+$ ]] ||
    die "CUDOJO_PG_LISTEN is not a list of addresses: '${CUDOJO_PG_LISTEN:-}'"
  for network in ${trust//,/ }; do
    [[ $network =~ ^[0-9A-Fa-f.:]+/[0-9]+$ ]] || die "CUDOJO_PG_TRUST: '$network' is not an address/prefix"
  done
}

write_settings() {
  local port=$1 listen=${CUDOJO_PG_LISTEN:-127.0.0.1} network trust=${CUDOJO_PG_TRUST:-}
  # Later lines win in postgresql.conf, so this block overrides initdb's defaults.
  cat >>"$data/postgresql.conf" <<EOF

# cluster.sh: a test cluster, rebuilt from nothing every run.
listen_addresses = '$listen'
port = $port
unix_socket_directories = '$cluster'
max_connections = 200
# Durability buys nothing for throwaway data and costs time on every commit.
fsync = off
synchronous_commit = off
full_page_writes = off
# Containers often give /dev/shm only 64 MB; segments in files under the data folder avoid it.
dynamic_shared_memory_type = mmap
EOF
  # Extra networks (CUDOJO_PG_TRUST, separated by spaces or commas) trusted as initdb's
  # --auth=trust trusts loopback: any role, no password.
  for network in ${trust//,/ }; do
    printf 'host all all %s trust\n' "$network" >>"$data/pg_hba.conf"
  done
}

# Starts the server on the port in its settings, moving to a fresh port once or twice if the
# log says the one chosen was taken meanwhile.
start_server() {
  local attempt port
  for attempt in 1 2 3; do
    if as_server_user "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null; then
      return 0
    fi
    if ! grep -q "could not bind" "$log" 2>/dev/null || [[ $attempt -eq 3 ]]; then
      break
    fi
    port=$(free_port)
    echo "cluster.sh: the port was taken meanwhile; trying $port" >&2
    sed -i "s/^port = .*/port = $port/" "$data/postgresql.conf"
    url="postgresql://$ROLE@127.0.0.1:$port/$DATABASE"
  done
  echo "cluster.sh: the server did not start; the end of $log:" >&2
  tail -n 20 "$log" >&2 || true
  exit 1
}

cmd_start() {
  check_options
  mkdir -p "$dir"
  load_records
  if is_ready; then
    echo "$url"
    return
  fi

  if [[ -n "$cluster" && -f "$data/PG_VERSION" ]]; then
    # Recorded but not answering (killed, or the machine restarted): bring the same data back.
    url="postgresql://$ROLE@127.0.0.1:$(sed -n 's/^port = //p' "$data/postgresql.conf" | tail -n 1)/$DATABASE"
    # A killed server leaves its pid file; pg_ctl refuses while that pid is alive, so say whose.
    if [[ -f "$data/postmaster.pid" ]] && kill -0 "$(head -n 1 "$data/postmaster.pid")" 2>/dev/null; then
      die "a server from $data still runs (pid $(head -n 1 "$data/postmaster.pid")) but does not answer; try: $0 kill $dir"
    fi
    rm -f "$data/postmaster.pid"
  else
    cluster=$(mktemp -d /tmp/cudojo-pg.XXXXXX)
    data="$cluster/data"
    log="$cluster/postgres.log"
    echo "$cluster" >"$dir/cluster-path"
    if [[ $(id -u) -eq 0 ]]; then
      getent passwd postgres >/dev/null ||
        die "running as root but there is no 'postgres' user to run the server as; install postgresql (scripts/setup.sh does)"
      chown postgres: "$cluster"
    fi
    # C locale: the same sorting everywhere, and no dependence on which locales are installed.
    if ! as_server_user "$bin/initdb" -D "$data" -U "$ROLE" --auth=trust --encoding=UTF8 --locale=C \
      --no-sync >"$cluster/initdb.log" 2>&1; then
      cat "$cluster/initdb.log" >&2
      die "initdb failed (its output is above)"
    fi
    local port
    port=$(free_port)
    write_settings "$port"
    url="postgresql://$ROLE@127.0.0.1:$port/$DATABASE"
  fi

  start_server
  if ! "$bin/psql" -d "postgresql://$ROLE@127.0.0.1:$(port_of "$url")/postgres" -At -v ON_ERROR_STOP=1 \
    -c "select 1 from pg_database where datname = '$DATABASE'" | grep -q 1; then
    "$bin/createdb" -h 127.0.0.1 -p "$(port_of "$url")" -U "$ROLE" "$DATABASE"
  fi
  echo "$url" >"$dir/url"
  echo "$url"
}

require_cluster() {
  load_records
  [[ -n "$cluster" && -f "$data/PG_VERSION" ]] || die "no cluster recorded in $dir (run: $0 start $dir)"
}

cmd_url() {
  load_records
  [[ -n "$url" ]] || die "no cluster recorded in $dir (run: $0 start $dir)"
  echo "$url"
}

cmd_restart() {
  require_cluster
  # Same settings file, so the same port: clients reconnect to the URL they already have.
  as_server_user "$bin/pg_ctl" -D "$data" -l "$log" -m fast -w -t 60 restart >/dev/null ||
    { tail -n 20 "$log" >&2; die "restart failed; the end of $log is above"; }
  echo "$url"
}

# The server and every backend it forked, by pid from its own pid file: a backend left alive
# would keep the shared memory and stop the next start.
cmd_kill() {
  require_cluster
  [[ -f "$data/postmaster.pid" ]] || die "no server runs from $data"
  local postmaster children
  postmaster=$(head -n 1 "$data/postmaster.pid")
  children=$(ps -o pid= --ppid "$postmaster" || true)
  # $children unquoted on purpose: one argument per pid. kill -0 succeeds while any one lives.
  # shellcheck disable=SC2086
  kill -KILL "$postmaster" $children 2>/dev/null || true
  for _ in $(seq 50); do
    # shellcheck disable=SC2086
    kill -0 "$postmaster" $children 2>/dev/null || return 0
    sleep 0.1
  done
  die "processes of the killed server still run: $postmaster $children"
}

cmd_stop() {
  load_records
  if [[ -n "$cluster" && -f "$data/postmaster.pid" ]]; then
    as_server_user "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null ||
      { cmd_kill; }
  fi
  # Only a folder this script made: the record could have been edited to name anything.
  if [[ -n "$cluster" && "$cluster" == /tmp/cudojo-pg.* ]]; then rm -rf "$cluster"; fi
  rm -f "$dir/cluster-path" "$dir/url"
}

[[ $# -eq 2 ]] || usage
command=$1
# The ctest fixture sets CUDOJO_PG_OPTIONAL=1: without a server installed it says so and succeeds
# without a URL, and the tests that need one skip with that reason instead of every test that
# merely shares the fixture going unrun.
if [[ ${CUDOJO_PG_OPTIONAL:-0} == 1 ]] && ! (find_bin_dir >/dev/null 2>&1); then
  echo "cluster.sh: no PostgreSQL server installed (scripts/setup.sh installs postgresql); tests that need one skip"
  [[ $command == start ]] && rm -f "$2/url"
  exit 0
fi
bin=$(find_bin_dir)
if [[ $command == start ]]; then mkdir -p "$2"; fi
# Nothing recorded, nothing to stop: callers stop before starting to clear an earlier run.
if [[ $command == stop && ! -d "$2" ]]; then exit 0; fi
[[ -d "$2" ]] || die "no folder $2 (start a cluster there first: $0 start $2)"
dir=$(cd "$2" && pwd)
case "$command" in
  start) cmd_start ;;
  url) cmd_url ;;
  restart) cmd_restart ;;
  kill) cmd_kill ;;
  stop) cmd_stop ;;
  *) usage ;;
esac
