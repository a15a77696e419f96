-- session.sql: a session in psql.  Run it with
--   psql -v ON_ERROR_STOP=1 -d app -f examples/session.sql
-- in a database with CREATE EXTENSION mnemo done; the DO blocks at the end
-- check what it did, and fail (ERROR, exit status 3) on a wrong result.

SELECT id FROM mnemo.create_session('s1', model_id => 'gpt-4o', system_prompt => 'Be brief.');

-- one call per message: the message and all its parts, at the end of the context view
SELECT * FROM mnemo.append_message('s1', 'user', '[{"type":"text","text":"List /tmp"}]');

SELECT * FROM mnemo.append_message('s1', 'assistant',
  '[{"type":"tool","id":"p1","tool_name":"ls","tool_call_id":"call_1","input":{"path":"/tmp"}}]');
SELECT mnemo.update_part_status('s1', 'p1', tool_state => 'completed', output => 'a.txt b.txt');
SELECT mnemo.update_message_tokens('s1', id, '{"input":120,"output":18}', 0.0004, 'tool_calls')
  FROM mnemo.get_messages('s1') WHERE seq = 2;

-- later: the tool output is stale; tombstone it (the output stays stored)
SELECT mnemo.tombstone_part('s1', 'p1') > 0 AS tombstoned;

-- compaction: store a summary message, then swap it in for the span it covers
SELECT seq FROM mnemo.append_message('s1', 'assistant',
  '[{"type":"text","text":"The user listed /tmp: a.txt, b.txt."}]', id => 'sum1', is_summary => true);
SELECT mnemo.swap_context_items('s1', ARRAY(SELECT item_id FROM mnemo.get_context_items('s1')), 'sum1');

SELECT * FROM mnemo.get_context_items('s1');      -- one summary row, at position 1
-- the history: all three messages, unchanged, as rows, one per part beside its message
-- (the fastest full read; doc/sql.md lists the others)
SELECT seq, role, part_index, content FROM mnemo.get_messages_flat('s1');

-- the checks
DO $$
BEGIN
	ASSERT (SELECT array_agg(item_type || ' ' || item_id || ' @' || position)
			FROM mnemo.get_context_items('s1')) = ARRAY['summary sum1 @1'];
	ASSERT (SELECT count(*) FROM mnemo.get_messages('s1')) = 3;
	ASSERT (SELECT content ->> 'output' FROM mnemo.get_parts('s1',
			(SELECT id FROM mnemo.get_messages('s1') WHERE seq = 2))) = 'a.txt b.txt';
	ASSERT (SELECT compacted_at IS NOT NULL AND tool_state = 'completed'
			FROM mnemo.get_parts('s1', (SELECT id FROM mnemo.get_messages('s1') WHERE seq = 2))
			WHERE id = 'p1');
	ASSERT (SELECT tokens_input = 120 AND tokens_output = 18 AND finish_reason = 'tool_calls'
			FROM mnemo.get_messages('s1') WHERE seq = 2);
END $$;
