/* mnemo 0.2.0 -> 0.3.0: ALTER EXTENSION mnemo UPDATE TO '0.3.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.3.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.3.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.3.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * Issue 15: the context view by generation.  A swap writes the surviving
 * view as the session's next generation and deletes the old one, so that
 * reading the view is an index range scan over (session_id, generation)
 * that never steps over swapped-out rows, whatever autovacuum has done.
 * Existing views are generation 0.
 */
ALTER TABLE mnemo.sessions ADD COLUMN context_generation bigint NOT NULL DEFAULT 0;
ALTER TABLE mnemo.sessions ADD COLUMN context_dead bigint NOT NULL DEFAULT 0;
COMMENT ON TABLE mnemo.sessions IS 'one row per session; last_seq and last_position allocate message seqs and context positions under the row lock; context_generation names the live generation of its context view';
ALTER TABLE mnemo.context_items ADD COLUMN generation bigint NOT NULL DEFAULT 0;
ALTER TABLE mnemo.context_items ALTER COLUMN generation DROP DEFAULT;
ALTER TABLE mnemo.context_items DROP CONSTRAINT context_items_pkey,
    ADD CONSTRAINT context_items_pkey PRIMARY KEY (session_id, generation, position),
    DROP CONSTRAINT context_items_session_id_item_id_key,
    ADD CONSTRAINT context_items_session_id_generation_item_id_key UNIQUE (session_id, generation, item_id);
COMMENT ON TABLE mnemo.context_items IS 'the ordered view of what is in context now, as of its session''s context_generation; a swap replaces a span with one summary row at its smallest position';

/*
 * Issue 15: search without the tax.  Appends no longer index: they queue the
 * seqs they wrote in mnemo.search_queue, and index_search (which
 * search_history runs first) writes one mnemo.search_documents row per part
 * under the GIN index.  The GIN index on message_parts goes; every message
 * already stored is queued, so the first search of a session indexes it.
 */
DROP INDEX mnemo.message_parts_search_idx;
CREATE TABLE mnemo.search_queue (
    session_id  text NOT NULL,
    seq_from    bigint NOT NULL,
    seq_to      bigint NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, seq_from, seq_to)
);
COMMENT ON TABLE mnemo.search_queue IS 'the messages not yet indexed for search_history, as seq ranges: appends and part changes add one, index_search (run by search_history) drains a session''s';
CREATE TABLE mnemo.search_documents (
    session_id  text NOT NULL,
    message_id  text NOT NULL,
    part_index  integer NOT NULL,
    tsv         tsvector NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, message_id, part_index)
);
COMMENT ON TABLE mnemo.search_documents IS 'the searched words of each indexed part (configuration simple, the first 100,000 characters of its text fields)';
CREATE INDEX search_documents_tsv_idx ON mnemo.search_documents USING gin (tsv);
SELECT pg_catalog.pg_extension_config_dump('mnemo.search_queue', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.search_documents', '');
ALTER TABLE mnemo.search_queue ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON mnemo.search_queue
    USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant));
REVOKE ALL ON mnemo.search_queue FROM PUBLIC;
ALTER TABLE mnemo.search_documents ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON mnemo.search_documents
    USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant));
REVOKE ALL ON mnemo.search_documents FROM PUBLIC;
INSERT INTO mnemo.search_queue (session_id, seq_from, seq_to, tenant)
    SELECT id, 1, last_seq, tenant FROM mnemo.sessions WHERE last_seq > 0;

ALTER FUNCTION mnemo.search_history(text, text, integer) VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mnemo.search_history(text, text, integer) IS 'full-text search (config simple, websearch syntax) over the whole log of a session, compacted parts included: one row per message, best rank first; indexes the session''s queued messages first, except in a read-only transaction, where it searches what is indexed and says with a NOTICE how much is not';

CREATE FUNCTION mnemo.index_search(session_id text)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_index_search';
COMMENT ON FUNCTION mnemo.index_search(text) IS 'indexes for search_history the parts of the session''s messages appended or changed since it was last indexed; returns the number of part documents written; for a scheduled job (pg_cron) or the client, so that searches find the work done';

CREATE FUNCTION mnemo.search_pending(session_id text)
    RETURNS bigint
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_search_pending';
COMMENT ON FUNCTION mnemo.search_pending(text) IS 'how many of the session''s messages wait to be indexed for search_history (a message changed after its append counts again)';
