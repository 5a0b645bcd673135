#!/usr/bin/env bash
# Queue benchmark: our Postgres task queue against db-scheduler's lock-and-fetch and against a raw
# pgbench script doing the same SKIP LOCKED claim, on the same database in the same run; then the
# large-job enqueue and the wake-up latency through a real master and real clients.
#
#   1. Claim + complete throughput, ROUNDS rounds, median per system (tasks/s):
#      ours      THREADS workers of one node: TaskQueue.claim(BATCH) + TaskQueue.succeedAll (lease-
#                guarded; the task row records the succeeding attempt, V007), the real tasks table with its triggers and indexes;
#      pgbench   THREADS clients, -M prepared: the same claim statement, then one UPDATE completing
#                what the client holds (two commits per batch, no attempt rows);
#      db-sched  db-scheduler 16.7.1 (Maven Central) in the same JVM as ours, no-op one-time tasks,
#                THREADS executor threads, pollUsingLockAndFetch(0.5, 1.0).
#      Each system drains a queue filled beforehand (VACUUM ANALYZE after the fill); both JVM
#      systems first drain a tenth as many untimed, so the JIT is warm as in a long-running worker.
#   2. Task done -> next task claimed: a master and two clients (bin/mooncake_master, bin/mooncake_client,
#      default flags) stage LAT_JOBS one-object jobs one after the other; per job, the follower's
#      MATERIALIZE started_at minus its REPLICA_COPY finished_at; median.
#   3. A job of OBJECTS objects and FOLLOWERS + 1 targets POSTed to the master; a stand-in seed
#      succeeds the download (all objects listed); the time until the master has enqueued every
#      copy (OBJECTS x FOLLOWERS rows) and moved the job to replicating; the master's peak RSS while
#      it does so and while the snapshot is fetched twenty times over HTTP.
#
# Usage: bench/queue.sh        Env: TASKS (60000), DBS_TASKS (20000), THREADS (4), BATCH (32),
#   ROUNDS (3), OBJECTS (10000), FOLLOWERS (100), LAT_JOBS (50), MOONCAKE_BENCH_DB_URL (admin JDBC
#   URL, default the local postgres), HTTP_PORT (18181), SEED_PORT/FOLLOWER_PORT (25201/25202).
# Needs root only to install pgbench (Debian's postgresql-contrib) when missing. Leaves nothing
# running; the benchmark database is dropped at the end. The last line is the summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TASKS=${TASKS:-60000}
DBS_TASKS=${DBS_TASKS:-20000}
THREADS=${THREADS:-4}
BATCH=${BATCH:-32}
ROUNDS=${ROUNDS:-3}
OBJECTS=${OBJECTS:-10000}
FOLLOWERS=${FOLLOWERS:-100}
LAT_JOBS=${LAT_JOBS:-50}
ADMIN_URL=${MOONCAKE_BENCH_DB_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
HTTP_PORT=${HTTP_PORT:-18181}
SEED_PORT=${SEED_PORT:-25201}
FOLLOWER_PORT=${FOLLOWER_PORT:-25202}
DB=mooncake_qbench_$$
WORK=$(mktemp -d /tmp/mooncake-qbench.XXXXXX)

need() { command -v "$1" >/dev/null 2>&1; }
if ! need pgbench; then
  echo "installing postgresql-contrib (Debian) for pgbench" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-contrib >/dev/null
fi
for t in psql python3; do need "$t" || { echo "bench: needs $t" >&2; exit 1; }; done
. "$ROOT/bin/_java.sh"

if [ ! -f "$ROOT/master-api/target/master-api-0.1.0-SNAPSHOT.jar" ] \
   || [ ! -d "$HOME/.m2/repository/io/mooncake/dist/scheduler/0.1.0-SNAPSHOT" ]; then
  echo "building and installing the project (./mvnw -q -DskipTests install)" >&2
  "$ROOT/mvnw" -B -q -DskipTests install
fi
echo "building the bench driver (bench/queue, db-scheduler from Maven Central)" >&2
"$ROOT/mvnw" -B -q -f "$ROOT/bench/queue/pom.xml" package dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt >/dev/null
# A private copy of everything the run executes (the launchers, the master's and client's jars,
# the driver's classpath), so a rebuild in the work tree while the bench runs cannot swap classes
# under it. The launchers are unchanged: they find the copied jars beside themselves.
SNAP="$WORK/root"
mkdir -p "$SNAP/master-api/target" "$SNAP/node-worker/target" "$SNAP/cp"
cp -r "$ROOT/bin" "$SNAP/"
for m in master-api node-worker; do
  cp -r "$ROOT/$m/target/$m-0.1.0-SNAPSHOT.jar" "$ROOT/$m/target/lib" "$SNAP/$m/target/"
done
cp "$ROOT/bench/queue/target/queue-bench-0.1.0-SNAPSHOT.jar" "$SNAP/cp/"
tr ':' '\n' < "$ROOT/bench/queue/target/classpath.txt" | while read -r jar; do cp "$jar" "$SNAP/cp/"; done
BENCH=("$JAVA" -Xmx1g -cp "$SNAP/cp/*" io.mooncake.dist.bench.QueueBench)

# libpq forms of the URLs for psql and pgbench.
read -r PG_HOST PG_PORT PG_USER PG_PASS <<<"$(python3 - "$ADMIN_URL" <<'PY'
import sys, urllib.parse as u
p = u.urlparse(sys.argv[1][len("jdbc:"):]); q = dict(u.parse_qsl(p.query))
print(p.hostname, p.port or 5432, q.get("user", "postgres"), q.get("password", "-"))
PY
)"
[ "$PG_PASS" = "-" ] || export PGPASSWORD="$PG_PASS"
PSQL=(psql -q -X -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER")
DB_URL=$(python3 - "$ADMIN_URL" "$DB" <<'PY'
import sys, urllib.parse as u
p = u.urlparse(sys.argv[1][len("jdbc:"):])
print("jdbc:" + u.urlunparse(p._replace(path="/" + sys.argv[2])))
PY
)

PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }   # key=value out of a driver line

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null
"${BENCH[@]}" migrate "$DB_URL" 2>>"$WORK/driver.log"

# --- 1. claim + complete throughput -------------------------------------------------------------
cat > "$WORK/claim.pgbench" <<SQL
WITH ready AS MATERIALIZED (SELECT task_id FROM tasks WHERE node_id = :node AND state = 'pending' AND run_after <= now() ORDER BY run_after, task_id LIMIT $BATCH FOR UPDATE SKIP LOCKED) UPDATE tasks t SET state = 'processing', lease_owner = :node || '/pgbench-' || :client_id, lease_expires_at = now() + interval '60 seconds', started_at = now(), updated_at = now(), attempts = t.attempts + 1, bytes_done = 0 FROM ready WHERE t.task_id = ready.task_id RETURNING t.task_id, t.job_id, t.node_id, t.task_type, t.object_id, t.payload, t.attempts, t.max_attempts;
UPDATE tasks SET state = 'succeeded', bytes_done = bytes_total, finished_at = now(), updated_at = now() WHERE node_id = :node AND lease_owner = :node || '/pgbench-' || :client_id AND state = 'processing';
SQL
r_ours=(); r_pgb=(); r_dbs=()
for r in $(seq "$ROUNDS"); do
  "${BENCH[@]}" enqueue "$DB_URL" "tp-warm-$r" "ours-$r:1-warm" "$(( TASKS / 10 ))" 2>>"$WORK/driver.log"
  "${BENCH[@]}" enqueue "$DB_URL" "tp-ours-$r" "ours-$r:1" "$TASKS" 2>>"$WORK/driver.log"
  line=$("${BENCH[@]}" ours "$DB_URL" "ours-$r:1" "$THREADS" "$BATCH" 2>>"$WORK/driver.log")
  [ "$(echo "$line" | field ours_tasks)" = "$TASKS" ] || { echo "bench: ours did not finish every task: $line" >&2; exit 1; }
  r_ours+=("$(echo "$line" | field ours_per_s)")

  "${BENCH[@]}" enqueue "$DB_URL" "tp-pgb-$r" "pgb-$r:1" "$TASKS" 2>>"$WORK/driver.log"
  per_client=$(( TASKS * 11 / 10 / (BATCH * THREADS) + 2 ))
  a=$(now)
  PGOPTIONS='' pgbench -n -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -M prepared -c "$THREADS" -j "$THREADS" \
    -t "$per_client" -D node="pgb-$r:1" -f "$WORK/claim.pgbench" "$DB" >"$WORK/pgbench-$r.log" 2>&1
  b=$(now)
  done_pgb=$("${PSQL[@]}" -At -d "$DB" -c "SELECT count(*) FROM tasks WHERE job_id = 'tp-pgb-$r' AND state = 'succeeded'")
  [ "$done_pgb" = "$TASKS" ] || { echo "bench: pgbench finished $done_pgb of $TASKS" >&2; cat "$WORK/pgbench-$r.log" >&2; exit 1; }
  r_pgb+=("$(python3 -c "print(round($TASKS/($b-$a)))")")

  line=$("${BENCH[@]}" dbsched "$DB_URL" "$THREADS" "$DBS_TASKS" 2>>"$WORK/driver.log")
  r_dbs+=("$(echo "$line" | field dbsched_per_s)")
  echo "round $r: ours ${r_ours[-1]}/s, pgbench ${r_pgb[-1]}/s, db-scheduler ${r_dbs[-1]}/s" >&2
done
OURS=$(printf '%s\n' "${r_ours[@]}" | median)
PGB=$(printf '%s\n' "${r_pgb[@]}" | median)
DBS=$(printf '%s\n' "${r_dbs[@]}" | median)
R_DBS=$(python3 -c "print(f'{$OURS/$DBS:.2f}')")
R_PGB=$(python3 -c "print(f'{$OURS/$PGB:.2f}')")

# --- 2. wake-up latency through a real master and clients ---------------------------------------
# --release-window 0: part 3 measures the release of every copy of a big job at once.
"$SNAP/bin/mooncake_master" --http-port "$HTTP_PORT" --no-auth --allow-any-source --release-window 0 --db-url "$DB_URL" > "$WORK/master.log" 2>&1 & PIDS+=($!); MASTER_PID=$!
API="http://127.0.0.1:$HTTP_PORT"
for _ in $(seq 600); do curl -sf "$API/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$API/health" >/dev/null || { echo "bench: master did not come up; log:" >&2; tail -20 "$WORK/master.log" >&2; exit 1; }
"$SNAP/bin/mooncake_client" --node-id "127.0.0.1:$SEED_PORT" --data-dir "$WORK/seed" --db-url "$DB_URL" \
  > "$WORK/seed.log" 2>&1 & PIDS+=($!); SEED_PID=$!
"$SNAP/bin/mooncake_client" --node-id "127.0.0.1:$FOLLOWER_PORT" --data-dir "$WORK/follower" --db-url "$DB_URL" \
  > "$WORK/follower.log" 2>&1 & PIDS+=($!); FOLLOWER_PID=$!
live_nodes() { curl -sf "$API/api/v1/nodes" | python3 -c 'import sys,json; print(sum(n["live"] for n in json.load(sys.stdin)["nodes"]))' 2>/dev/null; }
for _ in $(seq 600); do [ "$(live_nodes)" = 2 ] && break; sleep 0.1; done
[ "$(live_nodes)" = 2 ] || { echo "bench: clients did not come up; logs:" >&2; tail -5 "$WORK"/seed.log "$WORK"/follower.log >&2; exit 1; }
LAT=$("${BENCH[@]}" latency "$API" "$DB_URL" "127.0.0.1:$SEED_PORT" "127.0.0.1:$FOLLOWER_PORT" "$LAT_JOBS" "$WORK/models" 2>>"$WORK/driver.log")
kill "$SEED_PID" "$FOLLOWER_PID"; wait "$SEED_PID" "$FOLLOWER_PID" 2>/dev/null || true

# --- 3. the large job ---------------------------------------------------------------------------
"${PSQL[@]}" -d "$DB" -c "VACUUM ANALYZE" >/dev/null
BIG=$("${BENCH[@]}" bigjob "$API" "$DB_URL" "$MASTER_PID" "$OBJECTS" "$FOLLOWERS" 2>>"$WORK/driver.log")
kill "$MASTER_PID"; wait "$MASTER_PID" 2>/dev/null || true

NOTIFY=$(echo "$LAT" | field notify_p50_ms)
ENQ=$(echo "$BIG" | field enqueue_1M_s)
RSS=$(echo "$BIG" | field master_rss_MiB)
echo "queue benchmark, $(nproc) cores, load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  claim+complete (tasks/s, median of $ROUNDS): ours $OURS (runs ${r_ours[*]}), pgbench $PGB (runs ${r_pgb[*]}), db-scheduler $DBS (runs ${r_dbs[*]})"
echo "  ours: $THREADS workers, batches of $BATCH; pgbench: $THREADS clients, same claim; db-scheduler: $THREADS threads, lock-and-fetch"
echo "  task done -> next claimed: $LAT"
echo "  large job ($OBJECTS objects x $FOLLOWERS followers): $BIG"
echo "queue ours/db-scheduler=$R_DBS ours/pgbench=$R_PGB enqueue_1M_s=$ENQ master_rss_MiB=$RSS notify_p50_ms=$NOTIFY"
