-- 010_schema: the catalog contract of the mnemo extension: tables, keys,
-- indexes, guard triggers, types, every function's signature, result type
-- and volatility, pinned search_path, no SECURITY DEFINER, comments,
-- and the privilege revoked from PUBLIC.
BEGIN;
SELECT plan(395);

--
-- tables
--
SELECT has_schema('mnemo');
-- (on the partitioned layout, doc/scale-out.md, the partitions aside)
SELECT set_eq($$
    SELECT c.relname::text FROM pg_class c
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
$$, ARRAY['sessions', 'log', 'context_items',
          'summary_nodes', 'summary_edges', 'file_references', 'blobs', 'tenants', 'compaction_claims',
          'search_progress', 'search_queue', 'search_documents', 'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
          'maps', 'map_items'],
   'Schema mnemo should have the correct tables');
SELECT has_table('mnemo', t, format('table mnemo.%s exists', t))
  FROM unnest(ARRAY['sessions', 'log', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references', 'blobs', 'tenants',
                    'compaction_claims', 'search_progress', 'search_queue', 'search_documents', 'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
          'maps', 'map_items']) AS t;

-- primary keys: every one leads with session_id and the tenant (a session
-- id is unique within its tenant), except sessions ((id, tenant): id is the
-- distribution column), file_references, blobs and tenants (the tenant)
SELECT col_is_pk('mnemo', 'sessions', ARRAY['id', 'tenant'],
                 'sessions: primary key (id, tenant)');
SELECT col_is_pk('mnemo', 'log', ARRAY['session_id', 'tenant', 'seq', 'part_index'],
                 'log: primary key (session_id, tenant, seq, part_index)');
SELECT col_is_pk('mnemo', 'context_items', ARRAY['session_id', 'tenant', 'generation', 'position'],
                 'context_items: primary key (session_id, tenant, generation, position)');
SELECT col_is_pk('mnemo', 'summary_nodes', ARRAY['session_id', 'tenant', 'id'],
                 'summary_nodes: primary key (session_id, tenant, id)');
SELECT col_is_pk('mnemo', 'summary_edges', ARRAY['session_id', 'tenant', 'summary_id', 'ordinal'],
                 'summary_edges: primary key (session_id, tenant, summary_id, ordinal)');
SELECT col_is_pk('mnemo', 'file_references', ARRAY['tenant', 'content_id'],
                 'file_references: primary key (tenant, content_id)');
SELECT col_is_pk('mnemo', 'blobs', ARRAY['tenant', 'sha256'], 'blobs: primary key (tenant, sha256)');
SELECT col_is_pk('mnemo', 'tenants', ARRAY['tenant'], 'tenants: primary key (tenant)');
SELECT col_is_pk('mnemo', 'compaction_claims', ARRAY['session_id', 'tenant'],
                 'compaction_claims: primary key (session_id, tenant)');
SELECT col_is_pk('mnemo', 'search_progress', ARRAY['session_id', 'tenant'],
                 'search_progress: primary key (session_id, tenant)');
SELECT col_is_pk('mnemo', 'search_queue', ARRAY['session_id', 'tenant', 'seq_from', 'seq_to'],
                 'search_queue: primary key (session_id, tenant, seq_from, seq_to)');
SELECT col_is_pk('mnemo', 'search_documents', ARRAY['session_id', 'tenant', 'seq', 'part_index'],
                 'search_documents: primary key (session_id, tenant, seq, part_index)');
SELECT col_is_pk('mnemo', 'checkpoints', ARRAY['session_id', 'tenant', 'label'],
                 'checkpoints: primary key (session_id, tenant, label)');
SELECT col_is_pk('mnemo', 'runs', ARRAY['session_id', 'tenant', 'run_id'],
                 'runs: primary key (session_id, tenant, run_id)');
SELECT col_is_pk('mnemo', 'pending_requests', ARRAY['session_id', 'tenant'],
                 'pending_requests: primary key (session_id, tenant)');
SELECT col_is_pk('mnemo', 'lineage', ARRAY['session_id', 'tenant', 'seq_from'],
                 'lineage: primary key (session_id, tenant, seq_from)');
SELECT col_is_pk('mnemo', 'discarded', ARRAY['session_id', 'tenant', 'seq_from'],
                 'discarded: primary key (session_id, tenant, seq_from)');
SELECT col_is_pk('mnemo', 'maps', ARRAY['session_id', 'tenant', 'map_id'],
                 'maps: primary key (session_id, tenant, map_id)');
SELECT col_is_pk('mnemo', 'map_items', ARRAY['session_id', 'tenant', 'map_id', 'ordinal'],
                 'map_items: primary key (session_id, tenant, map_id, ordinal)');
SELECT is_empty($$
    SELECT c.relname
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indrelid
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
      LEFT JOIN pg_attribute b ON b.attrelid = i.indrelid AND b.attnum = i.indkey[1]
     WHERE c.relnamespace = 'mnemo'::regnamespace AND i.indisprimary AND NOT c.relispartition
       AND c.relname NOT IN ('file_references', 'blobs', 'tenants')
       AND (a.attname <> CASE c.relname WHEN 'sessions' THEN 'id' ELSE 'session_id' END
            OR b.attname IS DISTINCT FROM 'tenant')
$$, 'every primary key but those of file_references, blobs and tenants leads with the session column, then the tenant');
-- the rule of hash partitioning and of Citus, and DESIGN.md's: every unique
-- index of a session-keyed table leads with session_id; none is on id alone
SELECT is_empty($$
    SELECT i.indexrelid::regclass::text
      FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = 'mnemo'::regnamespace AND i.indisunique AND NOT c.relispartition
       AND c.relname NOT IN ('sessions', 'file_references', 'blobs', 'tenants')
       AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                        WHERE a.attrelid = i.indrelid AND a.attname = 'session_id'
                          AND a.attnum = i.indkey[0])
$$, 'every unique index of a session-keyed table leads with session_id');

-- columns: every table carries its tenant (after its 0.1.0 columns; later ones follow it)
SELECT columns_are('mnemo', 'sessions', ARRAY['id', 'parent_id', 'created_at', 'updated_at', 'model_id',
    'provider_id', 'agent', 'title', 'is_active', 'metadata', 'system_prompt', 'state', 'watched',
    'tenant', 'context_generation', 'context_dead', 'fork_seq', 'fork_run',
    'forks', 'discards', 'context_tail_seq']);
SELECT columns_are('mnemo', 'log', ARRAY['session_id', 'tenant', 'seq', 'part_index', 'id', 'role',
    'created_at', 'agent', 'model_id', 'provider_id', 'run_id', 'is_summary', 'tokens_input',
    'tokens_output', 'tokens_cache_read', 'tokens_cache_write', 'tokens_reasoning', 'cost',
    'finish_reason', 'part_id', 'part_type', 'content', 'tool_name', 'tool_call_id', 'tool_state',
    'compacted_at', 'started_at', 'completed_at', 'token_estimate']);
-- the log read as the tables of messages and of parts of 0.12.0, column for column
SELECT views_are('mnemo', ARRAY['messages', 'message_parts'], 'the log''s two views');
SELECT columns_are('mnemo', 'messages', ARRAY['session_id', 'seq', 'id', 'role', 'created_at', 'agent',
    'model_id', 'provider_id', 'run_id', 'is_summary', 'tokens_input', 'tokens_output',
    'tokens_cache_read', 'tokens_cache_write', 'tokens_reasoning', 'cost', 'finish_reason', 'tenant']);
SELECT columns_are('mnemo', 'message_parts', ARRAY['session_id', 'part_index', 'id',
    'part_type', 'content', 'tool_name', 'tool_call_id', 'tool_state', 'compacted_at', 'started_at',
    'completed_at', 'token_estimate', 'tenant', 'seq']);
SELECT is((SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
            WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'v'
              AND c.reloptions @> '{security_invoker=true}'),
          ARRAY['message_parts', 'messages'],
          'both views read the log with their caller''s rights (security_invoker)');
SELECT columns_are('mnemo', 'context_items', ARRAY['session_id', 'position', 'item_type', 'item_id',
    'seq', 'created_at', 'tenant', 'generation']);
SELECT columns_are('mnemo', 'summary_nodes', ARRAY['session_id', 'id', 'kind', 'level', 'token_count',
    'seq_start', 'seq_end', 'created_at', 'superseded_by', 'depth', 'tenant']);
SELECT columns_are('mnemo', 'summary_edges', ARRAY['session_id', 'summary_id', 'ordinal', 'item_type',
    'item_id', 'tenant']);
SELECT columns_are('mnemo', 'file_references', ARRAY['content_id', 'path', 'file_type', 'token_count',
    'exploration_summary', 'created_at', 'ordinal', 'tenant']);
SELECT columns_are('mnemo', 'blobs', ARRAY['sha256', 'bytes', 'refs', 'created_at', 'tenant']);
SELECT columns_are('mnemo', 'tenants', ARRAY['tenant', 'channel', 'role_id']);
SELECT columns_are('mnemo', 'search_progress', ARRAY['session_id', 'indexed_seq', 'tenant']);
SELECT columns_are('mnemo', 'search_queue', ARRAY['session_id', 'seq_from', 'seq_to', 'tenant']);
SELECT columns_are('mnemo', 'search_documents', ARRAY['session_id', 'part_index', 'tsv', 'tenant', 'seq']);
SELECT columns_are('mnemo', 'compaction_claims', ARRAY['session_id', 'holder', 'claimed_at', 'expires_at',
    'tenant']);
SELECT columns_are('mnemo', 'checkpoints', ARRAY['session_id', 'label', 'seq', 'created_at', 'auto', 'tenant']);
SELECT columns_are('mnemo', 'runs', ARRAY['session_id', 'run_id', 'claimed_at', 'completed_at',
    'completion_seq', 'tenant']);
SELECT columns_are('mnemo', 'pending_requests', ARRAY['session_id', 'request', 'run_id', 'created_at',
    'tenant']);
SELECT columns_are('mnemo', 'lineage', ARRAY['session_id', 'seq_from', 'seq_to', 'ancestor_id', 'tenant']);
SELECT columns_are('mnemo', 'discarded', ARRAY['session_id', 'seq_from', 'seq_to', 'label', 'discarded_at',
    'tenant']);
SELECT columns_are('mnemo', 'maps', ARRAY['session_id', 'map_id', 'kind', 'template', 'schema', 'options',
    'item_count', 'finished', 'created_at', 'completed_at', 'tenant']);
SELECT columns_are('mnemo', 'map_items', ARRAY['session_id', 'map_id', 'ordinal', 'item', 'state', 'claims',
    'lease_holder', 'lease_expires', 'result', 'error_kind', 'error', 'attempts', 'sub_session_id',
    'completion_seq', 'completed_at', 'tenant']);
SELECT col_not_null('mnemo', t, 'tenant', format('mnemo.%s.tenant is NOT NULL', t))
  FROM unnest(ARRAY['sessions', 'log', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references', 'blobs', 'tenants',
                    'compaction_claims', 'search_progress', 'search_queue', 'search_documents', 'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
          'maps', 'map_items']) AS t;

-- the indexes the functions need, and no others
SELECT indexes_are('mnemo', 'sessions', ARRAY['sessions_pkey', 'sessions_created_idx', 'sessions_parent_id_idx']);
SELECT indexes_are('mnemo', 'log', ARRAY['log_pkey', 'log_id_key', 'log_part_id_key', 'log_summary_idx', 'log_user_idx']);
-- (context_items: the key, and the item ids a swap finds its items by so
-- that it costs its block, src/context/swap.c; appends write no context row, so
-- they pay for neither)
SELECT indexes_are('mnemo', 'context_items', ARRAY['context_items_pkey', 'context_items_item_idx']);
SELECT indexes_are('mnemo', 'summary_nodes', ARRAY['summary_nodes_pkey']);
SELECT indexes_are('mnemo', 'summary_edges', ARRAY['summary_edges_pkey', 'summary_edges_item_idx']);
SELECT indexes_are('mnemo', 'file_references', ARRAY['file_references_pkey', 'file_references_path_idx']);
SELECT indexes_are('mnemo', 'blobs', ARRAY['blobs_pkey']);
SELECT indexes_are('mnemo', 'tenants', ARRAY['tenants_pkey', 'tenants_channel_key']);
SELECT indexes_are('mnemo', 'compaction_claims', ARRAY['compaction_claims_pkey']);
SELECT indexes_are('mnemo', 'search_progress', ARRAY['search_progress_pkey']);
SELECT indexes_are('mnemo', 'search_queue', ARRAY['search_queue_pkey']);
SELECT indexes_are('mnemo', 'search_documents', ARRAY['search_documents_pkey', 'search_documents_tsv_idx']);
SELECT indexes_are('mnemo', 'checkpoints', ARRAY['checkpoints_pkey']);
SELECT indexes_are('mnemo', 'runs', ARRAY['runs_pkey', 'runs_session_id_tenant_completion_seq_key']);
SELECT indexes_are('mnemo', 'pending_requests', ARRAY['pending_requests_pkey']);
SELECT indexes_are('mnemo', 'lineage', ARRAY['lineage_pkey']);
SELECT indexes_are('mnemo', 'discarded', ARRAY['discarded_pkey']);
SELECT indexes_are('mnemo', 'maps', ARRAY['maps_pkey']);
SELECT indexes_are('mnemo', 'map_items', ARRAY['map_items_pkey', 'map_items_session_id_tenant_map_id_completion_seq_key',
                                               'map_items_open_idx']);
-- part indexes are unique per message (by its seq: the log's primary key);
-- a message's id is unique in its session, on its part 0 row, the only one
-- holding it; a part's id is stored only when its caller gave it, and only
-- those ids are in their unique index
SELECT index_is_unique('mnemo', 'log', 'log_id_key');
SELECT is((SELECT pg_get_expr(indpred, indrelid) FROM pg_index
            WHERE indexrelid = 'mnemo.log_id_key'::regclass), '(id IS NOT NULL)',
          'log_id_key holds the message ids, of part 0 rows');
SELECT col_is_null('mnemo', 'log', 'part_id', 'log.part_id is NULL where a part''s id is derived');
SELECT index_is_unique('mnemo', 'log', 'log_part_id_key');
SELECT is((SELECT pg_get_expr(indpred, indrelid) FROM pg_index
            WHERE indexrelid = 'mnemo.log_part_id_key'::regclass), '(part_id IS NOT NULL)',
          'log_part_id_key holds only the ids stored');
-- a completion order is given once per session
SELECT col_is_unique('mnemo', 'runs', ARRAY['session_id', 'tenant', 'completion_seq']);
SELECT col_is_unique('mnemo', 'map_items', ARRAY['session_id', 'tenant', 'map_id', 'completion_seq']);

--
-- no triggers: privileges keep the log append-only (Citus would not
-- propagate a trigger to the shards anyway)
--
SELECT is_empty($$
    SELECT c.relname, t.tgname
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE c.relnamespace = 'mnemo'::regnamespace AND NOT t.tgisinternal
$$, 'no mnemo table has a trigger');

--
-- row-level security on every table, one policy on the tenant
--
SELECT is_empty($$
    SELECT c.relname FROM pg_class c
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'r' AND NOT c.relrowsecurity
$$, 'every mnemo table has row-level security enabled');
SELECT policies_are('mnemo', t, ARRAY['tenant_rows'], format('mnemo.%s has the one policy tenant_rows', t))
  FROM unnest(ARRAY['sessions', 'log', 'context_items',
                    'summary_nodes', 'summary_edges', 'file_references', 'blobs', 'tenants',
                    'compaction_claims', 'search_progress', 'search_queue', 'search_documents', 'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
          'maps', 'map_items']) AS t;
SELECT is_empty($$
    SELECT tablename FROM pg_policies
     WHERE schemaname = 'mnemo'
       AND NOT (cmd = 'ALL' AND qual = 'mnemo.tenant_visible(tenant)'
                AND with_check = 'mnemo.tenant_visible(tenant)' AND roles = '{public}')
$$, 'every policy is USING and WITH CHECK mnemo.tenant_visible(tenant), for every role and command');
-- nothing on the tables for PUBLIC
SELECT is_empty($$
    SELECT c.relname FROM pg_class c
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'S')
       AND (has_table_privilege('public', c.oid, 'SELECT') OR has_table_privilege('public', c.oid, 'INSERT')
            OR has_table_privilege('public', c.oid, 'UPDATE') OR has_table_privilege('public', c.oid, 'DELETE'))
$$, 'PUBLIC holds no privilege on any mnemo table or sequence');

-- pg_dump includes the rows of every table
SELECT set_eq($$
    SELECT r::regclass::text FROM pg_extension, unnest(extconfig) r
     WHERE extname = 'mnemo' AND NOT EXISTS (SELECT FROM pg_inherits WHERE inhrelid = r)
$$, ARRAY['mnemo.sessions', 'mnemo.log', 'mnemo.context_items',
          'mnemo.summary_nodes', 'mnemo.summary_edges', 'mnemo.file_references', 'mnemo.blobs', 'mnemo.tenants',
          'mnemo.search_progress', 'mnemo.search_queue', 'mnemo.search_documents', 'mnemo.file_references_ordinal_seq',
          'mnemo.checkpoints', 'mnemo.runs', 'mnemo.pending_requests', 'mnemo.lineage', 'mnemo.discarded', 'mnemo.maps', 'mnemo.map_items'],
   'every table but compaction_claims (a lease does not outlive its compactor), and the sequence giving file store order, are registered with pg_extension_config_dump');
-- in the hash-partitioned layout the rows are in the partitions
SELECT set_eq($$
    SELECT i.inhrelid::regclass::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid AND c.relkind = 'r'
     WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relname NOT LIKE 'compaction\_claims\_p%'
$$, $$
    SELECT r::regclass::text FROM pg_extension, unnest(extconfig) r
     WHERE extname = 'mnemo' AND EXISTS (SELECT FROM pg_inherits WHERE inhrelid = r)
$$, 'so are the partitions of those tables, where they are partitioned');

--
-- result types
--
SELECT has_composite('mnemo', 'message_ref', 'type mnemo.message_ref exists');
SELECT has_composite('mnemo', 'message_with_parts', 'type mnemo.message_with_parts exists');
SELECT has_composite('mnemo', 'message_flat', 'type mnemo.message_flat exists');
SELECT has_composite('mnemo', 'context_item', 'type mnemo.context_item exists');
SELECT has_composite('mnemo', 'context_entry', 'type mnemo.context_entry exists');
SELECT has_composite('mnemo', 'context_budget', 'type mnemo.context_budget exists');
SELECT has_composite('mnemo', 'expansion', 'type mnemo.expansion exists');
SELECT has_composite('mnemo', 'search_hit', 'type mnemo.search_hit exists');
SELECT has_composite('mnemo', 'compaction_block', 'type mnemo.compaction_block exists');
SELECT has_composite('mnemo', 'session', 'type mnemo.session exists');

--
-- functions: names, signatures, result types, volatility
--
CREATE TEMP TABLE fns (name text, args text[], returns text, volatility text) ON COMMIT DROP;
INSERT INTO fns VALUES
  ('tenant_visible', '{text}', 'boolean', 'stable'),
  ('version', '{}', 'text', 'immutable'),
  ('new_id', '{text}', 'text', 'volatile'),
  ('estimate_tokens', '{text}', 'integer', 'immutable'),
  ('create_session', '{text,text,text,text,text,text,jsonb,text,bigint}', 'mnemo.session', 'volatile'),
  ('get_session', '{text}', 'mnemo.session', 'stable'),
  ('get_or_create_session', '{text,text,text,text,text,text,jsonb,text}', 'mnemo.session', 'volatile'),
  ('list_sessions', '{text,boolean,integer,integer}', 'setof mnemo.session', 'stable'),
  ('soft_delete_session', '{text}', 'void', 'volatile'),
  ('purge_session', '{text}', 'bigint', 'volatile'),
  ('watch', '{text}', 'text', 'volatile'),
  ('unwatch', '{text}', 'void', 'volatile'),
  ('append_message', '{text,text,jsonb,text,text,text,text,text,boolean}', 'mnemo.message_ref', 'volatile'),
  ('append_messages', '{text,jsonb}', 'setof mnemo.message_ref', 'volatile'),
  ('append_part', '{text,text,jsonb}', 'integer', 'volatile'),
  ('update_part_status', '{text,text,text,bigint,bigint,bigint,text,text}', 'void', 'volatile'),
  ('update_message_tokens', '{text,text,jsonb,"double precision",text}', 'void', 'volatile'),
  ('tombstone_part', '{text,text}', 'bigint', 'volatile'),
  ('swap_context_items', '{text,text[],text}', 'bigint', 'volatile'),
  ('get_message', '{text,text}', 'mnemo.messages', 'stable'),
  ('get_messages', '{text,text}', 'setof mnemo.messages', 'stable'),
  ('get_messages_after', '{text,bigint,integer}', 'setof mnemo.messages', 'stable'),
  ('get_parts', '{text,text}', 'setof mnemo.message_part', 'stable'),
  ('get_messages_with_parts', '{text,text}', 'setof mnemo.message_with_parts', 'stable'),
  ('get_messages_flat', '{text,text}', 'setof mnemo.message_flat', 'stable'),
  ('get_messages_with_parts_by_ids', '{text,text[]}', 'setof mnemo.message_with_parts', 'stable'),
  ('history', '{text,integer}', 'setof mnemo.message_with_parts', 'stable'),
  ('get_context_items', '{text}', 'setof mnemo.context_item', 'stable'),
  ('build_context', '{text,integer}', 'setof mnemo.context_entry', 'stable'),
  ('commit_summary', '{text,text,text,integer,text[],text,integer,text,text,text,bigint,text[],jsonb,integer}', 'bigint', 'volatile'),
  ('expand_summary', '{text,text,boolean}', 'setof mnemo.expansion', 'stable'),
  ('summary_nodes', '{text,boolean}', 'setof mnemo.summary_nodes', 'stable'),
  ('context_report', '{text,integer}', 'mnemo.context_budget', 'stable'),
  ('turn_context', '{text,integer}', 'setof mnemo.turn_context_row', 'stable'),
  ('last_summary', '{text}', 'mnemo.messages', 'stable'),
  ('store_file_reference', '{text,text,text,integer,text}', 'mnemo.file_references', 'volatile'),
  ('get_file_reference', '{text}', 'mnemo.file_references', 'stable'),
  ('get_file_reference_by_path', '{text}', 'mnemo.file_references', 'stable'),
  ('prune_tool_outputs', '{text,integer,integer,text[]}', 'integer', 'volatile'),
  ('search_history', '{text,text,integer,boolean}', 'setof mnemo.search_hit', 'volatile'),
  ('index_search', '{text,integer}', 'bigint', 'volatile'),
  ('search_pending', '{text}', 'bigint', 'stable'),
  ('recall_search', '{text,text,boolean,text,integer,bigint}', 'setof record', 'volatile'),
  ('recall_expand', '{text,text,integer,integer}', 'setof mnemo.recall_item', 'stable'),
  ('compaction_block', '{text,text,integer,integer,integer,integer,integer,integer}', 'setof mnemo.compaction_block', 'stable'),
  ('file_id_footer', '{text,text[]}', 'text', 'immutable'),
  ('truncate_summary', '{text,integer}', 'text', 'immutable'),
  ('claim_compaction', '{text,text,integer}', 'boolean', 'volatile'),
  ('compaction_holder', '{text}', 'text', 'stable'),
  ('release_compaction', '{text,text,text,bigint,bigint,integer,text,text}', 'boolean', 'volatile'),
  ('add_checkpoint', '{text,text,boolean,bigint,bigint}', 'mnemo.checkpoints', 'volatile'),
  ('list_checkpoints', '{text}', 'setof mnemo.checkpoints', 'stable'),
  ('claim_run', '{text,text}', 'mnemo.runs', 'volatile'),
  ('complete_run', '{text,text}', 'mnemo.runs', 'volatile'),
  ('snapshot', '{text,text}', 'setof mnemo.message_with_parts', 'stable'),
  ('set_pending_request', '{text,jsonb,text}', 'void', 'volatile'),
  ('clear_pending_request', '{text}', 'boolean', 'volatile'),
  ('load_pending_request', '{text}', 'mnemo.pending_requests', 'stable'),
  ('update_state', '{text,jsonb}', 'jsonb', 'volatile'),
  ('get_state', '{text}', 'jsonb', 'stable'),
  ('fork_session', '{text,text,text}', 'mnemo.session', 'volatile'),
  ('resume_session', '{text,text}', 'bigint', 'volatile'),
  ('list_discarded', '{text}', 'setof mnemo.message_with_parts', 'stable'),
  ('create_map', '{text,text,jsonb,text,jsonb,jsonb,text}', 'mnemo.maps', 'volatile'),
  ('claim_map_items', '{text,text,text,integer,integer}', 'setof mnemo.map_items', 'volatile'),
  ('complete_map_item', '{text,text,integer,text,jsonb,integer,text}', 'integer', 'volatile'),
  ('fail_map_item', '{text,text,integer,text,text,text,integer,text}', 'integer', 'volatile'),
  ('map_status', '{text,text}', 'record', 'stable'),
  ('map_results', '{text,text}', 'setof mnemo.map_items', 'stable'),
  ('list_maps', '{text}', 'setof mnemo.maps', 'stable'),
  ('find_map', '{text}', 'setof mnemo.maps', 'stable'),
  ('_session_column', '{regclass}', 'name', 'stable'),
  ('_session_functions', '{}', 'setof record', 'stable'),
  ('_partition_by_session', '{regclass,integer}', 'void', 'volatile'),
  ('_check_session', '{bigint,bigint,jsonb,jsonb,bigint,bigint,bigint}', 'boolean', 'immutable'),
  ('_check_log_row', '{integer,text,text,bigint,text,text,text,boolean,double precision,bigint,bigint,bigint,bigint,bigint,text,jsonb,text,integer,bigint,bigint,bigint}', 'boolean', 'immutable'),
  ('_check_context_item', '{text,bigint}', 'boolean', 'immutable'),
  ('_base64', '{bytea}', 'text', 'immutable'),
  ('distribute', '{}', 'void', 'volatile'),
  ('reassign_tenant', '{text,name}', 'bigint', 'volatile');

SELECT functions_are('mnemo', ARRAY(SELECT name FROM fns));
SELECT has_function('mnemo', name, args, format('function mnemo.%s(%s) exists', name, array_to_string(args, ', ')))
  FROM fns ORDER BY name;
SELECT function_returns('mnemo', name, args, returns, format('mnemo.%s returns %s', name, returns))
  FROM fns ORDER BY name;
SELECT volatility_is('mnemo', name, args, volatility, format('mnemo.%s is %s', name, volatility))
  FROM fns ORDER BY name;

-- every function that runs SQL pins search_path; the seven that run none
-- (estimate_tokens, version, new_id, tenant_visible, file_id_footer,
-- truncate_summary, _base64) need not, nor may the CHECK functions (_check_*): a
-- pinned setting would wrap every row's check in a GUC save and restore
SELECT is_empty($$
    SELECT p.oid::regprocedure::text
      FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace
       AND p.proname NOT IN ('estimate_tokens', 'version', 'new_id', 'tenant_visible',
                             'file_id_footer', 'truncate_summary', '_base64')
       AND p.proname NOT LIKE '\_check\_%'
       AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)
$$, 'every mnemo function that runs SQL has SET search_path = pg_catalog, pg_temp');
SELECT set_eq($$
    SELECT p.proname::text FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace AND p.proconfig IS NULL
$$, ARRAY['estimate_tokens', 'version', 'new_id', 'tenant_visible', 'file_id_footer', 'truncate_summary',
          '_base64', '_check_session', '_check_log_row', '_check_context_item'],
   'only estimate_tokens, version, new_id, tenant_visible, file_id_footer, truncate_summary, _base64 and the CHECK functions run without a pinned search_path');
SELECT is_empty($$
    SELECT p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'mnemo'::regnamespace AND p.prosecdef
$$, 'no mnemo function is SECURITY DEFINER');
-- the Citus set-up, the partitioned layout's rebuild and the catalog rule
-- they share only run catalog queries, DDL and Citus calls: plpgsql and sql
SELECT set_eq($$
    SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = 'mnemo'::regnamespace AND l.lanname <> 'c'
$$, ARRAY['mnemo.distribute()', 'mnemo._session_column(regclass)', 'mnemo._session_functions()',
         'mnemo._partition_by_session(regclass,integer)'],
   'every mnemo function is native C but distribute and the _ functions it shares with the partitioned layout');
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
