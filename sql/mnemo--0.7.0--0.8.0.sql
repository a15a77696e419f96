/* mnemo 0.7.0 -> 0.8.0: ALTER EXTENSION mnemo UPDATE TO '0.8.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.8.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.8.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.8.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A message's token counts and cost are NULL until update_message_tokens
 * sets them, where they were 0: most messages (a user's, a tool's, an
 * import's) never get any, and the six columns took 48 bytes of each row.
 * Every function reads a NULL as 0.  Rows written before keep their zeros,
 * which read the same.  DROP NOT NULL and DROP DEFAULT change the catalog
 * only; on a partitioned install the partitions follow their parent, and
 * on Citus the change runs on the coordinator alone, by EXECUTE, as 0.9.0's
 * does (doc/scale-out.md, "Upgrades on Citus").
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT pg_catalog.citus_is_coordinator() THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE 'ALTER TABLE mnemo.messages
                 ALTER COLUMN tokens_input DROP NOT NULL, ALTER COLUMN tokens_input DROP DEFAULT,
                 ALTER COLUMN tokens_output DROP NOT NULL, ALTER COLUMN tokens_output DROP DEFAULT,
                 ALTER COLUMN tokens_cache_read DROP NOT NULL, ALTER COLUMN tokens_cache_read DROP DEFAULT,
                 ALTER COLUMN tokens_cache_write DROP NOT NULL, ALTER COLUMN tokens_cache_write DROP DEFAULT,
                 ALTER COLUMN tokens_reasoning DROP NOT NULL, ALTER COLUMN tokens_reasoning DROP DEFAULT,
                 ALTER COLUMN cost DROP NOT NULL, ALTER COLUMN cost DROP DEFAULT';
END
$$;
