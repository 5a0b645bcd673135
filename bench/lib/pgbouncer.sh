# A transaction-mode PgBouncer in front of a private Postgres on 127.0.0.1, as bench/fleet.sh and
# bench/copy-floor.sh deploy nodes (trust auth, one pool for every database, server pool POOL).
# Source it, then:
#   pgbouncer_start BIN DIR PG_PORT PORT POOL [SETTING...]
# writes DIR/pgbouncer.ini (with each SETTING line added, e.g. "max_client_conn = 2000"; logs and
# pidfile under DIR/pgb), starts BIN as the postgres user with the hard open-files limit, waits for
# PORT and sets PGBOUNCER_JOB to the background job's PID (exec'd: pgbouncer's own). Returns 1, with
# pgbouncer's output on stderr, when it does not start. Needs root.
pgbouncer_start() {
  local bin=$1 dir=$2 pg_port=$3 port=$4 pool=$5
  shift 5
  mkdir -p "$dir/pgb"
  {
    cat <<INI
[databases]
* = host=127.0.0.1 port=$pg_port user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = $pool
max_db_connections = $pool
server_reset_query =
logfile = $dir/pgb/pgbouncer.log
pidfile = $dir/pgb/pgbouncer.pid
INI
    printf '%s\n' "$@"
  } > "$dir/pgbouncer.ini"
  chown postgres "$dir/pgb" "$dir/pgbouncer.ini"
  runuser -u postgres -- bash -c "ulimit -n \$(ulimit -Hn); exec $bin $dir/pgbouncer.ini" > "$dir/pgbouncer.out" 2>&1 &
  PGBOUNCER_JOB=$!
  local _
  for _ in $(seq 100); do
    (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$dir/pgbouncer.out" "$dir/pgb/pgbouncer.log" >&2 2>/dev/null
  return 1
}
