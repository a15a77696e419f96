-- compaction.sql: what the compaction engine does, by hand: summarise the
-- oldest part of the context view, commit it in one call, read it back.
--   psql -v ON_ERROR_STOP=1 -d app -f examples/compaction.sql
-- The DO block at the end checks the results (ERROR on a wrong one).

SELECT id FROM mnemo.create_session('c1');
SELECT seq FROM mnemo.append_messages('c1', '[
  {"role":"user","id":"q1","parts":[{"type":"text","text":"Which files are in /etc?"}]},
  {"role":"assistant","id":"r1","parts":[{"type":"tool","tool_name":"ls","tool_call_id":"t1",
     "input":{"path":"/etc"},"tool_state":"completed","output":"hosts passwd"}]},
  {"role":"user","id":"q2","parts":[{"type":"text","text":"And what is in hosts?"}]}]');

-- a leaf summary replaces q1 and r1 in the context view (MN006 if another
-- compactor replaced them first; nothing is written then)
SELECT mnemo.commit_summary('c1', 'sum1', 'The user listed /etc: hosts, passwd.', 9,
                            ARRAY['q1', 'r1'], kind => 'leaf', level => 1);

SELECT "position", item_type, role, tokens, content FROM mnemo.build_context('c1', 1000);
--  position | item_type |   role    | tokens |               content
-- ----------+-----------+-----------+--------+--------------------------------------
--         1 | summary   | assistant |      9 | The user listed /etc: hosts, passwd.
--         3 | message   | user      |      5 | And what is in hosts?

SELECT * FROM mnemo.context_report('c1', 12);        -- what a 12-token budget leaves out

-- nothing is lost: the summary expands to the exact original messages
SELECT item_id, seq, role, parts FROM mnemo.expand_summary('c1', 'sum1', recursive => true);
-- and the whole log is searchable: r1 (in_context false) and the summary
SELECT message_id, seq, in_context FROM mnemo.search_history('c1', 'passwd');
-- and recall names the summary of the context that now covers r1
SELECT message_id, snippet, covered_by FROM mnemo.recall_search('c1', 'passwd');

-- the checks
DO $$
BEGIN
	ASSERT (SELECT array_agg(position || ' ' || item_type || ' ' || tokens || ' ' || content
							 ORDER BY position) FROM mnemo.build_context('c1', 1000))
		= ARRAY['1 summary 9 The user listed /etc: hosts, passwd.',
				'3 message 5 And what is in hosts?'];
	ASSERT (SELECT included_items = 1 AND omitted_items = 1 FROM mnemo.context_report('c1', 12));
	ASSERT (SELECT array_agg(item_id ORDER BY seq) FROM mnemo.expand_summary('c1', 'sum1', true))
		= ARRAY['q1', 'r1'];
	ASSERT (SELECT array_agg(message_id || ' ' || in_context ORDER BY seq)
			FROM mnemo.search_history('c1', 'passwd')) = ARRAY['r1 false', 'sum1 true'];
	ASSERT (SELECT array_agg(message_id || ' ' || coalesce(covered_by, '-') ORDER BY seq)
			FROM mnemo.recall_search('c1', 'passwd')) = ARRAY['r1 sum1', 'sum1 -'];
END $$;
