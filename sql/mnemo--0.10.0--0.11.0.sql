/* mnemo 0.10.0 -> 0.11.0: ALTER EXTENSION mnemo UPDATE TO '0.11.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.11.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.11.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.11.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A part's content is compressed by lz4 where the server was built with it
 * (else by default_toast_compression, as before), and an append compresses
 * it once it is 256 bytes long, where PostgreSQL would only in a row past
 * 2 kB (src/core/insert_direct.c).  Only the column's setting changes: the
 * rows stored so far stay as they are, and read the same.
 *
 * As in 0.9.0, the change runs where the table is: everywhere on one node;
 * on Citus, on the coordinator alone, by EXECUTE (doc/scale-out.md,
 * "Upgrades on Citus").
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT pg_catalog.citus_is_coordinator() THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE 'ALTER TABLE mnemo.message_parts ALTER COLUMN content SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END
$$;
