-- The cluster secret: the chunk port admits a peer only once it has proven, in a challenge-response
-- handshake, that it holds this value (chunk-transfer/PROTOCOL.md, "Handshake"). Every member reads
-- it from here at start, so database access is cluster membership and nothing needs configuring;
-- mooncake_client --cluster-secret-file overrides it on a node.
--
-- One row, created by the database at migration time: three version-4 UUIDs (122 random bits each,
-- from the server's strong random source, which gen_random_uuid() uses in core Postgres 13+; no
-- pgcrypto needed) as 96 hex digits, 366 random bits.
--
-- Readable by whoever can read this schema: that is the point. To rotate it, update the row and
-- restart every mooncake_client (each reads it once, at start).
CREATE TABLE cluster_secret (
    singleton  boolean      PRIMARY KEY DEFAULT true CHECK (singleton),
    secret     varchar(128) NOT NULL,
    created_at timestamptz  NOT NULL DEFAULT now()
);

/* [jooq ignore start] */
INSERT INTO cluster_secret (secret)
SELECT replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
/* [jooq ignore stop] */
