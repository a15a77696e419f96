-- 010_schema: the catalog contract of the mnemo extension: tables, keys,
-- indexes, guard triggers, types, every function's signature, result type
-- and volatility, pinned search_path, no SECURITY DEFINER, comments,
-- and the privilege revoked from PUBLIC.
BEGIN;
SELECT plan(201);

--
-- tables
--
SELECT has_schema('mnemo');
-- (on the partitioned layout, doc/scale-out.md, the partitions aside)
SELECT set_eq($$
    SELECT c.relname::text FROM pg_class c
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
$$, ARRAY['sessions', 'messages', 'message_parts', 'context_items',
          'summary_nodes', 'summary_edges', 'file_references'],
   'Schema mnemo should have the correct tables');
SELECT has_table('mnemo', t, format('table mnemo.%s exists', t))
  FROM unnest(ARRAY['sessions', 'messages', 'message_parts', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references']) AS t;

-- primary keys: every one leads with session_id, except sessions (id) and
-- file_references (content_id)
SELECT col_is_pk('mnemo', 'sessions', ARRAY['id'], 'sessions: primary key (id)');
SELECT col_is_pk('mnemo', 'messages', ARRAY['session_id', 'seq'], 'messages: primary key (session_id, seq)');
SELECT col_is_pk('mnemo', 'message_parts', ARRAY['session_id', 'message_id', 'part_index'],
                 'message_parts: primary key (session_id, message_id, part_index)');
SELECT col_is_pk('mnemo', 'context_items', ARRAY['session_id', 'position'],
                 'context_items: primary key (session_id, position)');
SELECT col_is_pk('mnemo', 'summary_nodes', ARRAY['session_id', 'id'], 'summary_nodes: primary key (session_id, id)');
SELECT col_is_pk('mnemo', 'summary_edges', ARRAY['session_id', 'summary_id', 'ordinal'],
                 'summary_edges: primary key (session_id, summary_id, ordinal)');
SELECT col_is_pk('mnemo', 'file_references', ARRAY['content_id'], 'file_references: primary key (content_id)');
SELECT is_empty($$
    SELECT c.relname
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indrelid
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
     WHERE c.relnamespace = 'mnemo'::regnamespace AND i.indisprimary AND NOT c.relispartition
       AND c.relname NOT IN ('sessions', 'file_references')
       AND a.attname <> 'session_id'
$$, 'every primary key but those of sessions and file_references leads with session_id');

-- columns
SELECT columns_are('mnemo', 'sessions', ARRAY['id', 'parent_id', 'created_at', 'updated_at', 'model_id',
    'provider_id', 'agent', 'title', 'is_active', 'metadata', 'system_prompt', 'state', 'watched',
    'last_seq', 'last_position', 'ordinal']);
SELECT columns_are('mnemo', 'messages', ARRAY['session_id', 'seq', 'id', 'role', 'created_at', 'agent',
    'model_id', 'provider_id', 'run_id', 'is_summary', 'tokens_input', 'tokens_output',
    'tokens_cache_read', 'tokens_cache_write', 'tokens_reasoning', 'cost', 'finish_reason']);
SELECT columns_are('mnemo', 'message_parts', ARRAY['session_id', 'message_id', 'part_index', 'id',
    'part_type', 'content', 'tool_name', 'tool_call_id', 'tool_state', 'compacted_at', 'started_at',
    'completed_at', 'token_estimate']);
SELECT columns_are('mnemo', 'context_items', ARRAY['session_id', 'position', 'item_type', 'item_id',
    'seq', 'created_at']);
SELECT columns_are('mnemo', 'summary_nodes', ARRAY['session_id', 'id', 'kind', 'level', 'token_count',
    'seq_start', 'seq_end', 'created_at', 'superseded_by']);
SELECT columns_are('mnemo', 'summary_edges', ARRAY['session_id', 'summary_id', 'ordinal', 'item_type',
    'item_id']);
SELECT columns_are('mnemo', 'file_references', ARRAY['content_id', 'path', 'file_type', 'token_count',
    'exploration_summary', 'created_at', 'ordinal']);

-- the indexes the functions need, and no others
SELECT indexes_are('mnemo', 'sessions', ARRAY['sessions_pkey', 'sessions_ordinal_idx', 'sessions_parent_id_idx']);
SELECT indexes_are('mnemo', 'messages', ARRAY['messages_pkey', 'messages_id_key', 'messages_summary_idx']);
SELECT indexes_are('mnemo', 'message_parts', ARRAY['message_parts_pkey', 'message_parts_id_key', 'message_parts_search_idx']);
SELECT indexes_are('mnemo', 'context_items', ARRAY['context_items_pkey', 'context_items_session_id_item_id_key']);
SELECT indexes_are('mnemo', 'summary_nodes', ARRAY['summary_nodes_pkey']);
SELECT indexes_are('mnemo', 'summary_edges', ARRAY['summary_edges_pkey', 'summary_edges_item_idx']);
SELECT indexes_are('mnemo', 'file_references', ARRAY['file_references_pkey', 'file_references_path_idx']);
-- ids are unique across sessions; an item is in a session's context once
SELECT index_is_unique('mnemo', 'messages', 'messages_id_key');
SELECT index_is_unique('mnemo', 'message_parts', 'message_parts_id_key');
SELECT col_is_unique('mnemo', 'context_items', ARRAY['session_id', 'item_id']);

--
-- the append-only guard: a row trigger and a TRUNCATE trigger on every table
--
SELECT has_trigger('mnemo', t, g, format('mnemo.%s has trigger %s', t, g))
  FROM unnest(ARRAY['sessions', 'messages', 'message_parts', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references']) AS t,
       unnest(ARRAY['guard', 'guard_truncate']) AS g;
SELECT trigger_is('mnemo', t, g, 'mnemo', '_guard', format('mnemo.%s trigger %s runs mnemo._guard()', t, g))
  FROM unnest(ARRAY['sessions', 'messages', 'message_parts', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references']) AS t,
       unnest(ARRAY['guard', 'guard_truncate']) AS g;
-- guard: BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW; guard_truncate:
-- BEFORE TRUNCATE FOR EACH STATEMENT; both enabled in origin mode
SELECT is_empty($$
    SELECT c.relname, t.tgname
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'mnemo'::regnamespace AND NOT t.tgisinternal
       AND NOT ((t.tgname = 'guard' AND t.tgtype = (1 | 2 | 4 | 8 | 16)
                 OR t.tgname = 'guard_truncate' AND t.tgtype = (2 | 32))
                AND t.tgenabled = 'O')
$$, 'the guard triggers are BEFORE row (INSERT/UPDATE/DELETE) and BEFORE TRUNCATE, enabled');

-- pg_dump includes the rows of every table
SELECT set_eq($$
    SELECT unnest(extconfig)::regclass::text FROM pg_extension WHERE extname = 'mnemo'
$$, ARRAY['mnemo.sessions', 'mnemo.messages', 'mnemo.message_parts', 'mnemo.context_items',
          'mnemo.summary_nodes', 'mnemo.summary_edges', 'mnemo.file_references',
          'mnemo.sessions_ordinal_seq', 'mnemo.file_references_ordinal_seq'],
   'every table, and the sequences giving creation order, are registered with pg_extension_config_dump');

--
-- result types
--
SELECT has_composite('mnemo', 'message_ref', 'type mnemo.message_ref exists');
SELECT has_composite('mnemo', 'message_with_parts', 'type mnemo.message_with_parts exists');
SELECT has_composite('mnemo', 'context_item', 'type mnemo.context_item exists');
SELECT has_composite('mnemo', 'context_entry', 'type mnemo.context_entry exists');
SELECT has_composite('mnemo', 'context_budget', 'type mnemo.context_budget exists');
SELECT has_composite('mnemo', 'expansion', 'type mnemo.expansion exists');
SELECT has_composite('mnemo', 'search_hit', 'type mnemo.search_hit exists');

--
-- functions: names, signatures, result types, volatility
--
CREATE TEMP TABLE fns (name text, args text[], returns text, volatility text) ON COMMIT DROP;
INSERT INTO fns VALUES
  ('_guard', '{}', 'trigger', 'volatile'),
  ('version', '{}', 'text', 'immutable'),
  ('new_id', '{text}', 'text', 'volatile'),
  ('estimate_tokens', '{text}', 'integer', 'immutable'),
  ('create_session', '{text,text,text,text,text,text,jsonb,text}', 'mnemo.sessions', 'volatile'),
  ('get_session', '{text}', 'mnemo.sessions', 'stable'),
  ('get_or_create_session', '{text,text,text,text,text,text,jsonb,text}', 'mnemo.sessions', 'volatile'),
  ('list_sessions', '{text,boolean,integer,integer}', 'setof mnemo.sessions', 'stable'),
  ('soft_delete_session', '{text}', 'void', 'volatile'),
  ('purge_session', '{text}', 'bigint', 'volatile'),
  ('watch', '{text}', 'void', 'volatile'),
  ('unwatch', '{text}', 'void', 'volatile'),
  ('append_message', '{text,text,jsonb,text,text,text,text,text,boolean}', 'mnemo.message_ref', 'volatile'),
  ('append_messages', '{text,jsonb}', 'setof mnemo.message_ref', 'volatile'),
  ('append_part', '{text,jsonb}', 'integer', 'volatile'),
  ('update_part_status', '{text,text,bigint,bigint,bigint,text,text}', 'void', 'volatile'),
  ('update_message_tokens', '{text,jsonb,"double precision",text}', 'void', 'volatile'),
  ('tombstone_part', '{text}', 'bigint', 'volatile'),
  ('swap_context_items', '{text,text[],text}', 'bigint', 'volatile'),
  ('get_message', '{text}', 'mnemo.messages', 'stable'),
  ('get_messages', '{text,text}', 'setof mnemo.messages', 'stable'),
  ('get_parts', '{text}', 'setof mnemo.message_parts', 'stable'),
  ('get_messages_with_parts', '{text,text}', 'setof mnemo.message_with_parts', 'stable'),
  ('get_messages_with_parts_by_ids', '{text[]}', 'setof mnemo.message_with_parts', 'stable'),
  ('history', '{text,integer}', 'setof mnemo.message_with_parts', 'stable'),
  ('get_context_items', '{text}', 'setof mnemo.context_item', 'stable'),
  ('build_context', '{text,integer}', 'setof mnemo.context_entry', 'stable'),
  ('commit_summary', '{text,text,text,integer,text[],text,integer,text,text}', 'bigint', 'volatile'),
  ('expand_summary', '{text,boolean}', 'setof mnemo.expansion', 'stable'),
  ('summary_nodes', '{text,boolean}', 'setof mnemo.summary_nodes', 'stable'),
  ('context_report', '{text,integer}', 'mnemo.context_budget', 'stable'),
  ('last_summary', '{text}', 'mnemo.messages', 'stable'),
  ('store_file_reference', '{text,text,text,integer,text}', 'mnemo.file_references', 'volatile'),
  ('get_file_reference', '{text}', 'mnemo.file_references', 'stable'),
  ('get_file_reference_by_path', '{text}', 'mnemo.file_references', 'stable'),
  ('prune_tool_outputs', '{text,integer,integer,text[]}', 'integer', 'volatile'),
  ('search_history', '{text,text,integer}', 'setof mnemo.search_hit', 'stable'),
  ('_session_column', '{regclass}', 'name', 'stable'),
  ('_partition_by_session', '{regclass,integer}', 'void', 'volatile'),
  ('distribute', '{}', 'void', 'volatile');

SELECT functions_are('mnemo', ARRAY(SELECT name FROM fns));
SELECT has_function('mnemo', name, args, format('function mnemo.%s(%s) exists', name, array_to_string(args, ', ')))
  FROM fns ORDER BY name;
SELECT function_returns('mnemo', name, args, returns, format('mnemo.%s returns %s', name, returns))
  FROM fns ORDER BY name;
SELECT volatility_is('mnemo', name, args, volatility, format('mnemo.%s is %s', name, volatility))
  FROM fns ORDER BY name;

-- every function that runs SQL pins search_path; the four that run none
-- (estimate_tokens, version, new_id and the trigger) need not
SELECT is_empty($$
    SELECT p.oid::regprocedure::text
      FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace
       AND p.proname NOT IN ('estimate_tokens', 'version', 'new_id', '_guard')
       AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)
$$, 'every mnemo function that runs SQL has SET search_path = pg_catalog, pg_temp');
SELECT set_eq($$
    SELECT p.proname::text FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace AND p.proconfig IS NULL
$$, ARRAY['estimate_tokens', 'version', 'new_id', '_guard'],
   'only estimate_tokens, version, new_id and _guard run without a pinned search_path');
SELECT is_empty($$
    SELECT p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace AND p.prosecdef
$$, 'no mnemo function is SECURITY DEFINER');
-- the Citus set-up, the partitioned layout's rebuild and the catalog rule
-- they share only run catalog queries, DDL and Citus calls: plpgsql and sql
SELECT set_eq($$
    SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = 'mnemo'::regnamespace AND l.lanname <> 'c'
$$, ARRAY['mnemo.distribute()', 'mnemo._session_column(regclass)',
         'mnemo._partition_by_session(regclass,integer)'],
   'every mnemo function is native C but distribute, _session_column and _partition_by_session');
SELECT is_empty($$
    SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = 'mnemo'::regnamespace AND l.lanname = 'c'
       AND p.prosrc <> 'mnemo' || '_' || ltrim(p.proname, '_')
$$, 'every C function uses the explicit symbol mnemo_<name>');
SELECT ok(NOT has_function_privilege('public', 'mnemo.distribute()', 'EXECUTE'),
          'PUBLIC may not execute mnemo.distribute');
SELECT is_empty($$
    SELECT p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL
$$, 'every mnemo function has a COMMENT');
SELECT is_empty($$
    SELECT c.relname FROM pg_class c
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'r'
       AND obj_description(c.oid, 'pg_class') IS NULL
$$, 'every mnemo table has a COMMENT');

-- purge_session is revoked from PUBLIC (the SET ROLE test is in 020_sessions)
SELECT ok(NOT has_function_privilege('public', 'mnemo.purge_session(text)', 'EXECUTE'),
          'PUBLIC may not execute mnemo.purge_session');

SELECT * FROM finish();
ROLLBACK;
