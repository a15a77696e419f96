-- annotate: commit_summary(..., annotate_tokens => 200) puts a header (id, kind,
-- depth, span) and an "Expand for details about" line (file ids, paths,
-- tools covered) before the summary's text; the node counts the tokens of
-- what is stored, which is what the context shows.
SELECT FROM mnemo.create_session('an');
-- two messages ten minutes apart (2026-01-01 09:00 and 09:10 UTC), then two more
SELECT count(*) FROM mnemo.append_messages('an', '[
  {"id": "an_u1", "role": "user", "created_at": 1767258000000, "parts": [{"type": "text",
   "text": "Fix /srv/app/main.c, see docs/guide.md and sha256:00112233aabbccdd. Not https://example.com/a/b nor and/or."}]},
  {"id": "an_a1", "role": "assistant", "created_at": 1767258600000, "parts": [
   {"type": "tool", "tool_name": "Read", "tool_call_id": "c1", "tool_state": "completed",
    "input": {"file_path": "src/app.py"}, "output": "stored as file_0123456789abcdef in /tmp/out/listing"},
   {"type": "tool", "tool_name": "Bash", "tool_call_id": "c2", "tool_state": "completed",
    "input": {"command": "grep -rn port /etc/nginx/nginx.conf"}, "output": "listen 8080"},
   {"type": "file_ref", "path": "data/report.csv", "content_id": "sha256:feedfacefeedface", "file_type": "csv", "token_count": 9, "summary": "a table"}]},
  {"id": "an_u2", "role": "user", "created_at": 1767262200000, "parts": [{"type": "text", "text": "now the tests"}]},
  {"id": "an_a2", "role": "assistant", "created_at": 1767262260000, "parts": [
   {"type": "tool", "tool_name": "Bash", "tool_call_id": "c3", "tool_state": "completed",
    "input": {"command": "make check"}, "output": "ok"},
   {"type": "tool", "tool_name": "Edit", "tool_call_id": "c4", "tool_state": "completed",
    "input": {"path": "test/t_app.py", "old": "a", "new": "b"}, "output": "done"}]},
  {"id": "an_u3", "role": "user", "created_at": 1767262320000, "parts": [{"type": "text", "text": "thanks"}]}
]');

-- a leaf: the header, the about line, then the text as given
SELECT mnemo.commit_summary('an', 'an_s1', 'Fixed the port.', 3, ARRAY['an_u1', 'an_a1'], annotate_tokens => 200);
SELECT content FROM mnemo.build_context('an', 100000) WHERE item_id = 'an_s1';
-- the node counts what is stored, and build_context what it renders: the same
SELECT c.tokens = mnemo.estimate_tokens(c.content) AS rendered_is_estimated,
       n.token_count = c.tokens AS node_is_rendered,
       p.content->>'token_estimate' = n.token_count::text AS part_is_node
  FROM mnemo.build_context('an', 100000) c
  JOIN mnemo.summary_nodes('an') n ON n.id = c.item_id
  JOIN mnemo.get_parts('an', 'an_s1') p ON p.part_type = 'text'
 WHERE c.item_id = 'an_s1';
-- what the marker keeps, for condensations to union
SELECT content->'messages' AS messages, content->'earliest_at' AS earliest_at,
       content->'latest_at' AS latest_at, content->'depth' AS depth,
       jsonb_pretty(content->'about') AS about
  FROM mnemo.get_parts('an', 'an_s1') WHERE part_type = 'compaction_marker';

-- a caller's own token count grows by what the annotation adds
SELECT mnemo.commit_summary('an', 'an_s2', E'Ran the tests.\n\n[LCM File IDs: sha256:feedfacefeedface]', 1000,
                            ARRAY['an_u2', 'an_a2'], annotate_tokens => 200);
SELECT n.token_count - 1000 = mnemo.estimate_tokens(c.content)
       - mnemo.estimate_tokens(E'Ran the tests.\n\n[LCM File IDs: sha256:feedfacefeedface]') AS grew_by_the_annotation
  FROM mnemo.build_context('an', 100000) c JOIN mnemo.summary_nodes('an') n ON n.id = c.item_id
 WHERE c.item_id = 'an_s2';
-- file ids its text names (its footer) are not repeated; the footer stays last
SELECT content FROM mnemo.build_context('an', 100000) WHERE item_id = 'an_s2';
SELECT mnemo.file_id_footer(content) = content AS footer_idempotent
  FROM mnemo.build_context('an', 100000) WHERE item_id = 'an_s2';

-- a condensation's transcript leaves its children's annotations out
SELECT item_ids, content FROM mnemo.compaction_block('an', 'condensed', 0, 20000, 2);

-- a condensation unions its children's lists, sums their messages, spans their times
SELECT mnemo.commit_summary('an', 'an_c1', 'Fixed and tested.', 4, ARRAY['an_s1', 'an_s2'], 'condensed', annotate_tokens => 200);
SELECT content, tokens = mnemo.estimate_tokens(content) AS estimated
  FROM mnemo.build_context('an', 100000) WHERE item_id = 'an_c1';
SELECT content->'messages' AS messages, content->'about'->'tools' AS tools
  FROM mnemo.get_parts('an', 'an_c1') WHERE part_type = 'compaction_marker';

-- without annotate_tokens, the text is stored byte for byte with the caller's count
SELECT FROM mnemo.create_session('an_plain');
SELECT count(*) FROM mnemo.append_messages('an_plain', '[
  {"id": "anp_u1", "role": "user", "parts": [{"type": "text", "text": "edit /srv/x/y.c"}]},
  {"id": "anp_u2", "role": "user", "parts": [{"type": "text", "text": "and /srv/x/z.c"}]},
  {"id": "anp_u3", "role": "user", "parts": [{"type": "text", "text": "and docs/a.md"}]}]');
SELECT mnemo.commit_summary('an_plain', 'anp_s1', 'as given', 77, ARRAY['anp_u1']);
SELECT mnemo.commit_summary('an_plain', 'anp_s2', 'as given too', 5, ARRAY['anp_u2'], annotate_tokens => NULL);
SELECT item_id, content, tokens FROM mnemo.build_context('an_plain', 100000) WHERE item_type = 'summary';
SELECT count(*) AS markers_with_about FROM mnemo.get_messages_flat('an_plain')
 WHERE content::jsonb ? 'about';
-- a condensation over one unannotated leaf (whose marker still counts its
-- messages) and an annotated one: the names it knows, no time range
SELECT mnemo.commit_summary('an_plain', 'anp_s3', 'three', 1, ARRAY['anp_u3'], annotate_tokens => 200);
SELECT mnemo.commit_summary('an_plain', 'anp_c1', 'all', 1, ARRAY['anp_s1', 'anp_s2', 'anp_s3'], 'condensed', annotate_tokens => 200);
SELECT content FROM mnemo.build_context('an_plain', 100000) WHERE item_id = 'anp_c1';

-- the list is bounded: 40 paths show 6, and the marker keeps 32 and counts the rest
SELECT FROM mnemo.create_session('an_many');
SELECT count(*) FROM mnemo.append_messages('an_many', jsonb_build_array(
  jsonb_build_object('id', 'anm_u1', 'role', 'user', 'parts', jsonb_build_array(jsonb_build_object(
    'type', 'text', 'text', (SELECT string_agg('/p/d' || i || '/f.c', ' ') FROM generate_series(1, 40) i)))),
  jsonb_build_object('id', 'anm_u2', 'role', 'user', 'parts', jsonb_build_array(jsonb_build_object(
    'type', 'text', 'text', 'more /p/d1/f.c and /q/r/s.c; /q/r/ is /q/r.')))));
SELECT mnemo.commit_summary('an_many', 'anm_s1', 'many', 1, ARRAY['anm_u1'], annotate_tokens => 200);
SELECT split_part(content, E'\n', 2) AS about FROM mnemo.build_context('an_many', 100000) WHERE item_id = 'anm_s1';
SELECT jsonb_array_length(content->'about'->'paths'->'names') AS kept, content->'about'->'paths'->'more' AS more
  FROM mnemo.get_parts('an_many', 'anm_s1') WHERE part_type = 'compaction_marker';
-- a union of a cut list: its count is an upper bound
SELECT mnemo.commit_summary('an_many', 'anm_s2', 'one more', 1, ARRAY['anm_u2'], annotate_tokens => 200);
-- a path once, whatever its last slash or full stop
SELECT content->'about'->'paths'->'names' AS paths
  FROM mnemo.get_parts('an_many', 'anm_s2') WHERE part_type = 'compaction_marker';
SELECT mnemo.commit_summary('an_many', 'anm_c1', 'all', 1, ARRAY['anm_s1', 'anm_s2'], 'condensed', annotate_tokens => 200);
SELECT split_part(content, E'\n', 2) AS about FROM mnemo.build_context('an_many', 100000) WHERE item_id = 'anm_c1';

-- a fork's leaf over messages it inherited reads them in its ancestor
SELECT FROM mnemo.fork_session('an', '5', 'an_fork');
SELECT count(*) FROM mnemo.append_messages('an_fork', '[
  {"id": "anf_u1", "role": "user", "created_at": 1767265200000, "parts": [{"type": "text", "text": "in the fork: lib/fork.rs"}]}]');
SELECT item_id FROM mnemo.get_context_items('an_fork');
SELECT mnemo.commit_summary('an_fork', 'anf_s1', 'across the fork', 3, ARRAY['an_a2', 'an_u3', 'anf_u1'], annotate_tokens => 200);
SELECT content FROM mnemo.build_context('an_fork', 100000) WHERE item_id = 'anf_s1';

-- within annotate_tokens: names go first, then the times, then all of it
SELECT FROM mnemo.create_session('an_cap');
SELECT count(*) FROM mnemo.append_messages('an_cap', '[
  {"id": "anc_u1", "role": "user", "created_at": 1767258000000, "parts": [{"type": "text", "text": "see /srv/one/a.c and /srv/two/b.c"}]},
  {"id": "anc_u2", "role": "user", "created_at": 1767258060000, "parts": [{"type": "text", "text": "and /srv/three/c.c"}]},
  {"id": "anc_u3", "role": "user", "created_at": 1767258120000, "parts": [{"type": "text", "text": "and /srv/four/d.c"}]},
  {"id": "anc_u4", "role": "user", "created_at": 1767258180000, "parts": [{"type": "text", "text": "and /srv/five/e.c"}]}]');
SELECT mnemo.commit_summary('an_cap', 'anc_s1', 'a', 1, ARRAY['anc_u1'], annotate_tokens => 60);
SELECT mnemo.commit_summary('an_cap', 'anc_s2', 'b', 1, ARRAY['anc_u2'], annotate_tokens => 35);
SELECT mnemo.commit_summary('an_cap', 'anc_s3', 'c', 1, ARRAY['anc_u3'], annotate_tokens => 15);
SELECT mnemo.commit_summary('an_cap', 'anc_s4', 'd', 1, ARRAY['anc_u4'], annotate_tokens => 5);
SELECT item_id, content, tokens, tokens - 1 <= CASE item_id WHEN 'anc_s1' THEN 60 WHEN 'anc_s2' THEN 35 WHEN 'anc_s3' THEN 15 ELSE 5 END AS within
  FROM mnemo.build_context('an_cap', 100000) ORDER BY position;
-- the marker keeps the lists whatever the text shows
SELECT m.id, p->'about'->'paths'->'names' AS paths
  FROM mnemo.get_messages_with_parts('an_cap') m, jsonb_array_elements(m.parts) p
 WHERE p->>'type' = 'compaction_marker' ORDER BY m.seq;
SELECT mnemo.commit_summary('an_cap', 'anc_bad', 'x', 1, ARRAY['anc_s1'], 'condensed', annotate_tokens => -1);
