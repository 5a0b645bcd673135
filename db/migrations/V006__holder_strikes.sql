-- A holder that keeps failing to serve copies is marked and avoided (issue: fan-out). Each copy
-- that fails from a holder (peer gone, short or wrong bytes) adds one to its serve_failures; a
-- copy it serves well resets it to 0. While a node has failed 3 times in a row, most recently
-- within the last 5 minutes, source selection tries it only after every other live holder
-- (ReplicaCatalog.liveHolders), so a flaky uplink or a bad disk stops slowing every copy down, yet
-- remains a last resort when it is the only holder. GET /api/v1/nodes shows the mark.
ALTER TABLE nodes ADD COLUMN serve_failures integer NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN serve_failed_at timestamptz;
ALTER TABLE nodes ADD COLUMN serve_last_error varchar(2000);
