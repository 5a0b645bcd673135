#!/usr/bin/env bash
# Outgrowing one Postgres (issue 19): what an operator's options cost, measured on this machine.
# Two scratch databases in the same run, migrated with db/migrations (psql, version order):
#   plain  main's schema;
#   part   the same, with tasks and task_attempts LIST-partitioned by job_id, one partition per job
#          (bench/outgrown/partition.sql says what that changes and why; no migration is added).
# Both get the same rows (bench/outgrown/fill.sql): FINISHED finished jobs and one running job, each
# NODES targets x K objects of 64 MiB (a 1,000-node job of 256 objects: 255,744 copy rows), the
# whole-model tasks, one retry attempt row per 500 copies, every replica, the counters; VACUUM
# ANALYZE after the fill. Then, each against the other in the same run:
#   (a) the oldest finished job retired: on plain as main's PruneFinishedTasks does it (its SQL,
#       read from the Java source: the jobs query, PRUNE_BATCH until a batch is short, one
#       transaction each, then dropCounts), and the VACUUM that the deleted rows owe; on part the
#       same task_history rows from one INSERT over the job's partition, its counters deleted, and
#       its partitions dropped (DROP TABLE), in one transaction. A CHECKPOINT before each, so both
#       write full-page images as a prune of cold rows does. Time, WAL bytes (pg_current_wal_lsn
#       before and after: the whole server's WAL), dead tuples left (pgstattuple), sizes after, and
#       the locks each takes on the parent table.
#   (b) the hot path on both: pgbench, CLIENTS clients for SECS s a cell, each transaction one
#       node's claim of LIMIT copies (the claim TaskQueue sends, V019's mooncake_claim with lookups, its
#       result aggregated into one row for \gset) and their success (V018's mooncake_succeed with the
#       claimed tasks and their replicas). Every cell starts from the same work (the previous cell's
#       copies put back to pending, triggers off, then VACUUM). Two statement sets: main's, and "by
#       job", which names one job per statement (the claim's pick: the oldest active job; its update
#       and the success: the claimed rows' job) so that the partitioned table is pruned to that
#       job's partition at run time; copy_sources is main's in both. Two protocols: prepared (a server-side prepared
#       statement: a direct client, or PgBouncer >= 1.21) and extended (parsed and planned on every
#       call: PgBouncer 1.18 with prepareThreshold=0). First with the jobs above, then after EXTRA
#       more finished jobs (10 nodes x K objects each) were added to both, i.e. EXTRA more
#       partitions. Per-transaction latency p50/p99/max from pgbench's log, tps, WAL bytes a copy.
#   (c) job-finished-2 moved past the retention and retired as in (a) while (b)'s workload runs
#       (main's statements, prepared): how long it takes under load, and what it does to the claims.
#   Also: the time and locks to create a job's partitions, and whether Citus is installable here.
#
# Usage: bench/outgrown.sh    Env: NODES (1000), K (256), FINISHED (3), EXTRA (100), SECS (10),
#   CLIENTS (2), LIMIT (8), PGHOST (127.0.0.1), PGPORT (5432), PGUSER (postgres), KEEP=1 keeps the
#   databases. Needs psql, pgbench, python3, the pgstattuple extension (postgresql-contrib), and a
#   superuser (session_replication_role for the fill, CHECKPOINT). Creates and drops the databases
#   mooncake_outgrown_plain and mooncake_outgrown_part; changes no server setting.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/bench/outgrown"
NODES=${NODES:-1000}
K=${K:-256}
FINISHED=${FINISHED:-3}
EXTRA=${EXTRA:-100}
SECS=${SECS:-10}
CLIENTS=${CLIENTS:-2}
LIMIT=${LIMIT:-8}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
PLAIN=mooncake_outgrown_plain
PART=mooncake_outgrown_part
WORK=$(mktemp -d /tmp/mooncake-outgrown.XXXXXX)
for t in psql pgbench python3; do command -v "$t" >/dev/null || { echo "outgrown: needs $t" >&2; exit 1; }; done

cleanup() {
  if [ "${KEEP:-0}" != 1 ]; then
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $PLAIN" -c "DROP DATABASE IF EXISTS $PART" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
q() { local db=$1; shift; psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
lsn() { q postgres -c "SELECT pg_current_wal_lsn()"; }
wal_since() { q postgres -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$1')::bigint"; }
now_ms() { date +%s%3N; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.1f", a / b }'; }

# The statements, from the Java sources.
python3 "$HERE/java_sql.py" "$ROOT" prune-batch >"$WORK/prune_batch.sql"
python3 "$HERE/java_sql.py" "$ROOT" jobs-to-prune >"$WORK/jobs_to_prune.sql"
python3 "$HERE/java_sql.py" "$ROOT" drop-counts >"$WORK/drop_counts.sql"
python3 "$HERE/java_sql.py" "$ROOT" summary >"$WORK/summary.sql"
python3 "$HERE/java_sql.py" "$ROOT" claim >"$WORK/claim.sql"
BATCH=$(sed -n 's/.*int BATCH = \([0-9_]*\);.*/\1/p' "$ROOT/scheduler/src/main/java/io/mooncake/dist/scheduler/loop/PruneFinishedTasks.java" | tr -d _)
PER_ROUND=$(sed -n 's/.*int JOBS_PER_ROUND = \([0-9_]*\);.*/\1/p' "$ROOT/scheduler/src/main/java/io/mooncake/dist/scheduler/loop/PruneFinishedTasks.java" | tr -d _)
RETENTION_H=168

log "creating $PLAIN and $PART, migrating (db/migrations, psql in version order)"
for db in $PLAIN $PART; do
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  for f in $(ls "$ROOT"/db/migrations/V*.sql | sort -V); do q $db -f "$f" >/dev/null; done
  q $db -c "CREATE EXTENSION IF NOT EXISTS pgstattuple" >/dev/null
done
q $PART -f "$HERE/partition.sql" >/dev/null
idx() { q $1 -c "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'tasks'::regclass"; }
trg() { q $1 -c "SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = 'tasks'::regclass AND NOT tgisinternal"; }
if [ "$(idx $PLAIN)" != "$(idx $PART)" ] || [ "$(trg $PLAIN)" != "$(trg $PART)" ]; then
  echo "outgrown: the partitioned tasks table's indexes or triggers differ from main's" >&2
  echo "  plain: $(idx $PLAIN) / $(trg $PLAIN)" >&2; echo "  part:  $(idx $PART) / $(trg $PART)" >&2
  exit 1
fi

# The pruning procedures: main's statements (from the Java source) run as PruneFinishedTasks.run
# runs them; and the partition's retirement.
for db in $PLAIN $PART; do
  q $db -f "$HERE/fill.sql" >/dev/null
done
q $PLAIN -v batch_sql="$(cat "$WORK/prune_batch.sql")" -v jobs_sql="$(cat "$WORK/jobs_to_prune.sql")" \
  -v counts_sql="$(cat "$WORK/drop_counts.sql")" >/dev/null <<'SQL'
CREATE TABLE outgrown_sql (name text PRIMARY KEY, sql text);
INSERT INTO outgrown_sql VALUES ('batch', :'batch_sql'), ('jobs', :'jobs_sql'), ('counts', :'counts_sql');
-- PruneFinishedTasks.run: jobs past the retention, each pruned batch by batch (a transaction a
-- batch) until a batch comes back short, then its counters; again until no job is left.
CREATE PROCEDURE outgrown_prune_main(p_retention_secs float8, p_batch int, p_per_round int,
                                     INOUT o_deleted bigint DEFAULT 0, INOUT o_batches int DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
  jobs_sql text := (SELECT sql FROM outgrown_sql WHERE name = 'jobs');
  batch_sql text := (SELECT sql FROM outgrown_sql WHERE name = 'batch');
  counts_sql text := (SELECT sql FROM outgrown_sql WHERE name = 'counts');
  jobs varchar[];
  j varchar;
  n int;
  round bigint;
BEGIN
  LOOP
    EXECUTE format('SELECT array(%s)', jobs_sql) INTO jobs USING p_retention_secs, p_per_round;
    EXIT WHEN cardinality(jobs) = 0;
    round := 0;
    FOREACH j IN ARRAY jobs LOOP
      LOOP
        EXECUTE batch_sql INTO n USING j, p_batch;
        COMMIT;
        o_batches := o_batches + 1;
        round := round + n;
        EXIT WHEN n <> p_batch;
      END LOOP;
      EXECUTE counts_sql USING j, j, j;
      COMMIT;
    END LOOP;
    o_deleted := o_deleted + round;
    EXIT WHEN round = 0;
  END LOOP;
END $$;
SQL
q $PART -v summary_sql="$(cat "$WORK/summary.sql")" -v jobs_sql="$(cat "$WORK/jobs_to_prune.sql")" >/dev/null <<'SQL'
CREATE TABLE outgrown_sql (name text PRIMARY KEY, sql text);
INSERT INTO outgrown_sql VALUES ('summary', :'summary_sql'), ('jobs', :'jobs_sql');
-- The same jobs (the same query), each retired in one transaction: its task_history rows from
-- every task row of its partition, its counters deleted, its two partitions dropped. Answers the
-- lock modes it held on the parent tables.
CREATE PROCEDURE outgrown_prune_partitions(p_retention_secs float8, p_per_round int,
                                           INOUT o_rows bigint DEFAULT 0, INOUT o_locks text DEFAULT '')
LANGUAGE plpgsql AS $$
DECLARE
  jobs_sql text := (SELECT sql FROM outgrown_sql WHERE name = 'jobs');
  summary_sql text := (SELECT sql FROM outgrown_sql WHERE name = 'summary');
  jobs varchar[];
  j varchar;
BEGIN
  LOOP
    EXECUTE format('SELECT array(%s)', jobs_sql) INTO jobs USING p_retention_secs, p_per_round;
    EXIT WHEN cardinality(jobs) = 0;
    FOREACH j IN ARRAY jobs LOOP
      EXECUTE format('SELECT count(*) FROM %I', outgrown_partition_name(j, 'tasks')) INTO STRICT o_rows;
      EXECUTE summary_sql USING j;
      DELETE FROM task_count_deltas WHERE job_id = j;
      DELETE FROM task_counts WHERE job_id = j;
      EXECUTE format('DROP TABLE %I, %I', outgrown_partition_name(j, 'tasks'),
                     outgrown_partition_name(j, 'task_attempts'));
      SELECT string_agg(DISTINCT l.relation::regclass || ':' || l.mode, ' ') INTO o_locks
        FROM pg_locks l
       WHERE l.pid = pg_backend_pid() AND l.relation IN ('tasks'::regclass, 'task_attempts'::regclass);
      COMMIT;
    END LOOP;
  END LOOP;
END $$;
SQL

log "filling both: $FINISHED finished jobs and 1 running, $NODES nodes x $K objects each"
fill_ms=()
for db in $PLAIN $PART; do
  t0=$(now_ms)
  {
    echo "SET session_replication_role = replica;"
    echo "INSERT INTO nodes (node_id, host, port, data_dir, instance_id, heartbeat_at)"
    echo "  SELECT outgrown_node(i), split_part(outgrown_node(i), ':', 1), 7070, '/data', 'inst-1', now()"
    echo "    FROM generate_series(0, $NODES - 1) i;"
    # The oldest finished job is past the retention (8 days), the others within it (1 day).
    for i in $(seq 1 "$FINISHED"); do
      age=$([ "$i" = 1 ] && echo "8 days" || echo "$((FINISHED - i + 1)) hours")
      echo "SELECT outgrown_fill_job('job-finished-$i', $NODES, $K, true, '$age');"
    done
    echo "SELECT outgrown_fill_job('job-running', $NODES, $K, false, '0');"
  } | q $db >/dev/null
  q $db -c "VACUUM ANALYZE" >/dev/null
  fill_ms+=($(( $(now_ms) - t0 )))
done
TASK_ROWS=$(q $PLAIN -c "SELECT count(*) FROM tasks")
JOB_ROWS=$(q $PLAIN -c "SELECT count(*) FROM tasks WHERE job_id = 'job-finished-1'")
REPLICAS=$(q $PLAIN -c "SELECT count(*) FROM object_replicas")
# The tables holding a table's rows: itself, or its partitions (pg_partition_tree lists nothing for a
# table that is not partitioned).
leaves() {
  echo "SELECT c.oid AS relid FROM pg_class c WHERE c.oid = '$1'::regclass AND c.relkind = 'r'
        UNION ALL SELECT relid FROM pg_partition_tree('$1') WHERE isleaf"
}
size_tasks() { # heap + indexes + toast of tasks and task_attempts (every partition)
  q $1 -c "SELECT sum(pg_total_relation_size(r.relid)) FROM ($(leaves tasks) UNION ALL $(leaves task_attempts)) r"
}
dead_tasks() { # dead tuples and their bytes in tasks (every partition), exact
  q $1 -c "SELECT coalesce(sum(s.dead_tuple_count), 0) || ' ' || coalesce(sum(s.dead_tuple_len), 0)
             FROM ($(leaves tasks)) r, LATERAL pgstattuple(r.relid) s"
}
history() {
  q $1 -c "SELECT count(*) || ' rows, ' || sum(tasks) || ' tasks, ' || sum(attempts) || ' attempts, ' || sum(failed_attempts)
                  || ' failed, ' || sum(bytes_total) || ' bytes, ' || round(sum(timed_seconds)) || ' s' FROM task_history"
}
SIZE0_PLAIN=$(size_tasks $PLAIN)
SIZE0_PART=$(size_tasks $PART)

# (a) Retiring the finished job past the retention.
log "(a) pruning job-finished-1 ($JOB_ROWS task rows) as main does, on $PLAIN"
q $PLAIN -c CHECKPOINT >/dev/null
l0=$(lsn); t0=$(now_ms)
read -r PR_DELETED PR_BATCHES < <(q $PLAIN -F ' ' -c "CALL outgrown_prune_main($RETENTION_H * 3600, $BATCH, $PER_ROUND)")
PR_MS=$(( $(now_ms) - t0 )); PR_WAL=$(wal_since "$l0")
read -r PR_DEAD PR_DEAD_BYTES < <(dead_tasks $PLAIN)
PR_SIZE=$(size_tasks $PLAIN)
l0=$(lsn); t0=$(now_ms)
q $PLAIN -c "VACUUM tasks, task_attempts, task_count_deltas, task_counts, task_history" >/dev/null
VAC_MS=$(( $(now_ms) - t0 )); VAC_WAL=$(wal_since "$l0")
read -r VAC_DEAD _ < <(dead_tasks $PLAIN)
VAC_SIZE=$(size_tasks $PLAIN)
PLAIN_HISTORY=$(history $PLAIN)

log "(a) retiring job-finished-1 by dropping its partitions, on $PART"
q $PART -c CHECKPOINT >/dev/null
l0=$(lsn); t0=$(now_ms)
IFS='|' read -r DR_ROWS DR_LOCKS < <(q $PART -c "CALL outgrown_prune_partitions($RETENTION_H * 3600, $PER_ROUND)")
DR_MS=$(( $(now_ms) - t0 )); DR_WAL=$(wal_since "$l0")
read -r DR_DEAD _ < <(dead_tasks $PART)
DR_SIZE=$(size_tasks $PART)
PART_HISTORY=$(history $PART)
[ "$PLAIN_HISTORY" = "$PART_HISTORY" ] && HISTORY_SAME=yes || HISTORY_SAME=NO

# What the partitioned schema costs when a job is created: its partitions (the scheduler would
# create them with the job), and the locks that takes.
CREATE_LOCKS=$(q $PART -F ' ' <<'SQL' | tail -1
BEGIN;
SELECT outgrown_add_job('job-lock-probe');
SELECT string_agg(DISTINCT l.relation::regclass || ':' || l.mode, ' ')
  FROM pg_locks l WHERE l.pid = pg_backend_pid() AND l.relation IN ('tasks'::regclass, 'task_attempts'::regclass);
ROLLBACK;
SQL
)

# (b) The hot path. Two statement sets: main's (the claim as TaskQueue sends it, mooncake_succeed),
# and "by job", which names one job per statement so that a partitioned table is pruned to its
# partition at run time (the claim's pick restricted to the oldest active job, its update to the
# picked rows' job, the success to the claimed tasks' job: outgrown_succeed_by_job); copy_sources is
# main's in both. Here one job is active, so "by job" claims the same rows; a node in several jobs
# would need a claim per job.
python3 "$HERE/java_sql.py" "$ROOT" claim-by-job >"$WORK/claim_by_job.sql"
python3 "$HERE/java_sql.py" "$ROOT" claim-by-job-function >"$WORK/claim_by_job_function.sql"
python3 "$HERE/java_sql.py" "$ROOT" succeed-by-job >"$WORK/succeed_by_job.sql"
for db in $PLAIN $PART; do
  q $db -f "$WORK/claim_by_job_function.sql" -f "$WORK/succeed_by_job.sql" >/dev/null
done
hot_script() { # claim file, success function, its extra first argument
  cat <<SQL
\set n random(1, $((NODES - 1)))
SELECT outgrown_node(:n) AS node, outgrown_node(:n) || '/inst-1' AS owner \gset
$(cat "$1") \gset
SELECT count(*) AS done FROM $2($3 :ids::bigint[],
  array_fill(:owner::text, ARRAY[cardinality(:ids::bigint[])]),
  array_fill(67108864::bigint, ARRAY[cardinality(:ids::bigint[])]),
  array_fill(NULL::text, ARRAY[cardinality(:ids::bigint[])]),
  :ids::bigint[], :objs::text[], array_fill(:node::text, ARRAY[cardinality(:ids::bigint[])]),
  array_fill(67108864::bigint, ARRAY[cardinality(:ids::bigint[])]), :digests::text[],
  array_fill('/data/models/hf/acme/job-running/main/safetensors/model.safetensors'::text, ARRAY[cardinality(:ids::bigint[])]),
  array_fill(0::bigint, ARRAY[cardinality(:ids::bigint[])]));
SQL
}
hot_script "$WORK/claim.sql" mooncake_succeed "" >"$WORK/hot_main.sql"
hot_script "$WORK/claim_by_job.sql" outgrown_succeed_by_job ":job::varchar," >"$WORK/hot_by_job.sql"
# TaskQueue.claimBinds' constants: liveness 10 s (NodeRegistry.LIVENESS), relay freshness
# 5 s (TaskExecutor.RELAY_FRESH), avoid after 3 failures for 300 s, sample 8, lapsed 300 s; lease 30 s.
VARS=(-D lim="$LIMIT" -D liveness=10 -D fresh=5 -D avoid=3 -D avoidfor=300 -D sample=8 -D lapsed=300 -D lease=30)

# One pgbench run, from the same work each time (outgrown_reset_running, then VACUUM): prints
# "tps p50_ms p99_ms max_ms copies wal_bytes_per_copy copies_per_txn during_ms". With a sixth
# argument, that command runs once, LOAD_AT s into the run, and during_ms is how long it took.
hot() {
  local db=$1 mode=$2 tag=$3 secs=$4 script=$5 during=${6:-}
  q $db -c "SELECT outgrown_reset_running()" -c "UPDATE nodes SET heartbeat_at = now()" >/dev/null
  q $db -c "VACUUM tasks, object_replicas, task_count_deltas, placement_bytes, nodes" >/dev/null
  local before; before=$(q $db -c "SELECT count(*) FROM tasks WHERE job_id = 'job-running' AND state = 'succeeded'")
  local l0; l0=$(lsn)
  mkdir -p "$WORK/$tag"
  (cd "$WORK/$tag" && pgbench -n -M "$mode" -c "$CLIENTS" -j "$CLIENTS" -T "$secs" -r -l "${VARS[@]}" \
     -f "$script" "$db" >"$WORK/$tag/out.txt" 2>&1) &
  local bench=$! during_ms=0
  if [ -n "$during" ]; then
    sleep "$LOAD_AT"
    local t0; t0=$(now_ms)
    eval "$during" >"$WORK/$tag/during.txt"
    during_ms=$(( $(now_ms) - t0 ))
  fi
  wait $bench || { cat "$WORK/$tag/out.txt" >&2; exit 1; }
  local wal; wal=$(wal_since "$l0")
  local after; after=$(q $db -c "SELECT count(*) FROM tasks WHERE job_id = 'job-running' AND state = 'succeeded'")
  local tps; tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/$tag/out.txt" | head -1)
  local txns; txns=$(cat "$WORK/$tag"/pgbench_log.* | wc -l)
  local pct; pct=$(cat "$WORK/$tag"/pgbench_log.* | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {
      printf "%.2f %.2f %.1f", a[int(NR*0.5)+1]/1000, a[int(NR*0.99)+1]/1000, a[NR]/1000 }')
  local copies=$((after - before))
  echo "$(printf '%.0f' "$tps") $pct $copies $(( copies > 0 ? wal / copies : 0 )) \
        $(awk -v c=$copies -v t="$txns" 'BEGIN { printf "%.1f", (t > 0 ? c / t : 0) }') $during_ms"
}

VARIANTS=("$PLAIN main" "$PART main" "$PLAIN by_job" "$PART by_job")
declare -A HOT JOBS
hot_group() { # group number
  local n=$1 jobs; jobs=$(q $PART -c "SELECT count(*) FROM pg_partition_tree('tasks') WHERE isleaf")
  JOBS[$n]=$jobs
  for mode in prepared extended; do
    for v in "${VARIANTS[@]}"; do
      read -r db set <<<"$v"
      log "(b) hot path on $db, $set statements, $mode, $jobs jobs"
      HOT[$db,$set,$mode,$n]=$(hot $db $mode "$db-$set-$mode-$n" "$SECS" "$WORK/hot_$set.sql")
    done
  done
}
hot_group 1

# (c) Retiring a 1,000-node job while nodes claim and succeed: job-finished-2 is moved past the
# retention in both, and retired as in (a) LOAD_AT s into a run of the hot path (main's statements,
# prepared) that lasts LOAD_SECS.
LOAD_AT=5
LOAD_SECS=$(( LOAD_AT + 5 + 3 * PR_MS / 1000 ))
for db in $PLAIN $PART; do
  q $db -c "UPDATE jobs SET finished_at = now() - interval '8 days' WHERE job_id = 'job-finished-2'" >/dev/null
done
log "(c) hot path on $PLAIN for $LOAD_SECS s, main's pruner retiring job-finished-2 from ${LOAD_AT} s"
LOADED[0]=$(hot $PLAIN prepared "$PLAIN-load" "$LOAD_SECS" "$WORK/hot_main.sql" \
  "q $PLAIN -c 'CALL outgrown_prune_main($RETENTION_H * 3600, $BATCH, $PER_ROUND)'")
log "(c) hot path on $PART for $LOAD_SECS s, its partitions dropped from ${LOAD_AT} s"
LOADED[1]=$(hot $PART prepared "$PART-load" "$LOAD_SECS" "$WORK/hot_main.sql" \
  "q $PART -c 'CALL outgrown_prune_partitions($RETENTION_H * 3600, $PER_ROUND)'")
LOAD_JOBS=$(q $PART -c "SELECT count(*) FROM pg_partition_tree('tasks') WHERE isleaf")

log "adding $EXTRA finished jobs of 10 nodes x $K objects to both (partitions on $PART)"
for db in $PLAIN $PART; do
  {
    echo "SET session_replication_role = replica;"
    for i in $(seq 1 "$EXTRA"); do echo "SELECT outgrown_fill_job('job-small-$i', 10, $K, true, '1 day');"; done
  } | q $db >/dev/null
  q $db -c "VACUUM ANALYZE" >/dev/null
done
# Creating a job's partitions alone, timed: 20 more empty jobs' partitions, then dropped again.
t0=$(now_ms)
for i in $(seq 1 20); do echo "SELECT outgrown_add_job('job-empty-$i');"; done | q $PART >/dev/null
CREATE_MS=$(( ($(now_ms) - t0) / 20 ))
for i in $(seq 1 20); do
  echo "SELECT format('DROP TABLE %I, %I', outgrown_partition_name('job-empty-$i', 'tasks'),"
  echo "              outgrown_partition_name('job-empty-$i', 'task_attempts')) \\gexec"
done | q $PART >/dev/null
hot_group 2

CITUS=$(apt-cache policy postgresql-15-citus 2>/dev/null | head -3 | tr '\n' ' ')
[ -n "$CITUS" ] || CITUS="apt-cache policy postgresql-15-citus: no candidate in this machine's apt sources"

# The report.
echo
echo "outgrown: Postgres $(q postgres -c 'SHOW server_version') on $(nproc) cores; $TASK_ROWS task rows ($FINISHED finished + 1 running job of $NODES nodes x $K objects), $REPLICAS replicas"
echo "fill: ${fill_ms[0]} ms plain, ${fill_ms[1]} ms partitioned; tasks+attempts $(mb "$SIZE0_PLAIN") MB plain, $(mb "$SIZE0_PART") MB partitioned"
echo
echo "(a) retiring a finished job of $JOB_ROWS task rows"
printf '  %-42s %8s %8s %12s %14s\n' "" "time_ms" "wal_MB" "dead_tuples" "tasks_MB_after"
printf '  %-42s %8s %8s %12s %14s\n' "main: PRUNE_BATCH x $PR_BATCHES ($PR_DELETED rows)" "$PR_MS" "$(mb "$PR_WAL")" "$PR_DEAD" "$(mb "$PR_SIZE")"
printf '  %-42s %8s %8s %12s %14s\n' "main: + the VACUUM it owes" "$VAC_MS" "$(mb "$VAC_WAL")" "$VAC_DEAD" "$(mb "$VAC_SIZE")"
printf '  %-42s %8s %8s %12s %14s\n' "partitioned: summary + DROP ($DR_ROWS rows)" "$DR_MS" "$(mb "$DR_WAL")" "$DR_DEAD" "$(mb "$DR_SIZE")"
echo "  main (prune + vacuum) / partitioned: time $(ratio $((PR_MS + VAC_MS)) "$DR_MS") x, WAL $(ratio $((PR_WAL + VAC_WAL)) "$DR_WAL") x; disk returned: main $(mb $((SIZE0_PLAIN - VAC_SIZE))) MB, partitioned $(mb $((SIZE0_PART - DR_SIZE))) MB"
echo "  task_history equal in both: $HISTORY_SAME ($PLAIN_HISTORY)"
echo "  locks on the parents: retiring: $DR_LOCKS"
echo "                        creating a job's partitions (${CREATE_MS} ms a job): $CREATE_LOCKS"
echo
echo "(b) hot path: a node's claim of $LIMIT copies with sources + their success, $CLIENTS clients x ${SECS} s a cell"
printf '  %-9s %-6s %-7s %5s %6s %8s %8s %8s %7s %8s %10s\n' "protocol" "table" "stmts" "jobs" "tps" "p50_ms" "p99_ms" "max_ms" "copies" "copy/txn" "wal_B/copy"
for n in 1 2; do
  for mode in prepared extended; do
    for v in "${VARIANTS[@]}"; do
      read -r db set <<<"$v"
      read -r tps p50 p99 max copies walc per _ <<<"${HOT[$db,$set,$mode,$n]}"
      printf '  %-9s %-6s %-7s %5s %6s %8s %8s %8s %7s %8s %10s\n' "$mode" "${db#mooncake_outgrown_}" "$set" "${JOBS[$n]}" "$tps" "$p50" "$p99" "$max" "$copies" "$per" "$walc"
    done
  done
done
for n in 1 2; do
  for mode in prepared extended; do
    read -r tp a1 b1 _ <<<"${HOT[$PLAIN,main,$mode,$n]}"
    for v in "$PART main" "$PART by_job"; do
      read -r db set <<<"$v"
      read -r tq a2 b2 _ <<<"${HOT[$db,$set,$mode,$n]}"
      echo "  ${JOBS[$n]} jobs, $mode, partitioned with $set statements / plain with main's: p50 $(ratio "$a2" "$a1") x, p99 $(ratio "$b2" "$b1") x, tps $(ratio "$tq" "$tp") x"
    done
  done
done
echo
echo "(c) retiring job-finished-2 ($JOB_ROWS rows) ${LOAD_AT} s into ${LOAD_SECS} s of the hot path (main's statements, prepared, ${JOBS[1]} jobs)"
printf '  %-22s %10s %6s %8s %8s %8s %7s\n' "" "retire_ms" "tps" "p50_ms" "p99_ms" "max_ms" "copies"
for i in 0 1; do
  read -r tps p50 p99 max copies _ _ dms <<<"${LOADED[$i]}"
  label=$([ $i = 0 ] && echo "main's pruner" || echo "partitions dropped")
  printf '  %-22s %10s %6s %8s %8s %8s %7s\n' "$label" "$dms" "$tps" "$p50" "$p99" "$max" "$copies"
done
echo
echo "citus: $CITUS"
