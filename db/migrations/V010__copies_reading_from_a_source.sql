-- The per-copy source lookup (ReplicaCatalog.SOURCES, issue 19) orders every candidate source by
-- the copies reading from it right now: count(*) of processing tasks with that source_node_id, one
-- count per candidate. Without an index on source_node_id each count walked every processing task
-- (tasks_processing_idx is keyed by lease expiry), so one lookup cost candidates x running copies:
-- at a thousand nodes with eight copies each, 1,000 x 8,000 row visits per copy. Partial, like the
-- claim index: only running rows are in it, so it stays as small as the work in flight.
CREATE INDEX tasks_reading_from_idx ON tasks (source_node_id) WHERE state = 'processing';
