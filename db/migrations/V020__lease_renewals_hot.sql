-- Lease renewals become HOT updates.
--
-- A node renews its leases with every heartbeat (about two renewals per copy), and each renewal
-- sets tasks.lease_expires_at. tasks_processing_idx indexed that column, so no renewal could be a
-- heap-only-tuple update: every renewed row inserted an entry into each of the six indexes that
-- cover a processing task. Without that index a renewal changes no indexed column and, with room
-- left on the page (fillfactor 80 for pages written from now on; HOT pruning keeps it), is HOT.
-- Measured with pgbench on this machine (8,000 processing tasks among 256k, renewals of 8 tasks a
-- statement, 4 clients, three alternating 15 s rounds each): 1,715-1,926 renewals/s with the
-- index, 0% HOT; 2,879-3,132/s without it, 99.9% HOT.
--
-- The lease rescuer (once a scheduler tick) now finds expired leases among the processing tasks
-- through another partial index on state = 'processing' and filters on expiry: about 10 ms a tick
-- with 8,000 processing tasks, nothing while the cluster is idle.
DROP INDEX tasks_processing_idx;
/* [jooq ignore start] */
ALTER TABLE tasks SET (fillfactor = 80);
/* [jooq ignore stop] */
