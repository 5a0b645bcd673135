-- Seed failover (an extension beside the RFC's fields). A job may name fallback seeds among its
-- targets; when the seed's placement fails, the scheduler makes the next one the seed, which then
-- downloads only the objects no live node holds.
--   fallback_seeds: the request's list, in order, as a JSON array of node ids; NULL when the
--                   request named none (the RFC's rule: a seed failure fails the job).
--   replaced_seeds: the seeds replaced so far, oldest first, as a JSON array; NULL before the
--                   first failover. jobs.seed_node_id is always the current seed, so the seed
--                   history is replaced_seeds followed by seed_node_id.
-- Text, not jsonb or text[]: nothing queries inside them (the scheduler reads the row it locked),
-- and jOOQ's DDLDatabase reads neither an added jsonb column nor an array type as Postgres does.
ALTER TABLE jobs ADD COLUMN fallback_seeds text;
ALTER TABLE jobs ADD COLUMN replaced_seeds text;
