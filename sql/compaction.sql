-- Compaction, the deterministic half: compaction_block, file_id_footer,
-- truncate_summary (Level 3), claim_compaction / release_compaction and
-- commit_summary's holder.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('cb');
SELECT seq FROM mnemo.append_messages('cb', '[
  {"role":"user","id":"cb_u1","parts":[{"type":"text","text":"Read the config and fix the parser"}]},
  {"role":"assistant","id":"cb_a1","parts":[{"type":"text","text":"Reading it."},
     {"type":"tool","id":"cb_t1","tool_name":"read","tool_call_id":"c1","input":{"path":"parser.c"},"output":"int parse(void);"}]},
  {"role":"user","id":"cb_u2","parts":[{"type":"file_ref","content_id":"sha256:0123456789abcdef","path":"/src/big.c","file_type":"c","token_count":9000,"summary":"the parser"}]},
  {"role":"assistant","id":"cb_a2","parts":[{"type":"text","text":"See file_0a1b2c3d4e and file_0a1b2c3d4e again"}]},
  {"role":"user","id":"cb_u3","parts":[{"type":"text","text":"three"}]},
  {"role":"assistant","id":"cb_a3","parts":[{"type":"text","text":"héllo wörld, a longer answer to cut"}]},
  {"role":"user","id":"cb_u4","parts":[{"type":"text","text":"four"}]},
  {"role":"assistant","id":"cb_a4","parts":[{"type":"text","text":"four done"}]},
  {"role":"user","id":"cb_u5","parts":[{"type":"text","text":"five"}]},
  {"role":"assistant","id":"cb_a5","parts":[{"type":"text","text":"five done"}]}]');

-- the fresh tail: from the second most recent user message (cb_u4) on, and
-- the last tail_messages messages; the block is everything older, oldest first
SELECT kind, depth, item_ids, tokens, file_ids FROM mnemo.compaction_block('cb', tail_messages => 2);
SELECT content FROM mnemo.compaction_block('cb', tail_messages => 2);
-- the transcript is build_context's rendering, its tokens the one estimator
SELECT b.tokens = mnemo.estimate_tokens(b.content) AS one_estimator,
       b.content LIKE '%' || (SELECT content FROM mnemo.build_context('cb', 100000) WHERE item_id = 'cb_a1') || '%' AS one_renderer
  FROM mnemo.compaction_block('cb', tail_messages => 2) b;
-- a token cap: the first min_items always, then more only while under the cap
SELECT item_ids FROM mnemo.compaction_block('cb', tail_messages => 2, max_tokens => 1);
SELECT item_ids FROM mnemo.compaction_block('cb', tail_messages => 2, max_tokens => 1, min_items => 2);
SELECT item_ids FROM mnemo.compaction_block('cb', tail_messages => 2, max_tokens => 75);
-- a longer tail protects more: 6 messages leave four, 8 leave two (no block)
SELECT item_ids FROM mnemo.compaction_block('cb', tail_messages => 6);
SELECT count(*) AS blocks FROM mnemo.compaction_block('cb');
-- item_chars cuts each item (by characters), not the file ids
SELECT content, file_ids FROM mnemo.compaction_block('cb', tail_messages => 2, item_chars => 7);

-- commit the leaf; the next leaf block starts after the summary
SELECT mnemo.commit_summary('cb', 'cb_s1', 'u1 to a2', 4, ARRAY['cb_u1', 'cb_a1', 'cb_u2', 'cb_a2']);
SELECT kind, item_ids FROM mnemo.compaction_block('cb', tail_messages => 2, min_items => 2);
SELECT mnemo.commit_summary('cb', 'cb_s2', 'u3 and a3', 3, ARRAY['cb_u3', 'cb_a3']);
SELECT id, kind, depth FROM mnemo.summary_nodes('cb') ORDER BY seq_start;
-- condensation: summary nodes of one depth, oldest first
SELECT count(*) AS blocks FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 2);
SELECT kind, depth, item_ids, content FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 2, min_items => 2);
-- a tail longer than the messages protects the messages, not the summaries
SELECT item_ids FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 50, min_items => 2);
SELECT mnemo.commit_summary('cb', 'cb_c1', 'u1 to a3', 4, ARRAY['cb_s1', 'cb_s2'], 'condensed', 1);
SELECT id, kind, depth, superseded_by FROM mnemo.summary_nodes('cb', true) ORDER BY seq_start, depth;
-- a block never crosses a summary of another depth, nor a message
SELECT seq FROM mnemo.append_messages('cb', '[
  {"role":"user","id":"cb_u6","parts":[{"type":"text","text":"six"}]},
  {"role":"assistant","id":"cb_a6","parts":[{"type":"text","text":"six done"}]},
  {"role":"user","id":"cb_u7","parts":[{"type":"text","text":"seven"}]}]');
SELECT mnemo.commit_summary('cb', 'cb_s3', 'u4 and a4', 3, ARRAY['cb_u4', 'cb_a4']);
SELECT mnemo.commit_summary('cb', 'cb_s4', 'u5 and a5', 3, ARRAY['cb_u5', 'cb_a5']);
SELECT item_type, item_id FROM mnemo.get_context_items('cb');
SELECT depth, item_ids FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 0, min_items => 2);
SELECT mnemo.commit_summary('cb', 'cb_x', 'x', 1, ARRAY['cb_s3', 'cb_s4'], 'condensed', 1);
SELECT count(*) AS blocks FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 0, min_items => 2);
SELECT id, depth FROM mnemo.summary_nodes('cb') ORDER BY seq_start;
-- depth 1 and depth 1 now: a condensation of condensations has depth 2
SELECT depth, item_ids FROM mnemo.compaction_block('cb', 'condensed', tail_messages => 0, min_items => 2);
SELECT mnemo.commit_summary('cb', 'cb_y', 'y', 1, ARRAY['cb_c1', 'cb_x'], 'condensed', 3);
SELECT id, depth FROM mnemo.summary_nodes('cb');
-- the footers of the summaries being condensed are file ids of the block
SELECT id FROM mnemo.create_session('cf');
SELECT seq FROM mnemo.append_messages('cf', '[
  {"role":"user","id":"cf_u1","parts":[{"type":"text","text":"a"}]},
  {"role":"user","id":"cf_u2","parts":[{"type":"text","text":"b"}]},
  {"role":"user","id":"cf_u3","parts":[{"type":"text","text":"c"}]},
  {"role":"user","id":"cf_u4","parts":[{"type":"text","text":"d"}]}]');
SELECT mnemo.commit_summary('cf', 'cf_s1', E'about a\n\n[LCM File IDs: sha256:aaaa, odd-id.txt]', 5, ARRAY['cf_u1']);
SELECT mnemo.commit_summary('cf', 'cf_s2', E'about b, see file_00112233\n\n[LCM File IDs: file_00112233]', 5, ARRAY['cf_u2']);
SELECT item_ids, file_ids FROM mnemo.compaction_block('cf', 'condensed', tail_messages => 0, min_items => 2);
-- empty view, bare summaries, missing sessions, bad options
SELECT id FROM mnemo.create_session('ce');
SELECT count(*) AS blocks FROM mnemo.compaction_block('ce');
SELECT * FROM mnemo.compaction_block('ce_nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block('cb', 'twig');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block('cb', tail_messages => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block('cb', max_tokens => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block('cb', min_items => 1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.compaction_block('cb', item_chars => 0);
\echo :LAST_ERROR_SQLSTATE

-- the footer: ids found in the text (content ids, footers, the seed's and
-- sha256 forms in prose), then the ones given; replaced, never stacked
SELECT mnemo.file_id_footer('nothing here');
SELECT mnemo.file_id_footer(E'[FILE: a]\nContent-ID: sha256:abc\nType: c', ARRAY['file_0123456789']);
SELECT mnemo.file_id_footer('x file_0123456789 y sha256:00112233445566778899 z', ARRAY['sha256:abc']);
SELECT mnemo.file_id_footer(repeat('f', 64) || ' and ' || repeat('f', 63) || ' and xfile_01234567 and file_0123');
SELECT mnemo.file_id_footer(mnemo.file_id_footer('see file_0123456789', ARRAY['b.txt']), ARRAY['b.txt'])
     = mnemo.file_id_footer('see file_0123456789', ARRAY['b.txt']) AS idempotent;
SELECT mnemo.file_id_footer(E'old\n\n[LCM File IDs: a.txt]', ARRAY['b.txt']);
-- ids in a text that a footer could not carry are not ids (a Content-ID
-- line of a comma list, a "]" in it): left out, so the footer reads back
-- as written and the function stays idempotent; spaces around are trimmed
SELECT mnemo.file_id_footer(E'Content-ID: a, b]');
SELECT mnemo.file_id_footer(mnemo.file_id_footer(E'Content-ID: a, b]')) = mnemo.file_id_footer(E'Content-ID: a, b]') AS idempotent;
SELECT mnemo.file_id_footer(E'Content-ID:   spaced.txt  \nContent-ID: tab\there\nContent-ID: ' || repeat('x', 257));
SELECT mnemo.file_id_footer(mnemo.file_id_footer(E'Content-ID:   spaced.txt  \nContent-ID: tab\there'))
     = mnemo.file_id_footer(E'Content-ID:   spaced.txt  \nContent-ID: tab\there') AS idempotent_trimmed;
SELECT mnemo.file_id_footer('x', ARRAY['a, b']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.file_id_footer('x', ARRAY['a]']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.file_id_footer('x', ARRAY[NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.file_id_footer('x', ARRAY['']);
\echo :LAST_ERROR_SQLSTATE
-- 20,000 ids, each named twice, and the extras: each listed once, in
-- first-seen order (a hash keeps the test of each linear in the ids)
WITH t AS (SELECT string_agg(format('file_%s', lpad(to_hex(g % 20000), 8, '0')), ' ' ORDER BY g) AS text
           FROM generate_series(0, 39999) g)
SELECT mnemo.file_id_footer(t.text, ARRAY['file_00000000', 'extra.txt', 'extra.txt'])
       = t.text || E'\n\n[LCM File IDs: ' ||
         (SELECT string_agg(format('file_%s', lpad(to_hex(g), 8, '0')), ', ' ORDER BY g)
          FROM generate_series(0, 19999) g) || ', extra.txt]' AS each_once_in_order
FROM t;
-- a line of 40,000 footer starts and no ']' names no id (its end and last
-- ']' are looked up once, not once per start)
SELECT mnemo.file_id_footer(repeat('[LCM File IDs: ', 40000)) = repeat('[LCM File IDs: ', 40000) AS no_ids;

-- Level 3: what fits comes back whole, with its footer
SELECT mnemo.truncate_summary('short and sweet, file_0123456789');
-- what does not is cut to max_tokens, footer included, and the footer names
-- the ids of the part cut away too
WITH t AS (SELECT mnemo.truncate_summary(repeat('word ', 2000) || E'\nContent-ID: sha256:feed\nend') AS s)
SELECT mnemo.estimate_tokens(s) AS tokens, left(s, 44) AS head, right(s, 40) AS tail FROM t;
WITH t AS (SELECT mnemo.truncate_summary(repeat('wörd ', 500), 20) AS s)
SELECT mnemo.estimate_tokens(s) AS tokens, s FROM t;
-- a footer longer than the budget is kept whole; the prose goes
SELECT mnemo.truncate_summary('long prose file_0123456789 file_0123456788 file_0123456787', 5);
-- deterministic: the same input, the same output
SELECT mnemo.truncate_summary(repeat('abc ', 1000)) = mnemo.truncate_summary(repeat('abc ', 1000)) AS same;
SELECT mnemo.truncate_summary('x', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.truncate_summary(NULL);
\echo :LAST_ERROR_SQLSTATE

-- The claim: one holder at a time; the holder renews; release frees it
SELECT id FROM mnemo.create_session('cl');
SELECT seq FROM mnemo.append_messages('cl', '[
  {"role":"user","id":"cl_u1","parts":[{"type":"text","text":"a"}]},
  {"role":"assistant","id":"cl_a1","parts":[{"type":"text","text":"b"}]},
  {"role":"user","id":"cl_u2","parts":[{"type":"text","text":"c"}]}]');
SELECT mnemo.claim_compaction('cl', 'worker-a') AS a;
SELECT mnemo.claim_compaction('cl', 'worker-b') AS b;
SELECT mnemo.claim_compaction('cl', 'worker-a', 120000) AS a_renews;
SELECT holder, expires_at - claimed_at >= 120000 AS renewed FROM mnemo.compaction_claims WHERE session_id = 'cl';
-- only the holder commits; anyone else gets MN006 and nothing is written
SELECT mnemo.commit_summary('cl', 'cl_sb', 'b', 1, ARRAY['cl_u1', 'cl_a1'], holder => 'worker-b');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS summaries FROM mnemo.messages WHERE session_id = 'cl' AND is_summary;
SELECT mnemo.commit_summary('cl', 'cl_sa', 'a', 1, ARRAY['cl_u1', 'cl_a1'], holder => 'worker-a');
SELECT mnemo.release_compaction('cl', 'worker-b') AS b_releases;
SELECT mnemo.release_compaction('cl', 'worker-a') AS a_releases;
SELECT mnemo.release_compaction('cl', 'worker-a') AS a_again;
SELECT mnemo.claim_compaction('cl', 'worker-b') AS b;
-- a holder that died: its claim expires and the next one takes it over
SELECT mnemo.claim_compaction('cl', 'worker-b', 1) AS b_renews_briefly;
SELECT pg_sleep(0.02);
SELECT mnemo.claim_compaction('cl', 'worker-c') AS c_after_expiry;
SELECT mnemo.commit_summary('cl', 'cl_sb2', 'b', 1, ARRAY['cl_u2'], holder => 'worker-b');
\echo :LAST_ERROR_SQLSTATE
-- an expired claim nobody took over still lets its holder commit
SELECT mnemo.claim_compaction('cl', 'worker-c', 1) AS c_briefly;
SELECT pg_sleep(0.02);
SELECT mnemo.commit_summary('cl', 'cl_sc', 'c', 1, ARRAY['cl_u2'], holder => 'worker-c') > 0 AS c_commits;
SELECT mnemo.claim_compaction('cl_nope', 'worker-a');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_compaction('cl', 'worker-a', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_compaction('cl', '');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_compaction('cl', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.release_compaction('cl_nope', 'worker-a');
\echo :LAST_ERROR_SQLSTATE
-- a soft-deleted session cannot be claimed (its commit would fail): MN012,
-- nothing written; release still works
SELECT mnemo.soft_delete_session('cl');
SELECT mnemo.claim_compaction('cl', 'worker-d');
\echo :LAST_ERROR_SQLSTATE
SELECT holder FROM mnemo.compaction_claims WHERE session_id = 'cl';
SELECT mnemo.release_compaction('cl', 'worker-c') AS c_releases;
-- purge takes the claim with the session
SELECT mnemo.purge_session('cl');
SELECT count(*) AS claims FROM mnemo.compaction_claims WHERE session_id = 'cl';
-- an agent's loop after one prompt (tool steps, no user message since): with
-- nothing else to compact, the turn rule protects at most max_tokens of the
-- newest messages, so the loop's older steps are a block; tail_messages
-- still protects its count
SELECT id FROM mnemo.create_session('ca_loop');
SELECT count(*) FROM mnemo.append_messages('ca_loop',
  jsonb_build_array(jsonb_build_object('role', 'user', 'id', 'ca_loop_0',
    'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'Fix the failing test')))) ||
  (SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN i % 2 = 0 THEN 'tool' ELSE 'assistant' END,
     'id', 'ca_loop_' || i,
     'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'step ' || i || ' ' || repeat('o', 396)))))
   FROM generate_series(1, 20) i));
SELECT item_ids, tokens FROM mnemo.compaction_block('ca_loop', tail_messages => 2, max_tokens => 500);
SELECT item_ids FROM mnemo.compaction_block('ca_loop', tail_messages => 18, max_tokens => 500);
SELECT count(*) AS blocks FROM mnemo.compaction_block('ca_loop', tail_messages => 2);
-- but while summaries can be condensed, those go first and the turn stays whole
SELECT mnemo.commit_summary('ca_loop', 'ca_loop_s1', 's1', 1, ARRAY['ca_loop_0', 'ca_loop_1', 'ca_loop_2']);
SELECT mnemo.commit_summary('ca_loop', 'ca_loop_s2', 's2', 1, ARRAY['ca_loop_3', 'ca_loop_4', 'ca_loop_5']);
SELECT count(*) AS blocks FROM mnemo.compaction_block('ca_loop', tail_messages => 2, max_tokens => 500);
SELECT item_ids FROM mnemo.compaction_block('ca_loop', 'condensed', tail_messages => 2, max_tokens => 500, min_items => 2);
SELECT mnemo.commit_summary('ca_loop', 'ca_loop_c1', 'c1', 1, ARRAY['ca_loop_s1', 'ca_loop_s2'], 'condensed');
SELECT item_ids FROM mnemo.compaction_block('ca_loop', tail_messages => 2, max_tokens => 500);
-- every row a compaction wrote carries its session's tenant
SELECT count(*) AS foreign_rows FROM (
    SELECT session_id, tenant FROM mnemo.summary_nodes
    UNION ALL SELECT session_id, tenant FROM mnemo.summary_edges
    UNION ALL SELECT session_id, tenant FROM mnemo.context_items
    UNION ALL SELECT session_id, tenant FROM mnemo.messages) r
  JOIN mnemo.sessions s ON s.id = r.session_id
 WHERE r.tenant <> s.tenant;

-- by budget (protect_tokens): the newest messages within protect_tokens,
-- the latest user message and the task (the first user message, while it
-- fits) pinned wherever they are; tail_messages is not used
SELECT id FROM mnemo.create_session('cbb');
SELECT seq FROM mnemo.append_messages('cbb', '[
  {"role":"user","id":"bb_u1","parts":[{"type":"text","text":"The task: make the parser accept trailing commas"}]},
  {"role":"assistant","id":"bb_a1","parts":[{"type":"text","text":"step one of the loop, with some output to read"}]},
  {"role":"assistant","id":"bb_a2","parts":[{"type":"text","text":"step two of the loop, with some output to read"}]},
  {"role":"user","id":"bb_u2","parts":[{"type":"text","text":"and the tests too"}]},
  {"role":"assistant","id":"bb_a3","parts":[{"type":"text","text":"step three of the loop, with some output to read"}]},
  {"role":"assistant","id":"bb_a4","parts":[{"type":"text","text":"step four of the loop, with some output to read"}]},
  {"role":"assistant","id":"bb_a5","parts":[{"type":"text","text":"step five"}]}]');
SELECT item_id, tokens FROM mnemo.build_context('cbb', 100000);
-- a tail of 20 tokens holds bb_a4 and bb_a5, of 5 tokens bb_a5; bb_u1 (the
-- task, 12 tokens) is pinned at 20, not at 5; bb_u2, the latest user
-- message, always: runs break there
SELECT item_ids FROM mnemo.compaction_block('cbb', min_items => 2, protect_tokens => 20);
SELECT item_ids FROM mnemo.compaction_block('cbb', min_items => 2, protect_tokens => 5);
-- at 20, the runs are two items and one: under min_items 3 they need
-- lone_tokens (a giant output alone between pins or summaries)
SELECT count(*) AS blocks FROM mnemo.compaction_block('cbb', protect_tokens => 20);
SELECT item_ids FROM mnemo.compaction_block('cbb', protect_tokens => 20, lone_tokens => 10);
-- protect_tokens 0: everything but the latest user message
SELECT mnemo.commit_summary('cbb', 'bb_s1', 'steps one and two', 3, ARRAY['bb_u1', 'bb_a1', 'bb_a2']);
SELECT item_ids FROM mnemo.compaction_block('cbb', min_items => 2, protect_tokens => 0);
SELECT mnemo.commit_summary('cbb', 'bb_s2', 'steps three to five', 3, ARRAY['bb_a3', 'bb_a4', 'bb_a5']);
-- a condensation cannot cross bb_u2; a lone summary over lone_tokens can go
SELECT count(*) AS blocks FROM mnemo.compaction_block('cbb', 'condensed', min_items => 2, protect_tokens => 0);
SELECT item_ids FROM mnemo.compaction_block('cbb', 'condensed', min_items => 2, protect_tokens => 0, lone_tokens => 1);
-- nodes of two depths mix by budget (depth: the deepest), not by turns
SELECT seq FROM mnemo.append_messages('cbb', '[
  {"role":"assistant","id":"bb_a6","parts":[{"type":"text","text":"step six"}]},
  {"role":"assistant","id":"bb_a7","parts":[{"type":"text","text":"step seven"}]}]');
SELECT mnemo.commit_summary('cbb', 'bb_s3', 'steps six and seven', 3, ARRAY['bb_a6', 'bb_a7']);
SELECT mnemo.commit_summary('cbb', 'bb_c1', 'three to seven', 3, ARRAY['bb_s2', 'bb_s3'], 'condensed', 3);
SELECT seq FROM mnemo.append_messages('cbb', '[
  {"role":"assistant","id":"bb_a8","parts":[{"type":"text","text":"step eight"}]},
  {"role":"assistant","id":"bb_a9","parts":[{"type":"text","text":"step nine"}]}]');
SELECT mnemo.commit_summary('cbb', 'bb_s4', 'steps eight and nine', 3, ARRAY['bb_a8', 'bb_a9']);
SELECT count(*) AS blocks FROM mnemo.compaction_block('cbb', 'condensed', tail_messages => 0, min_items => 2);
SELECT depth, item_ids FROM mnemo.compaction_block('cbb', 'condensed', min_items => 2, protect_tokens => 0);
SELECT * FROM mnemo.compaction_block('cbb', protect_tokens => -1);
SELECT * FROM mnemo.compaction_block('cbb', protect_tokens => 0, lone_tokens => -1);
