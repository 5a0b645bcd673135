#!/usr/bin/env bash
# Fleet benchmark (issue 19): N simulated nodes against one Postgres, two real masters.
#
# Every simulated node is a real NodeWorker (claim loop, heartbeat and lease renewal, deletion poll,
# copy-source lookup, seed pull, progress, completions and publishes, deferrals, NOTIFY wake-ups)
# holding the database sessions bin/mooncake_client opens (ClientMain.openDatabase); many share one
# JVM (bench/fleet/src, FleetBench). Only the bytes are replaced (NodeWorker's Transport seam) by a
# timing model (SimNetwork): each node has an uplink and a downlink of B shared fairly by its
# transfers (SIM_FAIR=max-min, the default: max-min fair shares, capacity a transfer cannot use goes
# to the others, as TCP approaches; SIM_FAIR=naive, the model before 2026-12-04: min(B / transfers
# on the uplink, B / transfers on the downlink), what a transfer limited elsewhere leaves unused
# idles); a node serves only objects it holds or is receiving (no faster than they arrive).
# Node 0 is the seed and holds the model (K objects of OBJ_MIB MiB, a sparse file of zeros listed
# as its replicas; an untimed warm-up job lets it verify and stamp them), so the timed job is the
# fan-out to N-1 followers, whose ideal time is S/B.
#
# SIM_NICE (default 0) runs the simulator's JVM at that nice level. It stands in for N machines'
# worth of client CPU that this machine does not have; at N = 1,000 it runs 600-700 runnable
# threads against the masters' few. Session 17 tried 19 (the control plane under test first): one
# run did the most copies of any N = 1,000 run, the next failed with nodes' heartbeats unrecorded
# for 300 s, so the default stays as before (docs/benchmarks.md, "Fleet").
#
# SIM_THREADS (virtual, the default since session 18; or platform) runs each simulated node's own
# threads (claim loop, heartbeat, wake-up long-poll, task threads, its connection pool's helpers)
# as virtual threads (NodeWorker.virtualThreads). As platform threads a thousand nodes were 14,000
# threads, hundreds runnable at once: the kernel shared the CPU among them, not among the
# processes under test, so heartbeats waited tens of seconds for the JDK HTTP client's one
# selector thread and masters and Postgres waited for a CPU. A real client is one node per process
# and keeps platform threads. Needs a JDK 24+ (virtual threads no longer pinned by synchronized).
#
# Postgres: a private PostgreSQL 15 instance started here (initdb under a temp dir, port PG_PORT,
# max_connections PG_MAX_CONNECTIONS = 100 as Postgres' default, pg_stat_statements preloaded,
# every other setting Debian's default), so the shared server's config and connections are not
# touched; dropped at the end. Two bin/mooncake_master processes per N (the first migrates).
# POOLER=pgbouncer puts a real PgBouncer (transaction mode) between the nodes and Postgres; the
# masters connect directly (they LISTEN and migrate).
#
# One line per N, measured from Postgres (not from the simulator's counters):
#   job_x_ideal          job time (POST to completed) / (S/B)
#   pg_cpu_ms_per_copy   CPU of the postmaster and all its children (/proc: utime+stime, exited
#                        children through the postmaster's cutime+cstime) during the job / copies
#   stmts_per_copy       top-level statements of the bench database during the job
#                        (pg_stat_statements calls, BEGIN/COMMIT/ROLLBACK and the meter's own excluded)
#   server_conns_peak    peak client backends in pg_stat_activity (sampled every 250 ms, the whole
#                        run: start-up, idle and job; the meter's own session excluded)
#   idle_pg_core_pct     Postgres CPU over IDLE_S s with every node up and no work, % of one core
#   snapshot_p99_ms      GET snapshot latency, the two masters alternately every 250 ms during the job,
#                        read by a separate process at normal priority (curl), as a control plane
#                        would. snapshot_p99_in_sim_ms, printed beside it, is the simulator's own
#                        poller, which shares a JVM (at SIM_NICE) with the simulated nodes and
#                        reads a slower tail (N = 1,000: 125.4 ms there, 80.2 ms from a separate
#                        process, in one job)
#   (then: status, nodes_up, idle_stmts_per_node_s, xacts_per_copy from pg_stat_database, and
#   where the machine's CPU went during the job, per copy, from /proc: machine_cpu_ms_per_copy (all
#   cores busy), sim_cpu_ms_per_copy (the simulator's JVM), masters_cpu_ms_per_copy (both
#   masters), bouncer_cpu_ms_per_copy (PgBouncer; 0 without it). On two cores a job of C copies
#   can take no less than C x machine_cpu_ms_per_copy / 2: at N = 1,000 (255,744 copies) the
#   job_x_ideal goal of 1.3 leaves 2 x 1.3 x 64 s / 255,744 = 0.65 ms a copy for everything.)
#
# Usage: bench/fleet.sh     Env: NS ("10 100 1000"), K (256), OBJ_MIB (64), B_MIBPS (256, so
#   S/B = 64 s), CONCURRENCY (8), IDLE_S (20), JOB_TIMEOUT_S (900), POOLER (none|pgbouncer),
#   PGBOUNCER (the pgbouncer binary; default Debian's, 1.18, installed when missing; from 1.21 on the
#   nodes keep prepared statements through it, e.g. PGBOUNCER=$(bench/pgbouncer-newer.sh)),
#   LOGS (a directory to keep the simulator's, masters' and PgBouncer's logs in, and
#   statements-<N>.txt, pg_stat_statements' top 40 by execution time; default none),
#   PG_PORT (55432), PG_MAX_CONNECTIONS (100), PG_OPTS (more postgres options, e.g.
#   "-c pg_stat_statements.track=all" to list the statements triggers and functions run), BOUNCER_PORT (56432), BOUNCER_POOL (20),
#   HTTP_PORT (18291; the second master +1), SIM_HEAP (6g), SIM_FAIR (max-min | naive, see above),
#   SIM_TICK_MS (100: how often the timing model recomputes every transfer's rate; 20 until
#   session 24, when one recomputation over 8,000 transfers took 13-58 ms at N = 1,000),
#   SIM_NICE (the simulator's nice level, 0: see above), SIM_THREADS (virtual | platform, see
#   above); the simulated nodes' mooncake_client
#   flags: CLIENT_POOL (--db-pool-size; default --concurrency + 4), CLIENT_LISTEN
#   (1; 0 = --no-listen, the default with PgBouncer), CLIENT_MIGRATE (1; 0 = --no-migrate, the
#   default with PgBouncer), CLIENT_IDLE_POLL_MS (--idle-poll-ms, 5000), CLIENT_HEARTBEAT_MS (2000),
#   CLIENT_MASTER_LINK (0; 1 = --master-url naming both masters, the default with PgBouncer:
#   heartbeats and wake-ups through the masters).
# Needs root (initdb runs as the postgres user). Leaves nothing running.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NS=${NS:-10 100 1000}
export K=${K:-256} OBJ_MIB=${OBJ_MIB:-64} B_MIBPS=${B_MIBPS:-256} CONCURRENCY=${CONCURRENCY:-8}
export IDLE_S=${IDLE_S:-20} JOB_TIMEOUT_S=${JOB_TIMEOUT_S:-900}
POOLER=${POOLER:-none}
PG_PORT=${PG_PORT:-55432}
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-100}
BOUNCER_PORT=${BOUNCER_PORT:-56432}
BOUNCER_POOL=${BOUNCER_POOL:-20}
HTTP_PORT=${HTTP_PORT:-18291}
SIM_NICE=${SIM_NICE:-0}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
WORK=$(mktemp -d /tmp/mooncake-fleet.XXXXXX)
DATA=$(mktemp -d /dev/shm/mooncake-fleet.XXXXXX)
chmod 755 "$WORK"
PIDS=()
cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if [ -n "${LOGS:-}" ]; then mkdir -p "$LOGS" && cp "$WORK"/*.log "$WORK"/pgb/*.log "$LOGS"/ 2>/dev/null; fi
  [ -f "$WORK/pg/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -m fast stop >/dev/null 2>&1
  rm -rf "$WORK" "$DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$ROOT/bin/_java.sh"
. "$ROOT/bench/lib/pgbouncer.sh"
JAVAC="$(dirname "$(readlink -f "$JAVA")")/javac"
[ -x "$JAVAC" ] || { echo "fleet: needs javac beside $JAVA (a JDK 21+)" >&2; exit 1; }
if [ ! -f "$ROOT/node-worker/target/node-worker-0.1.0-SNAPSHOT.jar" ] || [ ! -f "$ROOT/master-api/target/master-api-0.1.0-SNAPSHOT.jar" ]; then
  echo "building the project (./mvnw -DskipTests package)" >&2
  (cd "$ROOT" && ./mvnw -B -q -DskipTests package)
fi
if [ "$POOLER" = pgbouncer ]; then
  export CLIENT_LISTEN=${CLIENT_LISTEN:-0} CLIENT_MIGRATE=${CLIENT_MIGRATE:-0} CLIENT_MASTER_LINK=${CLIENT_MASTER_LINK:-1}
fi
export CLIENT_MASTER_LINK=${CLIENT_MASTER_LINK:-0}
PGBOUNCER=${PGBOUNCER:-pgbouncer}
if [ "$POOLER" = pgbouncer ] && [ "$PGBOUNCER" = pgbouncer ] && ! command -v pgbouncer >/dev/null; then
  echo "installing pgbouncer (Debian)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q pgbouncer >/dev/null
fi
# A private copy of what runs, so a rebuild in the work tree cannot swap classes under the run.
SNAP="$WORK/root"
mkdir -p "$SNAP/master-api/target" "$SNAP/node-worker/target" "$SNAP/sim"
cp -r "$ROOT/bin" "$SNAP/"
for m in master-api node-worker; do
  cp -r "$ROOT/$m/target/$m-0.1.0-SNAPSHOT.jar" "$ROOT/$m/target/lib" "$SNAP/$m/target/"
done
CP="$SNAP/node-worker/target/node-worker-0.1.0-SNAPSHOT.jar:$SNAP/node-worker/target/lib/*"
"$JAVAC" --release 21 -nowarn -d "$SNAP/sim" -cp "$CP" $(find "$ROOT/bench/fleet/src" -name '*.java')
cp "$ROOT/bench/fleet/logback.xml" "$SNAP/sim/"

echo "fleet: private PostgreSQL on 127.0.0.1:$PG_PORT (max_connections $PG_MAX_CONNECTIONS, pg_stat_statements)" >&2
mkdir -p "$WORK/pg" && chown postgres "$WORK/pg"
runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/pg" -U postgres -A trust >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg/log" -w \
  -o "-p $PG_PORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=$PG_MAX_CONNECTIONS -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on ${PG_OPTS:-}" start >/dev/null
PG_PID=$(head -1 "$WORK/pg/postmaster.pid")
psql() { command psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

if [ "$POOLER" = pgbouncer ]; then
  PGB_VERSION=$("$PGBOUNCER" --version | head -1 | awk '{print $2}')
  # 1.21+ keeps protocol-level prepared statements in transaction mode: nodes may prepare
  # (pgjdbc's default prepareThreshold). Before it, every statement is sent unprepared.
  PGB_PREPARED=0 PGB_EXTRA=""
  if printf '1.21\n%s\n' "$PGB_VERSION" | sort -V -C; then
    PGB_PREPARED=1 PGB_EXTRA="max_prepared_statements = 200"
  fi
  pgbouncer_start "$PGBOUNCER" "$WORK" "$PG_PORT" "$BOUNCER_PORT" "$BOUNCER_POOL" "max_client_conn = 15000" \
    "ignore_startup_parameters = extra_float_digits,options" "$PGB_EXTRA" \
    && started=1 || started=0
  PIDS+=($PGBOUNCER_JOB)
  [ "$started" = 1 ] || { echo "fleet: pgbouncer did not start" >&2; exit 1; }
  BOUNCER_PID=$(cat "$WORK/pgb/pgbouncer.pid" 2>/dev/null || true)
fi

# The job's snapshot as a control plane reads it: a process of its own at normal priority (the
# simulator's poller shares a JVM with a thousand nodes at SIM_NICE), GET from the two masters
# alternately every 250 ms while the timed job (fleet-N) is posted and not finished; one latency
# (seconds) a line.
snapshot_probe() { # $1: N, $2: the file to append to
  local i=0 out code t
  while true; do
    out=$(curl -s -m 30 -o "$WORK/snapshot-$1.json" -w '%{http_code} %{time_total}' \
      "http://127.0.0.1:$((HTTP_PORT + i % 2))/api/v1/model-distribution/jobs?job_id=fleet-$1") || out="000 0"
    i=$((i + 1))
    read -r code t <<< "$out"
    if [ "$code" = 200 ]; then
      grep -q '"status":"\(completed\|failed\|canceled\)"' "$WORK/snapshot-$1.json" && return 0
      echo "$t" >> "$2"
    fi
    sleep 0.25
  done
}

echo "fleet: client settings: pool ${CLIENT_POOL:-concurrency+4}, listen ${CLIENT_LISTEN:-1}, migrate ${CLIENT_MIGRATE:-1}, idle poll ${CLIENT_IDLE_POLL_MS:-5000} ms, heartbeat ${CLIENT_HEARTBEAT_MS:-2000} ms, master link $CLIENT_MASTER_LINK" >&2
# Every simulated node's files and sockets are the simulator JVM's: at most its pooled database
# connections, one open file per running copy and a few sockets each. A real node has a limit of
# its own; here one process holds them all, and "Too many open files" fails copies (seen at
# N = 1,000 with the default pool of 12 under a hard limit of 20,000). Raise the limit as far as
# allowed and say when the largest N may not fit (then lower CLIENT_POOL).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
for n in $NS; do
  need=$(( n * (${CLIENT_POOL:-$((CONCURRENCY + 4))} + CONCURRENCY + 4) ))
  if [ "$need" -gt "$(ulimit -n)" ]; then
    echo "fleet: warning: N = $n may need ~$need open files in the simulator; its limit is $(ulimit -n) (lower CLIENT_POOL)" >&2
  fi
done
echo "fleet: K=$K objects of $OBJ_MIB MiB (S = $((K * OBJ_MIB)) MiB), B = $B_MIBPS MiB/s per link, S/B = $(python3 -c "print(round($K*$OBJ_MIB/$B_MIBPS,1))") s; pooler: $POOLER${PGB_VERSION:+ $PGB_VERSION$([ "${PGB_PREPARED:-0}" = 1 ] && echo ", prepared statements" || echo ", prepareThreshold=0")}; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for N in $NS; do
  DB=fleet_$N
  psql -d postgres -c "CREATE DATABASE $DB"
  psql -d "$DB" -c "CREATE EXTENSION pg_stat_statements"
  DIRECT="jdbc:postgresql://127.0.0.1:$PG_PORT/$DB?user=postgres"
  if [ "$POOLER" = pgbouncer ]; then
    NODE_URL="jdbc:postgresql://127.0.0.1:$BOUNCER_PORT/$DB?user=postgres"
    [ "$PGB_PREPARED" = 1 ] || NODE_URL="$NODE_URL&prepareThreshold=0"
  else
    NODE_URL=$DIRECT
  fi
  MPIDS=()
  for i in 0 1; do
    "$SNAP/bin/mooncake_master" --http-port $((HTTP_PORT + i)) --no-auth --allow-any-source --bind-host 127.0.0.1 --db-url "$DIRECT" \
      > "$WORK/master$i-$N.log" 2>&1 & PIDS+=($!); MPIDS+=($!)
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$((HTTP_PORT + i))/health" >/dev/null 2>&1 && break; sleep 0.2; done
    curl -sf "http://127.0.0.1:$((HTTP_PORT + i))/health" >/dev/null || { echo "fleet: master $i did not start" >&2; tail "$WORK/master$i-$N.log" >&2; exit 1; }
  done
  snapshot_probe "$N" "$WORK/snapshots-$N" & PROBE=$!; PIDS+=($PROBE)
  set +e
  N=$N NODE_DB_URL="$NODE_URL" ADMIN_DB_URL="$DIRECT" PG_PID=$PG_PID DATA="$DATA/$N" \
    MASTER_PIDS="${MPIDS[*]}" BOUNCER_PID="${BOUNCER_PID:-}" \
    MASTERS="http://127.0.0.1:$HTTP_PORT,http://127.0.0.1:$((HTTP_PORT + 1))" \
    nice -n "$SIM_NICE" "$JAVA" -Xss512k -Xmx"${SIM_HEAP:-6g}" -XX:+UseParallelGC -Dlogback.configurationFile="$SNAP/sim/logback.xml" \
    ${SIM_JAVA_OPTS:-} -cp "$SNAP/sim:$CP" io.mooncake.dist.bench.fleet.FleetBench > "$WORK/line-$N" 2> "$WORK/sim-$N.log" &
  SIM=$!; PIDS+=($SIM)
  wait $SIM; rc=$?
  set -e
  grep '^fleet:' "$WORK/sim-$N.log" >&2 || true
  if [ $rc -ne 0 ] || [ ! -s "$WORK/line-$N" ]; then
    echo "fleet: the simulator failed for N=$N (rc $rc); its log's tail:" >&2; tail -20 "$WORK/sim-$N.log" >&2
  fi
  errs=$(cat "$WORK/sim-$N.log" "$WORK"/master*-$N.log | grep -c 'too many clients\|remaining connection slots' || true)
  if [ "$errs" -gt 0 ]; then
    echo "fleet: N=$N: $errs log lines say Postgres refused connections (max_connections $PG_MAX_CONNECTIONS)" >&2
  fi
  for p in "${MPIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
  rm -rf "${DATA:?}/$N"
  if [ -n "${LOGS:-}" ]; then
    # Where Postgres spent its time, by statement (the whole run: start-up, warm-up, idle and job).
    mkdir -p "$LOGS"
    psql -d "$DB" -c "SELECT calls, round(total_exec_time::numeric / 1000, 1) AS exec_s,
        round((total_exec_time / greatest(calls, 1))::numeric, 3) AS ms_per_call, rows, toplevel,
        left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query
      FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid AND d.datname = current_database()
     ORDER BY total_exec_time DESC LIMIT 40" > "$LOGS/statements-$N.txt" 2>&1 || true
  fi
  psql -d postgres -c "DROP DATABASE $DB WITH (FORCE)"
  kill "$PROBE" 2>/dev/null || true; wait "$PROBE" 2>/dev/null || true
  # snapshot_p99_ms as the control plane saw it (the probe); the simulator's own figure beside it.
  if [ -s "$WORK/line-$N" ]; then
    read -r probe_n probe_p50 probe_p99 < <(sort -n "$WORK/snapshots-$N" 2>/dev/null | awk '
      { a[NR] = $1 * 1000 }
      END { if (NR == 0) { print 0, "nan", "nan"; exit }
            i = int(NR * 0.99 + 0.999999); if (i > NR) i = NR
            printf "%d %.1f %.1f\n", NR, a[int(NR / 2) + 1], a[i] }')
    echo "fleet: N=$N: $probe_n snapshots read by a separate process, p50 $probe_p50 ms, p99 $probe_p99 ms" >&2
    sed "s/snapshot_p99_ms=\([^ ]*\)/snapshot_p99_ms=$probe_p99 snapshot_p99_in_sim_ms=\1/" "$WORK/line-$N"
  fi
done
