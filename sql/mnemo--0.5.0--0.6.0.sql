/* mnemo 0.5.0 -> 0.6.0: ALTER EXTENSION mnemo UPDATE TO '0.6.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.6.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.6.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.6.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/* ------------------------------------------------------------------------
 * Images stored once per tenant, as bytes (src/blobs.c)
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.blobs (
    sha256      bytea NOT NULL CHECK (octet_length(sha256) = 32),
    bytes       bytea NOT NULL,
    -- the image parts of the tenant's sessions that name it (src/blobs.c)
    refs        bigint NOT NULL CHECK (refs > 0),
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    tenant      text NOT NULL,
    PRIMARY KEY (tenant, sha256)
);
COMMENT ON TABLE mnemo.blobs IS 'the bytes of image parts appended as base64, once per tenant and sha256; refs counts the parts that name one';
-- images are compressed already: store them as they are, without trying
ALTER TABLE mnemo.blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;
ALTER TABLE mnemo.blobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON mnemo.blobs
    USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant));
REVOKE ALL ON mnemo.blobs FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('mnemo.blobs', '');

-- The image parts already stored: those whose data decodes and encodes back
-- to the same string (canonical base64 without line breaks, what an append
-- converts, src/blobs.c) now name a blob; any other data stays as it is.
-- The pattern lets only well-formed base64 reach decode(), which would
-- raise on the rest; encode() breaks lines, which the comparison removes.
WITH candidates AS (
    SELECT p.session_id, p.id, p.tenant, p.content ->> 'data' AS data,
           pg_catalog.decode(p.content ->> 'data', 'base64') AS bytes
      FROM mnemo.message_parts p
     WHERE p.part_type = 'image' AND pg_catalog.jsonb_typeof(p.content -> 'data') = 'string'
       AND (p.content ->> 'data') ~ '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'
), exact AS MATERIALIZED (
    SELECT c.session_id, c.id, c.tenant, c.bytes, pg_catalog.sha256(c.bytes) AS sha256
      FROM candidates c
     WHERE pg_catalog.replace(pg_catalog.encode(c.bytes, 'base64'), E'\n', '') = c.data
), stored AS (
    INSERT INTO mnemo.blobs (sha256, bytes, refs, created_at, tenant)
    SELECT DISTINCT ON (e.tenant, e.sha256) e.sha256, e.bytes,
           pg_catalog.count(*) OVER (PARTITION BY e.tenant, e.sha256),
           (extract(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint, e.tenant
      FROM exact e
     ORDER BY e.tenant, e.sha256
)
UPDATE mnemo.message_parts p
   SET content = p.content || pg_catalog.jsonb_build_object('data',
           pg_catalog.jsonb_build_object('sha256', pg_catalog.encode(e.sha256, 'hex'),
                                         'bytes', pg_catalog.octet_length(e.bytes)))
  FROM exact e
 WHERE p.session_id = e.session_id AND p.id = e.id;
