#!/usr/bin/env bash
# The floor under issue 19's pg_cpu_ms_per_copy (goal 0.5 ms): what Postgres CPU the least a copy
# can do in the design the issue keeps (node workers that claim their own work from Postgres with
# SKIP LOCKED, and record the outcome there) costs on this machine, with none of Mooncake's code.
#
# A private PostgreSQL 15 (initdb, Debian's defaults but max_connections 100; port PG_PORT), behind a
# transaction-mode PgBouncer with a server pool of BOUNCER_POOL (20), as bench/fleet.sh deploys the
# nodes. Two bare tables: copies (NODES x K rows, pending, a partial index by node over the pending
# ones, as a claim queue needs) and replicas (object, node). pgbench, CLIENTS clients (default 200,
# many nodes' connections through the pooler), prepared statements, autocommit; one pgbench
# transaction is one copy, in three variants:
#   claim+success          the claim (one row of a random node, FOR UPDATE SKIP LOCKED, to processing
#                          with a lease owner and expiry) and, in a second transaction, the success
#                          (to succeeded, guarded by the lease owner, the replica inserted in the same
#                          statement): the two transactions every copy of this design commits
#   +lookup                the same, the claim statement also picking a source among the object's
#                          holders (the first 8 replicas by node after the claimer, its least loaded
#                          by running copies reading from it: a bare copy_sources)
#   +lookup+renewals       the same, and R lease renewals a copy, batched as a master batches
#                          heartbeats: one copy in 8 also runs one statement that locks (SKIP
#                          LOCKED) and renews 8 x R rows (HOT updates of the lease and updated_at),
#                          as bench/fleet.sh's batches renew about 800 task rows a statement. A fleet
#                          copy at N = 1,000 lives about 32 s under 2 s heartbeats: R = 16
# Each runs COPIES copies; Postgres CPU is the postmaster's and its children's utime+stime (/proc,
# exited children through cutime+cstime) over the run, divided by copies, as bench/fleet.sh
# measures it. Prints one line per variant:
#   copy-floor variant=<v> copies=<n> pg_cpu_ms_per_copy=<m> copies_per_s=<r> machine_idle_pct=<i>
#
# Usage: bench/copy-floor.sh    Env: NODES (1000), K (256), COPIES (40000), CLIENTS (200),
#   RENEWALS (16), BOUNCER_POOL (20), PG_PORT (55442), BOUNCER_PORT (56442), PGBOUNCER (the
#   pgbouncer binary, 1.21+ for prepared statements through it; default: bench/pgbouncer-newer.sh's).
# Needs root (initdb runs as the postgres user), pgbench. Leaves nothing running.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODES=${NODES:-1000} K=${K:-256} COPIES=${COPIES:-40000} CLIENTS=${CLIENTS:-200}
RENEWALS=${RENEWALS:-16} BOUNCER_POOL=${BOUNCER_POOL:-20}
PG_PORT=${PG_PORT:-55442} BOUNCER_PORT=${BOUNCER_PORT:-56442}
PGBOUNCER=${PGBOUNCER:-/var/tmp/mooncake-pgbouncer-1.24.1/bin/pgbouncer}
[ -x "$PGBOUNCER" ] || PGBOUNCER=$("$ROOT/bench/pgbouncer-newer.sh")
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [ $((COPIES * 3 * 2)) -gt $((NODES * K)) ]; then
  # Each copy takes a pending row of a random node: with half of the rows taken in all, no node
  # runs out before the last variant ends.
  echo "copy-floor: COPIES x 3 variants must stay within half of NODES x K" >&2
  exit 2
fi
WORK=$(mktemp -d /tmp/mooncake-floor.XXXXXX)
chmod 755 "$WORK"
BPID=""
cleanup() {
  set +e
  [ -n "$BPID" ] && kill "$BPID" 2>/dev/null && wait "$BPID" 2>/dev/null
  [ -f "$WORK/pg/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -m fast stop >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK/pg" && chown postgres "$WORK/pg"
runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg" -U postgres -A trust >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg/log" -w \
  -o "-p $PG_PORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=100" start >/dev/null
PG_PID=$(head -1 "$WORK/pg/postmaster.pid")
psql() { command psql -X -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

. "$ROOT/bench/lib/pgbouncer.sh"
pgbouncer_start "$PGBOUNCER" "$WORK" "$PG_PORT" "$BOUNCER_PORT" "$BOUNCER_POOL" \
  "max_client_conn = 2000" "max_prepared_statements = 200" \
  && started=1 || started=0
BPID=$PGBOUNCER_JOB
[ "$started" = 1 ] || { echo "copy-floor: pgbouncer did not start" >&2; exit 1; }

psql -d postgres <<SQL
CREATE TABLE copies (
  copy_id bigserial PRIMARY KEY, node int NOT NULL, object int NOT NULL,
  state text NOT NULL DEFAULT 'pending', lease_owner text, lease_expires_at timestamptz,
  source int, updated_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX copies_claim ON copies (node, copy_id) WHERE state = 'pending';
CREATE INDEX copies_reading_from ON copies (source) WHERE state = 'processing' AND source IS NOT NULL;
CREATE TABLE replicas (object int NOT NULL, node int NOT NULL, PRIMARY KEY (object, node));
INSERT INTO copies (node, object) SELECT n, o FROM generate_series(1, $NODES) n, generate_series(1, $K) o;
INSERT INTO replicas SELECT o, 0 FROM generate_series(1, $K) o;
INSERT INTO replicas SELECT o, n FROM generate_series(1, $K) o, generate_series(1, $NODES, 3) n;
VACUUM ANALYZE;
SQL

CLAIM="UPDATE copies SET state = 'processing', lease_owner = 'n' || :n, lease_expires_at = now() + interval '30 s', updated_at = now()
  WHERE copy_id = (SELECT copy_id FROM copies WHERE node = :n AND state = 'pending' ORDER BY copy_id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING copy_id, object \\gset"
RENEW="WITH l AS (SELECT copy_id FROM copies WHERE copy_id BETWEEN :b AND :b + $((8 * RENEWALS - 1)) FOR UPDATE SKIP LOCKED)
  UPDATE copies c SET lease_expires_at = now() + interval '30 s', updated_at = now() FROM l WHERE c.copy_id = l.copy_id;"
SUCCEED="WITH d AS (UPDATE copies SET state = 'succeeded', updated_at = now()
    WHERE copy_id = :copy_id AND lease_owner = 'n' || :n AND state = 'processing' RETURNING object, node)
  INSERT INTO replicas SELECT object, node FROM d ON CONFLICT DO NOTHING;"

script() { # $1: lookup (0/1), $2: renewals
  echo "\\set n random(1, $NODES)"
  if [ "$1" = 1 ]; then
    # The lookup inside the claim statement, its answer written as the copy's source, as
    # mooncake_claim runs copy_sources.
    echo "UPDATE copies c SET state = 'processing', lease_owner = 'n' || :n, lease_expires_at = now() + interval '30 s', updated_at = now(),
    source = (SELECT r.node FROM (SELECT node FROM replicas WHERE object = c.object AND node <> :n ORDER BY node LIMIT 8) r
              ORDER BY (SELECT count(*) FROM copies x WHERE x.source = r.node AND x.state = 'processing') LIMIT 1)
  WHERE copy_id = (SELECT copy_id FROM copies WHERE node = :n AND state = 'pending' ORDER BY copy_id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING copy_id, object \\gset" | tr '\n' ' '
    echo
  else
    echo "$CLAIM" | tr '\n' ' '
    echo
  fi
  if [ "$2" -gt 0 ]; then
    echo "\\set r random(1, 8)"
    echo "\\if :r = 1"
    echo "\\set b random(1, $((NODES * K - 8 * RENEWALS)))"
    echo "$RENEW" | tr '\n' ' '
    echo
    echo "\\endif"
  fi
  echo "$SUCCEED" | tr '\n' ' '
  echo
}

cpu_ticks() { # the postmaster and its children, live and exited
  local sum=0 p f
  f=($(sed 's/^.*) //' "/proc/$PG_PID/stat"))
  sum=$((f[11] + f[12] + f[13] + f[14]))
  for p in $(pgrep -P "$PG_PID"); do
    f=($(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null)) || continue
    sum=$((sum + f[11] + f[12]))
  done
  echo "$sum"
}
idle_ticks() { awk '/^cpu /{print $5 + $6}' /proc/stat; }
all_ticks() { awk '/^cpu /{s = 0; for (i = 2; i <= 9; i++) s += $i; print s}' /proc/stat; }

HZ=$(getconf CLK_TCK)
per_client=$((COPIES / CLIENTS))
copies=$((per_client * CLIENTS))
for variant in "claim+success 0 0" "+lookup 1 0" "+lookup+renewals 1 $RENEWALS"; do
  set -- $variant
  script "$2" "$3" > "$WORK/script.sql"
  c0=$(cpu_ticks) i0=$(idle_ticks) a0=$(all_ticks) t0=$(date +%s.%N)
  pgbench -n -h 127.0.0.1 -p "$BOUNCER_PORT" -U postgres -M prepared -c "$CLIENTS" -j 2 \
    -t "$per_client" -f "$WORK/script.sql" postgres > "$WORK/pgbench.out" 2>&1 \
    || { echo "copy-floor: pgbench failed" >&2; tail -20 "$WORK/pgbench.out" >&2; exit 1; }
  t1=$(date +%s.%N) c1=$(cpu_ticks) i1=$(idle_ticks) a1=$(all_ticks)
  python3 - "$1" "$copies" "$c0" "$c1" "$t0" "$t1" "$HZ" "$i0" "$i1" "$a0" "$a1" <<'PY'
import sys
v, n, c0, c1, t0, t1, hz, i0, i1, a0, a1 = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
print(f"copy-floor variant={v} copies={n} pg_cpu_ms_per_copy={(c1 - c0) / hz * 1000 / n:.3f} "
      f"copies_per_s={n / (t1 - t0):.0f} machine_idle_pct={100 * (i1 - i0) / (a1 - a0):.1f}")
PY
done
