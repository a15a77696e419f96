/* mnemo 0.12.0 -> 0.13.0: ALTER EXTENSION mnemo UPDATE TO '0.13.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.13.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.13.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.13.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 *
 * 0.13.0 keeps the log in one table, mnemo.log: one row per part, the
 * message's columns on its part 0 row (a message without parts has one row
 * without a part).  The tables mnemo.messages and mnemo.message_parts
 * become views of it, with the same columns.  Every row is copied once,
 * in one statement; the functions whose result is a row of mnemo.messages
 * are made again over the view's row type.
 */
DROP FUNCTION mnemo.get_message(text, text);
DROP FUNCTION mnemo.get_messages(text, text);
DROP FUNCTION mnemo.get_messages_after(text, bigint, integer);
DROP FUNCTION mnemo.last_summary(text);

/*
 * The CHECK of mnemo.log.  On a Citus worker it is there already: the
 * coordinator's update makes it on the workers (below) before it
 * distributes mnemo.log, whose shards need it, and before the workers run
 * this script; there it is made a member of the extension instead.
 */
DO $do$
BEGIN
    IF pg_catalog.to_regprocedure('mnemo._check_log_row(integer, text, text, bigint, text, text, text, boolean, double precision, bigint, bigint, bigint, bigint, bigint, text, jsonb, text, integer, bigint, bigint, bigint)') IS NULL THEN
        EXECUTE $f$CREATE FUNCTION mnemo._check_log_row(part_index integer, id text, role text, created_at bigint,
                                     agent text, model_id text, provider_id text,
                                     is_summary boolean, cost double precision,
                                     tokens_input bigint, tokens_output bigint,
                                     tokens_cache_read bigint, tokens_cache_write bigint,
                                     tokens_reasoning bigint, part_type text, content jsonb,
                                     tool_state text, token_estimate integer,
                                     compacted_at bigint, started_at bigint,
                                     completed_at bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_log_row'$f$;
    ELSE
        EXECUTE 'ALTER EXTENSION mnemo ADD FUNCTION mnemo._check_log_row(integer, text, text, bigint, text, text, text, boolean, double precision, bigint, bigint, bigint, bigint, bigint, text, jsonb, text, integer, bigint, bigint, bigint)';
    END IF;
END
$do$;
COMMENT ON FUNCTION mnemo._check_log_row(integer, text, text, bigint, text, text, text, boolean, double precision, bigint, bigint, bigint, bigint, bigint, text, jsonb, text, integer, bigint, bigint, bigint) IS 'the CHECK of mnemo.log: part_index >= 0; on part 0 the message''s id, role (user, assistant, system or tool), created_at, agent, model_id, provider_id and is_summary set, on the others none of the message''s columns; cost finite and >= 0; created_at and the token counts >= 0; part_type and content both set or, on a part 0 row of a message without parts, neither with every part column NULL; tool_state NULL or pending, running, completed, error; token_estimate and the times >= 0';
/*
 * The tables' change runs where the tables are: everywhere on one node; on
 * Citus, on the coordinator, which hands each statement to the workers'
 * tables and shards.  There mnemo.log is distributed before its rows are
 * copied, colocated with mnemo.sessions, so that the copy runs on each
 * shard; first each worker is given the log's CHECK function and the table
 * itself, as CREATE EXTENSION gives a worker every table of the extension
 * (Citus makes no shell of an extension's table, and a shard's CHECK needs
 * its function).  Each statement goes by EXECUTE, alone: Citus hands a
 * command to the workers as its query string, which here would be the
 * whole script.  A worker runs this script too (Citus passes the ALTER
 * EXTENSION on, after the coordinator's): it takes the log into the
 * extension and drops its own tables of messages and parts, which Citus
 * leaves there.  On the partitioned layout the log is partitioned as the
 * messages were, before the copy.
 */
DO $$
DECLARE
    modulus integer := (SELECT count(*) FROM pg_catalog.pg_inherits
                         WHERE inhparent = 'mnemo.messages'::regclass);
    distributed boolean := false;
    worker boolean := false;
    failed text;
    t regclass;
    stmt text;
    ddl text[] := ARRAY[
        $ddl$CREATE TABLE mnemo.log (
            session_id          text NOT NULL,
            tenant              text NOT NULL,
            seq                 bigint NOT NULL,
            part_index          integer NOT NULL,
            id                  text,
            role                text,
            created_at          bigint,
            agent               text,
            model_id            text,
            provider_id         text,
            run_id              text,
            is_summary          boolean,
            tokens_input        bigint,
            tokens_output       bigint,
            tokens_cache_read   bigint,
            tokens_cache_write  bigint,
            tokens_reasoning    bigint,
            cost                double precision,
            finish_reason       text,
            part_id             text,
            part_type           text,
            content             jsonb,
            tool_name           text,
            tool_call_id        text,
            tool_state          text,
            compacted_at        bigint,
            started_at          bigint,
            completed_at        bigint,
            token_estimate      integer,
            PRIMARY KEY (session_id, tenant, seq, part_index)
        )$ddl$,
        $ddl$COMMENT ON TABLE mnemo.log IS 'the append-only message log, one row per part: a message''s columns on its part 0 row, NULL on its others (a message without parts: one row, part_type NULL); seq is dense per session, in commit order; content is immutable, status columns change through update_part_status and tombstone_part; read as the views mnemo.messages and mnemo.message_parts'$ddl$,
        $ddl$CREATE UNIQUE INDEX log_id_key ON mnemo.log (session_id, tenant, id) WHERE id IS NOT NULL$ddl$,
        $ddl$CREATE UNIQUE INDEX log_part_id_key ON mnemo.log (session_id, tenant, part_id)
            WHERE part_id IS NOT NULL$ddl$,
        $ddl$COMMENT ON INDEX mnemo.log_part_id_key IS 'the part ids callers gave, unique within a session; a part stored without one has the id <message id>:<part_index>'$ddl$,
        $ddl$CREATE INDEX log_summary_idx ON mnemo.log (session_id, tenant, seq) WHERE is_summary$ddl$,
        $ddl$CREATE INDEX log_user_idx ON mnemo.log (session_id, tenant, seq) WHERE role = 'user' AND NOT is_summary$ddl$,
        $ddl$ALTER TABLE mnemo.log ADD CONSTRAINT log_row_check
            CHECK (mnemo._check_log_row(part_index, id, role, created_at, agent, model_id, provider_id,
                                        is_summary, cost, tokens_input, tokens_output, tokens_cache_read,
                                        tokens_cache_write, tokens_reasoning, part_type, content,
                                        tool_state, token_estimate, compacted_at, started_at,
                                        completed_at))$ddl$,
        'ALTER TABLE mnemo.log ENABLE ROW LEVEL SECURITY',
        'CREATE POLICY tenant_rows ON mnemo.log '
                    'USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant))',
        'REVOKE ALL ON mnemo.log FROM PUBLIC'];
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        worker := NOT pg_catalog.citus_is_coordinator();
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition
                                 WHERE logicalrelid = ''mnemo.messages''::regclass)' INTO distributed;
    END IF;
    IF worker THEN
        -- the coordinator made the log here before it distributed it; the
        -- worker's own tables of messages and parts, which Citus leaves,
        -- go below
        IF pg_catalog.to_regclass('mnemo.log') IS NOT NULL THEN
            EXECUTE 'ALTER EXTENSION mnemo ADD TABLE mnemo.log';
        END IF;
    ELSE
        FOREACH stmt IN ARRAY ddl LOOP
            EXECUTE stmt;
        END LOOP;
        IF modulus > 0 THEN
            PERFORM mnemo._partition_by_session('mnemo.log', modulus);
        END IF;
        IF distributed THEN
            -- the shards' CHECK calls it: the workers have it before their shards
            SELECT string_agg(r.result, '; ') INTO failed
              FROM pg_catalog.run_command_on_workers(
                       'BEGIN; SET LOCAL citus.enable_ddl_propagation = off; '
                       || pg_catalog.pg_get_functiondef('mnemo._check_log_row(integer, text, text, bigint, text, text, text, boolean, double precision, bigint, bigint, bigint, bigint, bigint, text, jsonb, text, integer, bigint, bigint, bigint)'::pg_catalog.regprocedure)
                       || '; COMMIT') r
             WHERE NOT r.success;
            IF failed IS NOT NULL THEN
                RAISE EXCEPTION 'mnemo._check_log_row could not be made on every worker: %', failed;
            END IF;
            -- and a worker has each table of the extension as its own, as
            -- CREATE EXTENSION made it there (Citus makes no shell of it)
            SELECT string_agg(r.result, '; ') INTO failed
              FROM pg_catalog.run_command_on_workers(
                       'BEGIN; SET LOCAL citus.enable_ddl_propagation = off; '
                       || array_to_string(ddl, '; ') || '; COMMIT') r
             WHERE NOT r.success;
            IF failed IS NOT NULL THEN
                RAISE EXCEPTION 'mnemo.log could not be made on every worker: %', failed;
            END IF;
            PERFORM pg_catalog.create_distributed_table('mnemo.log', 'session_id',
                                                        colocate_with => 'mnemo.sessions');
        END IF;
        EXECUTE $ddl$INSERT INTO mnemo.log (session_id, tenant, seq, part_index, id, role, created_at, agent,
                    model_id, provider_id, run_id, is_summary, tokens_input, tokens_output,
                    tokens_cache_read, tokens_cache_write, tokens_reasoning, cost, finish_reason,
                    part_id, part_type, content, tool_name, tool_call_id, tool_state, compacted_at,
                    started_at, completed_at, token_estimate)
        SELECT m.session_id, m.tenant, m.seq, coalesce(p.part_index, 0),
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.id END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.role END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.created_at END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.agent END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.model_id END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.provider_id END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.run_id END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.is_summary END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.tokens_input END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.tokens_output END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.tokens_cache_read END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.tokens_cache_write END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.tokens_reasoning END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.cost END,
               CASE WHEN p.part_index IS NULL OR p.part_index = 0 THEN m.finish_reason END,
               p.id, p.part_type, p.content, p.tool_name, p.tool_call_id, p.tool_state, p.compacted_at,
               p.started_at, p.completed_at, p.token_estimate
          FROM mnemo.messages m
          LEFT JOIN mnemo.message_parts p
            ON p.session_id = m.session_id AND p.tenant = m.tenant AND p.seq = m.seq$ddl$;
    END IF;
    -- out of the extension first, so that pg_dump's list of the tables whose
    -- rows it writes (extconfig) keeps no trace of them or their partitions
    FOR t IN
        SELECT c.oid::regclass
          FROM pg_catalog.pg_class c
         WHERE c.oid IN ('mnemo.messages'::regclass, 'mnemo.message_parts'::regclass)
            OR c.oid IN (SELECT i.inhrelid FROM pg_catalog.pg_inherits i
                          WHERE i.inhparent IN ('mnemo.messages'::regclass, 'mnemo.message_parts'::regclass))
         ORDER BY c.relispartition DESC
    LOOP
        EXECUTE format('ALTER EXTENSION mnemo DROP TABLE %s', t);
    END LOOP;
    EXECUTE 'DROP TABLE mnemo.message_parts';
    EXECUTE 'DROP TABLE mnemo.messages';
END
$$;
DROP FUNCTION mnemo._check_message(text, double precision, bigint, bigint, bigint, bigint, bigint, bigint);
DROP FUNCTION mnemo._check_part(text, integer, bigint, bigint, bigint);

/*
 * The log read as the tables of messages and of parts were: a worker makes
 * them too, over its mnemo.log.
 */
CREATE VIEW mnemo.messages WITH (security_invoker = true) AS
SELECT session_id, seq, id, role, created_at, agent, model_id, provider_id, run_id, is_summary,
       tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason, tenant
  FROM mnemo.log
 WHERE part_index = 0;
COMMENT ON VIEW mnemo.messages IS 'the messages: the part 0 rows of mnemo.log, with the message''s columns; seq is dense per session, in commit order; ids are unique within their session';
CREATE VIEW mnemo.message_parts WITH (security_invoker = true) AS
SELECT session_id, part_index, part_id AS id, part_type, content, tool_name, tool_call_id,
       tool_state, compacted_at, started_at, completed_at, token_estimate, tenant, seq
  FROM mnemo.log
 WHERE part_type IS NOT NULL;
COMMENT ON VIEW mnemo.message_parts IS 'the parts of each message: the rows of mnemo.log that hold one; id is the id its caller gave, NULL when derived (<message id>:<part_index>)';

SELECT pg_catalog.pg_extension_config_dump('mnemo.log', '');
-- and its partitions, on the partitioned layout, as a fresh install's
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN
        SELECT i.inhrelid::regclass
          FROM pg_catalog.pg_inherits i
          JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid AND c.relkind = 'r'
         WHERE i.inhparent = 'mnemo.log'::regclass
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(part, '');
    END LOOP;
END
$$;

CREATE FUNCTION mnemo.get_message(session_id text, message_id text) RETURNS mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_message';
COMMENT ON FUNCTION mnemo.get_message(text, text) IS 'one message row of a session; MN002 if it does not exist';
CREATE FUNCTION mnemo.get_messages(session_id text, since_message_id text DEFAULT NULL)
    RETURNS SETOF mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages';
COMMENT ON FUNCTION mnemo.get_messages(text, text) IS 'a session''s messages in seq order, optionally only those after since_message_id';
CREATE FUNCTION mnemo.get_messages_after(session_id text, after_seq bigint, "limit" integer DEFAULT NULL)
    RETURNS SETOF mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_after';
COMMENT ON FUNCTION mnemo.get_messages_after(text, bigint, integer) IS 'a session''s messages past after_seq in seq order, at most "limit" (all when NULL): a follower''s page, costing its rows';
CREATE FUNCTION mnemo.last_summary(session_id text) RETURNS mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_last_summary';
COMMENT ON FUNCTION mnemo.last_summary(text) IS 'the session''s most recent summary message, or NULL';
