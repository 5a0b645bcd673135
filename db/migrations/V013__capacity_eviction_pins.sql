-- Disks that never fill (issue 22): what each node's data directory holds, which models operators
-- pinned there, and every model a node evicted.
--
-- Capacity and free bytes of the data directory's file system are columns of the node row, written
-- by the heartbeat statement that already touches it (no extra statement per heartbeat). NULL until
-- a client that reports them has beaten.
ALTER TABLE nodes ADD COLUMN capacity_bytes bigint;
ALTER TABLE nodes ADD COLUMN free_bytes bigint;
ALTER TABLE nodes ADD COLUMN high_watermark_pct integer;   -- the node's --evict-high-watermark
ALTER TABLE nodes ADD COLUMN low_watermark_pct integer;    -- the node's --evict-low-watermark

-- Bytes each node holds per staged (or partly staged) model and when it was last used there (staged,
-- served to a peer, or asked for by a job's task). Written only when a node's figures change (a
-- model appears, grows, shrinks, goes, or its use time moves on by a minute), in one statement per
-- heartbeat batch, so an idle fleet writes nothing here.
CREATE TABLE node_models (
    node_id      varchar(300)  NOT NULL,
    provider     varchar(128)  NOT NULL,
    model_id     varchar(512)  NOT NULL,
    revision     varchar(256)  NOT NULL,
    format       varchar(128)  NOT NULL,
    bytes        bigint        NOT NULL CHECK (bytes >= 0),
    last_used_at timestamptz   NOT NULL,
    updated_at   timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (node_id, provider, model_id, revision, format)
);

-- A model revision an operator pinned on a node: never evicted there, whatever the pressure.
CREATE TABLE model_pins (
    node_id      varchar(300)  NOT NULL,
    provider     varchar(128)  NOT NULL,
    model_id     varchar(512)  NOT NULL,
    revision     varchar(256)  NOT NULL,
    format       varchar(128)  NOT NULL,
    pinned_by    varchar(256),                             -- the API token's name, when known
    pinned_at    timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (node_id, provider, model_id, revision, format)
);

-- Every eviction: which node dropped which model, how many bytes, why, when.
CREATE TABLE evictions (
    eviction_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    node_id      varchar(300)  NOT NULL,
    provider     varchar(128)  NOT NULL,
    model_id     varchar(512)  NOT NULL,
    revision     varchar(256)  NOT NULL,
    format       varchar(128)  NOT NULL,
    bytes        bigint        NOT NULL CHECK (bytes >= 0),
    reason       varchar(2000) NOT NULL,
    evicted_at   timestamptz   NOT NULL DEFAULT now()
);

CREATE INDEX evictions_node_idx ON evictions (node_id, evicted_at);
