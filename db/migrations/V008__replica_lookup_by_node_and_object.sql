-- Every lookup of one node's replica of one object is an exact probe, whichever index the planner
-- picks (issue: the task queue at scale). The release statement asks, per object of a job, for the
-- seed's replica of it. With statistics taken while the table was small (a fresh database, or one
-- last analyzed before a large job arrived, on a server without autovacuum) the planner chose
-- object_replicas_node_idx (node_id alone) for that probe and filtered every replica the seed holds
-- for each object: 10,000 x 10,000 rows for a 10,000-object job. With object_id in this index's key
-- too, both of the table's indexes answer (node_id, object_id) exactly, and this one still serves
-- every lookup by node alone. ReleasePlanTest checks the plan.
DROP INDEX object_replicas_node_idx;
CREATE INDEX object_replicas_node_idx ON object_replicas (node_id, object_id);
