-- A task's succeeding attempt is recorded by the task row itself, not by a task_attempts row
-- (issue: the task queue at scale). The success statement already writes everything that row
-- held: the attempt number (tasks.attempts, raised by every claim), the lease owner it was claimed
-- under (tasks.lease_owner, kept), when it was claimed (tasks.started_at) and when it finished
-- (tasks.finished_at). A second row per success cost a heap tuple, a primary-key entry and a
-- foreign-key probe on the hottest write path: about a fifth of the database's work per claimed
-- and completed task in bench/queue.sh. task_attempts keeps every attempt that did not succeed
-- (retry, failed, lease_expired) with its error, one row each, as before.
--
-- task_attempt_log is every attempt in one place, for operators and reports: the failing ones
-- from task_attempts and the succeeding one from each succeeded task.

-- Successes recorded the old way are now represented by their task row; drop the copies so the
-- log does not list them twice.
/* [jooq ignore start] */
DELETE FROM task_attempts a
 USING tasks t
 WHERE a.task_id = t.task_id AND a.outcome = 'succeeded' AND t.state = 'succeeded' AND a.attempt = t.attempts;
/* [jooq ignore stop] */

CREATE VIEW task_attempt_log AS
SELECT a.task_id, a.attempt, a.node_id, a.lease_owner, a.started_at, a.finished_at, a.outcome, a.error
  FROM task_attempts a
UNION ALL
SELECT t.task_id, t.attempts, t.node_id, coalesce(t.lease_owner, t.node_id), coalesce(t.started_at, t.created_at),
       coalesce(t.finished_at, t.updated_at), 'succeeded', NULL
  FROM tasks t
 WHERE t.state = 'succeeded';
