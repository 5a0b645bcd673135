-- Artifact deletions wake their nodes with their own payload (issue 19).
--
-- V003 notified a node of new artifact_deletions rows on the channel task wake-ups use, with the
-- same payload (the node id), so a node could not tell the two apart and looked at its deletions
-- on every wake-up. During a job every release wakes every follower: bench/fleet.sh counted the
-- deletion poll at 0.68 statements a copy at N = 100 (17,339 polls for 25,344 copies) and 0.74 at
-- N = 1,000 (188,634 for 255,744), a quarter of every statement the fleet ran. The payload is now
-- 'deletions ' and the node id (ArtifactDeletions.NOTICE); a master's long-poll answer says which
-- kind woke the node ("deletions": true), and a node polls its deletions on such a wake-up or at
-- its idle cadence.
/* [jooq ignore start] */
CREATE OR REPLACE FUNCTION mooncake_notify_deletions_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_node', 'deletions ' || n.node_id) FROM (SELECT DISTINCT node_id FROM new_rows) n;
    RETURN NULL;
END $$;
/* [jooq ignore stop] */
