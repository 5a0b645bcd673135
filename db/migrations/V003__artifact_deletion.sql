-- Freeing a model's disk on the nodes: DELETE /api/v1/model-distribution/artifacts records one row
-- per node that staged (or was to stage) the model; that node's worker claims the row, removes
-- <data-dir>/models/<provider>/<model_id>/<revision>/<format> and its replica rows, and marks it
-- done. A separate table rather than a task type: task rows belong to a job, a deletion does not.
CREATE TABLE artifact_deletions (
    deletion_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id         varchar(512)  NOT NULL,
    revision         varchar(256)  NOT NULL,
    format           varchar(128)  NOT NULL,
    provider         varchar(128)  NOT NULL,
    node_id          varchar(300)  NOT NULL,
    state            varchar(16)   NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'processing', 'done', 'failed')),
    lease_owner      varchar(128),                        -- <node_id>/<client instance>, set by the claim
    lease_expires_at timestamptz,
    last_error       text,
    created_at       timestamptz   NOT NULL DEFAULT now(),
    finished_at      timestamptz
);

-- A node's claim: its pending rows in id order; finished rows never slow it.
CREATE INDEX artifact_deletions_claim_idx ON artifact_deletions (node_id, deletion_id) WHERE state = 'pending';

/* [jooq ignore start] */
-- Wake the nodes concerned at once instead of at their next poll (the same channel as tasks).
CREATE FUNCTION mooncake_notify_deletions_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('mooncake_node', n.node_id) FROM (SELECT DISTINCT node_id FROM new_rows) n;
    RETURN NULL;
END $$;

CREATE TRIGGER artifact_deletions_notify_insert AFTER INSERT ON artifact_deletions
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION mooncake_notify_deletions_inserted();
/* [jooq ignore stop] */
