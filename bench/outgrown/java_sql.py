#!/usr/bin/env python3
"""Prints SQL that bench/outgrown.sh runs, taken from the Java sources at run time, so the benchmark
measures main's statements and not a copy that drifts from them.

  java_sql.py ROOT prune-batch     PruneFinishedTasks.PRUNE_BATCH, binds as $1 (job), $2 (batch)
  java_sql.py ROOT jobs-to-prune   PruneFinishedTasks.jobsToPrune's query, $1 (seconds), $2 (limit)
  java_sql.py ROOT drop-counts     PruneFinishedTasks.dropCounts' statement, $1 $2 $3 (job)
  java_sql.py ROOT summary         PRUNE_BATCH's task_history upsert over every task row of the job
                                   $1 (a partition's worth, no DELETE): what is kept of a dropped one
  java_sql.py ROOT claim           the claim TaskQueue sends (V019's mooncake_claim, with lookups) with
                                   pgbench variables for its binds, and one aggregated row (ids,
                                   objects, digests) for \\gset
  java_sql.py ROOT claim-by-job    the same through outgrown_claim_by_job; the row also has the
                                   claimed tasks' job (job)
  java_sql.py ROOT claim-by-job-function
                                   V019's mooncake_claim as outgrown_claim_by_job: its pick restricted
                                   to one job (the oldest active one) and its update to the picked
                                   rows' job, each a scalar (Postgres 15 prunes partitions at run time
                                   for `job_id = <scalar>`, not for `job_id = ANY (<array param>)`:
                                   checked with EXPLAIN ANALYZE)
  java_sql.py ROOT succeed-by-job  V018's mooncake_succeed as outgrown_succeed_by_job(p_job_id, ...):
                                   its update restricted to one job
"""
import re
import sys

ROOT = sys.argv[1]
WHAT = sys.argv[2]
PRUNE = ROOT + "/scheduler/src/main/java/io/mooncake/dist/scheduler/loop/PruneFinishedTasks.java"
QUEUE = ROOT + "/scheduler/src/main/java/io/mooncake/dist/scheduler/store/TaskQueue.java"


def text_blocks(src):
    """Every Java text block's content, in order."""
    return re.findall(r'"""\n(.*?)"""', src, re.S)


def constant(src, name):
    """A String constant made of text blocks, string literals and other constants joined by +."""
    m = re.search(r"\b" + name + r"\s*=\s*", src)
    if not m:
        sys.exit("java_sql: no constant " + name)
    i = m.end()
    out = []
    while True:
        while src[i] in " \n+":
            i += 1
        if src.startswith('"""', i):
            j = src.index('"""', i + 3)
            out.append(src[i + 3 : j].split("\n", 1)[1])
            i = j + 3
        elif src[i] == '"':
            j = src.index('"', i + 1)
            out.append(src[i + 1 : j].replace("\\n", "\n"))
            i = j + 1
        elif src[i] == ";":
            return "".join(out)
        else:
            ident = re.match(r"[A-Z_]+", src[i:]).group(0)
            out.append(constant(src, ident))
            i += len(ident)


def binds(sql, names):
    parts = sql.split("?")
    if len(parts) - 1 != len(names):
        sys.exit("java_sql: %d binds, expected %d" % (len(parts) - 1, len(names)))
    return "".join(p + (names[k] if k < len(names) else "") for k, p in enumerate(parts))


prune = open(PRUNE).read()
if WHAT == "prune-batch":
    print(binds(constant(prune, "PRUNE_BATCH"), ["$1", "$2"]))
elif WHAT == "jobs-to-prune":
    block = [b for b in text_blocks(prune) if "jobs j" in b][0]
    print(binds(block, ["$1", "$2"]))
elif WHAT == "drop-counts":
    block = [b for b in text_blocks(prune) if "task_count_deltas" in b and "DELETE" in b][0]
    print(binds(block, ["$1", "$2", "$3"]))
elif WHAT == "summary":
    batch = constant(prune, "PRUNE_BATCH")
    m = re.search(r"(INSERT INTO task_history.*pruned_at = now\(\))\)", batch, re.S)
    if not m:
        sys.exit("java_sql: no task_history upsert in PRUNE_BATCH")
    print(
        "WITH failures AS (\n"
        "  SELECT a.task_id, count(*) AS failed FROM task_attempts a\n"
        "   WHERE a.job_id = $1 AND a.outcome IN ('failed', 'retry', 'lease_expired') GROUP BY a.task_id),\n"
        "gone AS (SELECT t.* FROM tasks t WHERE t.job_id = $1)\n" + m.group(1)
    )
elif WHAT == "succeed-by-job":
    v018 = open(ROOT + "/db/migrations/V018__success_planned_once.sql").read()
    fn = re.search(r"CREATE FUNCTION mooncake_succeed\(.*?\n\$\$;", v018, re.S).group(0)
    where = "WHERE t.task_id = v.task_id AND t.lease_owner = v.lease_owner AND t.state = 'processing'"
    if where not in fn:
        sys.exit("java_sql: mooncake_succeed's update changed")
    fn = fn.replace(where, where + " AND t.job_id = p_job_id")
    fn = fn.replace("CREATE FUNCTION mooncake_succeed(", "CREATE FUNCTION outgrown_succeed_by_job(p_job_id varchar, ")
    print(fn)
elif WHAT in ("claim", "claim-by-job"):
    queue = open(QUEUE).read()
    if "mooncake_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" not in queue:
        sys.exit("java_sql: TaskQueue no longer claims through mooncake_claim (V019)")
    fn = "mooncake_claim" if WHAT == "claim" else "outgrown_claim_by_job"
    print(
        "SELECT coalesce(array_agg(c.task_id ORDER BY c.task_id), '{}') AS ids,"
        + " coalesce(array_agg(c.object_id ORDER BY c.task_id), '{}') AS objs,"
        + " coalesce(array_agg((SELECT cr.digest FROM copy_releases cr"
        + " WHERE cr.job_id = c.job_id AND cr.object_id = c.object_id) ORDER BY c.task_id), '{}') AS digests"
        + (", coalesce(min(c.job_id), '') AS job" if WHAT == "claim-by-job" else "")
        + " FROM (SELECT DISTINCT ON (task_id) task_id, object_id, job_id FROM " + fn
        + "(:node, :lim, :owner, :lease, true, :liveness, :fresh, :avoid, :avoidfor, :sample, :lapsed)) c"
    )
elif WHAT == "claim-by-job-function":
    v019 = open(ROOT + "/db/migrations/V019__claim_planned_once.sql").read()
    fn = re.search(r"CREATE FUNCTION mooncake_claim\(.*?\n\$\$;", v019, re.S).group(0)
    pick = "WHERE t.node_id = p_node_id AND t.state = 'pending' AND t.run_after <= now()"
    upd = "WHERE t.task_id = ANY (ARRAY(SELECT r.task_id FROM ready r))"
    if pick not in fn or upd not in fn:
        sys.exit("java_sql: the claim's pick or update changed")
    active = "(SELECT j.job_id FROM jobs j WHERE j.status IN ('planned', 'seeding', 'replicating') ORDER BY j.created_at LIMIT 1)"
    fn = fn.replace(pick, pick + " AND t.job_id = " + active)
    fn = fn.replace(upd, upd + " AND t.job_id = (SELECT r.job_id FROM ready r LIMIT 1)")
    print(fn.replace("CREATE FUNCTION mooncake_claim(", "CREATE FUNCTION outgrown_claim_by_job("))
else:
    sys.exit("java_sql: unknown " + WHAT)
