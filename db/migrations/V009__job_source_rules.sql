-- The source rules (master --allowed-sources, --allow-any-source, --public-sources-only) under which
-- a job was admitted, as SourceRules JSON. The seed's download task carries them, and the seed
-- checks every redirect hop against them, not only the URL the master saw. NULL for jobs created
-- before this column: they were admitted under the old default, any source. Text, not jsonb:
-- nothing queries inside it, and jOOQ's DDLDatabase reads an added jsonb column as json.
ALTER TABLE jobs ADD COLUMN source_rules text;
