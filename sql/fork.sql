--
-- fork: fork_session, resume_session, list_discarded, reads of a fork's
-- inherited line, purge and soft delete of a parent with forks
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('fk', model_id => 'm1', title => 'parent');
SELECT mnemo.update_state('fk', '{"k": 1}');
SELECT count(*) FROM mnemo.append_messages('fk', '[
  {"role": "user", "id": "fk_m1", "parts": [{"type": "text", "text": "alpha one"}]},
  {"role": "assistant", "id": "fk_m2", "parts": [{"type": "text", "text": "bravo two"}]},
  {"role": "user", "id": "fk_m3", "parts": [{"type": "text", "text": "charlie three"}]},
  {"role": "assistant", "id": "fk_m4", "parts": [{"type": "text", "text": "delta four"}]}]');
SELECT label, seq FROM mnemo.add_checkpoint('fk', 'two-done');
SELECT count(*) FROM mnemo.append_messages('fk', '[
  {"role": "user", "id": "fk_m5", "parts": [{"type": "text", "text": "echo five"}]},
  {"role": "assistant", "id": "fk_m6", "parts": [{"type": "text", "text": "foxtrot six"}]}]');

-- fork at a checkpoint: the child inherits seqs 1..4 and the view as of seq 4
SELECT id, parent_id, fork_seq, fork_run, last_seq, model_id, title, state,
       tenant = current_user AS own_tenant
  FROM mnemo.fork_session('fk', 'two-done', 'fk_c1');
SELECT forks FROM mnemo.get_session('fk');
SELECT session_id, seq_from, seq_to, ancestor_id FROM mnemo.lineage WHERE session_id = 'fk_c1';
SELECT id, session_id, seq FROM mnemo.get_messages('fk_c1');
SELECT item_type, item_id, position FROM mnemo.get_context_items('fk_c1');
-- the child's own messages continue from the fork point
SELECT seq FROM mnemo.append_message('fk_c1', 'user', '[{"type": "text", "text": "golf child"}]', id => 'fk_c1_m5');
-- later appends to the parent never show in the child
SELECT seq FROM mnemo.append_message('fk', 'user', '[{"type": "text", "text": "hotel parent"}]', id => 'fk_m7');
SELECT id, seq FROM mnemo.get_messages('fk_c1');
SELECT id, seq, parts->0->>'text' AS text FROM mnemo.get_messages_with_parts('fk_c1', 'fk_m2');
SELECT id, seq FROM mnemo.history('fk_c1', 2);
SELECT id, seq FROM mnemo.history('fk_c1', NULL);
SELECT position, item_id, role, content FROM mnemo.build_context('fk_c1', 10000);
-- turn_context finds the parts of inherited assistant messages where they live
SELECT item_type, item_id, role, parts->0->>'text' AS part_text FROM mnemo.turn_context('fk_c1', 10000);
SELECT included_items, omitted_items FROM mnemo.context_report('fk_c1', 8);
SELECT id, seq FROM mnemo.get_message('fk_c1', 'fk_m3');
SELECT part_index, content->>'text' FROM mnemo.get_parts('fk_c1', 'fk_m1');
SELECT id FROM mnemo.get_messages_with_parts_by_ids('fk_c1', ARRAY['fk_c1_m5', 'fk_m1', 'fk_m1']);
-- what the parent has past the fork point is not the child's
SELECT mnemo.get_message('fk_c1', 'fk_m5');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM mnemo.get_messages_with_parts_by_ids('fk_c1', ARRAY['fk_m1', 'fk_m6']);
\echo :LAST_ERROR_SQLSTATE
-- the parent is unchanged
SELECT count(*), max(seq) FROM mnemo.get_messages('fk');
SELECT count(*) FROM mnemo.get_context_items('fk');

-- fork at a seq, and fork of a fork
SELECT id, fork_seq, last_seq FROM mnemo.fork_session('fk_c1', '5', 'fk_g1');
SELECT session_id, seq_from, seq_to, ancestor_id FROM mnemo.lineage WHERE session_id = 'fk_g1' ORDER BY seq_from;
SELECT id, session_id, seq FROM mnemo.get_messages('fk_g1');
SELECT seq FROM mnemo.append_message('fk_g1', 'assistant', '[{"type": "text", "text": "india grandchild"}]', id => 'fk_g1_m6');
SELECT position, item_id, content FROM mnemo.build_context('fk_g1', 10000);
-- fork at seq 0 inherits nothing; a generated id
SELECT id ~ '^sess_[0-9A-Z]{26}$' AS generated, fork_seq, last_seq FROM mnemo.fork_session('fk', '0');

-- errors, each leaving nothing written
SELECT count(*) AS sessions_before FROM mnemo.sessions \gset
SELECT mnemo.fork_session('fk', 'no-such-label', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', '99', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', '99999999999999999999999', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT fork_seq FROM mnemo.fork_session('fk', '0000000000000000000002', 'fk_z');
SELECT mnemo.purge_session('fk_z');
SELECT mnemo.fork_session('fk', '', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', '-1', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', 'run:', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', 'two-done', 'fk_c1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', 'two-done', 'fk');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk_missing', '1', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', 'run:no_run', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', NULL, 'fk_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('fk', '1', '');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) = :sessions_before AS nothing_written FROM mnemo.sessions;
SELECT (SELECT count(*) FROM mnemo.lineage WHERE session_id = 'fk_x')
     + (SELECT count(*) FROM mnemo.context_items WHERE session_id = 'fk_x') AS rows_of_fk_x;
SELECT forks FROM mnemo.get_session('fk');

-- a compaction spanning the fork point: the child's view expands it
SELECT id FROM mnemo.create_session('fs');
SELECT count(*) FROM mnemo.append_messages('fs', '[
  {"role": "user", "id": "fs_m1", "parts": [{"type": "text", "text": "one"}]},
  {"role": "assistant", "id": "fs_m2", "parts": [{"type": "text", "text": "two"}]},
  {"role": "user", "id": "fs_m3", "parts": [{"type": "text", "text": "three"}]},
  {"role": "assistant", "id": "fs_m4", "parts": [{"type": "text", "text": "four"}]}]');
SELECT mnemo.commit_summary('fs', 'fs_s1', 'one and two', 5, ARRAY['fs_m1', 'fs_m2']);
SELECT label, seq FROM mnemo.add_checkpoint('fs', 'after-s1');
SELECT count(*) FROM mnemo.append_messages('fs', '[
  {"role": "user", "id": "fs_m6", "parts": [{"type": "text", "text": "six"}]}]');
SELECT mnemo.commit_summary('fs', 'fs_s2', 'three to six', 5, ARRAY['fs_m3', 'fs_m4', 'fs_m6']);
SELECT item_id FROM mnemo.get_context_items('fs');
-- at seq 3 the view was m1 m2 m3: s1 (seq 5) and s2 are both past it
SELECT fork_seq FROM mnemo.fork_session('fs', '3', 'fs_c3');
SELECT item_type, item_id FROM mnemo.get_context_items('fs_c3');
-- at the checkpoint (seq 5) s1 stays, s2 spans the point: m3 m4 stay, m6 goes
SELECT fork_seq FROM mnemo.fork_session('fs', 'after-s1', 'fs_c5');
SELECT item_type, item_id FROM mnemo.get_context_items('fs_c5');
SELECT item_id, role, content FROM mnemo.build_context('fs_c5', 10000);
-- the inherited summary expands where it lives
SELECT depth, item_id FROM mnemo.expand_summary('fs_c5', 'fs_s1');
SELECT mnemo.expand_summary('fs_c5', 'fs_s2');
\echo :LAST_ERROR_SQLSTATE
SELECT id, is_summary FROM mnemo.last_summary('fs_c5');
-- a fork compacts the messages it inherited too: its leaf covers its
-- ancestor's rows, which stay untouched; a condensation cannot take an
-- inherited summary node (the ancestor's)
SELECT count(*) FROM mnemo.append_messages('fs_c5', '[
  {"role": "user", "id": "fs_c5_m6", "parts": [{"type": "text", "text": "own six"}]},
  {"role": "assistant", "id": "fs_c5_m7", "parts": [{"type": "text", "text": "own seven"}]},
  {"role": "user", "id": "fs_c5_m8", "parts": [{"type": "text", "text": "own eight"}]},
  {"role": "assistant", "id": "fs_c5_m9", "parts": [{"type": "text", "text": "own nine"}]},
  {"role": "user", "id": "fs_c5_m10", "parts": [{"type": "text", "text": "own ten"}]}]');
SELECT kind, item_ids FROM mnemo.compaction_block('fs_c5', tail_messages => 0, min_items => 2);
SELECT mnemo.commit_summary('fs_c5', 'fs_c5_s', 'three to seven', 5,
                            ARRAY['fs_m3', 'fs_m4', 'fs_c5_m6', 'fs_c5_m7']);
SELECT item_id, role, content FROM mnemo.build_context('fs_c5', 10000);
SELECT id, seq_start, seq_end FROM mnemo.summary_nodes('fs_c5', true);
SELECT depth, item_id, seq, parts->0->>'text' AS text FROM mnemo.expand_summary('fs_c5', 'fs_c5_s');
SELECT mnemo.commit_summary('fs_c5', 'fs_c5_c', 'all', 5, ARRAY['fs_s1', 'fs_c5_s'], 'condensed', 2);
\echo :LAST_ERROR_SQLSTATE
-- the parent is untouched
SELECT item_id FROM mnemo.get_context_items('fs');
SELECT count(*) FROM mnemo.summary_nodes('fs', true);
-- a fork of it at its fork point expands that leaf: back to the messages
SELECT fork_seq FROM mnemo.fork_session('fs_c5', '5', 'fs_c5_f');
SELECT item_type, item_id FROM mnemo.get_context_items('fs_c5_f');
SELECT item_id, content FROM mnemo.build_context('fs_c5_f', 10000);
-- and a resume of it to its fork point too
SELECT label FROM mnemo.add_checkpoint('fs_c5', 'late');
SELECT mnemo.resume_session('fs_c5', 'after-s1');
SELECT item_type, item_id FROM mnemo.get_context_items('fs_c5');

-- fork after a run: exactly the snapshot, interleaved in-flight messages left out
SELECT id FROM mnemo.create_session('fr');
SELECT seq FROM mnemo.append_message('fr', 'system', '[{"type": "text", "text": "setup"}]', id => 'fr_m1');
SELECT run_id FROM mnemo.claim_run('fr', 'ra');
SELECT run_id FROM mnemo.claim_run('fr', 'rb');
SELECT seq FROM mnemo.append_message('fr', 'user', '[{"type": "text", "text": "a1"}]', run_id => 'ra', id => 'fr_a1');
SELECT seq FROM mnemo.append_message('fr', 'user', '[{"type": "text", "text": "b1"}]', run_id => 'rb', id => 'fr_b1');
SELECT seq FROM mnemo.append_message('fr', 'assistant', '[{"type": "text", "text": "a2"}]', run_id => 'ra', id => 'fr_a2');
SELECT seq FROM mnemo.append_message('fr', 'assistant', '[{"type": "text", "text": "b2"}]', run_id => 'rb', id => 'fr_b2');
-- a summary over a1 and b1 covers a message of the run in flight
SELECT mnemo.commit_summary('fr', 'fr_s1', 'a1 and b1', 5, ARRAY['fr_a1', 'fr_b1']);
SELECT run_id, completion_seq FROM mnemo.complete_run('fr', 'ra');
SELECT mnemo.fork_session('fr', 'run:rb', 'fr_x');
\echo :LAST_ERROR_SQLSTATE
SELECT id, fork_seq, fork_run, last_seq FROM mnemo.fork_session('fr', 'run:ra', 'fr_c');
SELECT seq_from, seq_to, ancestor_id FROM mnemo.lineage WHERE session_id = 'fr_c' ORDER BY seq_from;
SELECT id, seq FROM mnemo.get_messages('fr_c');
SELECT array_agg(id ORDER BY seq) = (SELECT array_agg(id ORDER BY seq) FROM mnemo.snapshot('fr', 'ra')) AS same_as_snapshot
  FROM mnemo.get_messages('fr_c');
SELECT item_id FROM mnemo.get_context_items('fr_c');
SELECT item_id, content FROM mnemo.build_context('fr_c', 10000);
SELECT seq FROM mnemo.append_message('fr_c', 'user', '[{"type": "text", "text": "c6"}]', id => 'fr_c6');
SELECT mnemo.get_message('fr_c', 'fr_b1');
\echo :LAST_ERROR_SQLSTATE

-- resume: the live line and view go back to the checkpoint
SELECT id FROM mnemo.create_session('rs');
SELECT count(*) FROM mnemo.append_messages('rs', '[
  {"role": "user", "id": "rs_m1", "parts": [{"type": "text", "text": "kilo"}]},
  {"role": "assistant", "id": "rs_m2", "parts": [{"type": "text", "text": "lima"}]}]');
SELECT label FROM mnemo.add_checkpoint('rs', 'base');
SELECT count(*) FROM mnemo.append_messages('rs', '[
  {"role": "user", "id": "rs_m3", "parts": [{"type": "text", "text": "mike"}]},
  {"role": "assistant", "id": "rs_m4", "parts": [{"type": "text", "text": "november"}]}]');
SELECT label FROM mnemo.add_checkpoint('rs', 'late');
SELECT mnemo.commit_summary('rs', 'rs_s1', 'kilo to mike', 5, ARRAY['rs_m1', 'rs_m2', 'rs_m3']);
SELECT mnemo.resume_session('rs', 'base');
SELECT id, seq FROM mnemo.get_messages('rs');
SELECT item_id FROM mnemo.get_context_items('rs');
SELECT id, seq, parts->0->>'text' AS text FROM mnemo.list_discarded('rs');
SELECT seq_from, seq_to, label FROM mnemo.discarded WHERE session_id = 'rs';
-- new appends take fresh seqs
SELECT seq FROM mnemo.append_message('rs', 'user', '[{"type": "text", "text": "oscar"}]', id => 'rs_m6');
SELECT id, seq FROM mnemo.history('rs', NULL);
SELECT item_id FROM mnemo.build_context('rs', 10000);
-- a discarded message stays readable by id
SELECT id, seq FROM mnemo.get_message('rs', 'rs_m3');
-- resuming to the end discards nothing
SELECT label FROM mnemo.add_checkpoint('rs', 'now');
SELECT mnemo.resume_session('rs', 'now');
-- a checkpoint inside the discarded suffix is refused, for resume and fork
SELECT mnemo.resume_session('rs', 'late');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('rs', 'late', 'rs_x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fork_session('rs', '4', 'rs_x');
\echo :LAST_ERROR_SQLSTATE
-- a fork of a resumed session inherits its live line
SELECT fork_seq FROM mnemo.fork_session('rs', 'now', 'rs_c');
SELECT seq_from, seq_to, ancestor_id FROM mnemo.lineage WHERE session_id = 'rs_c' ORDER BY seq_from;
SELECT id, seq FROM mnemo.get_messages('rs_c');
-- resume again, back to the start
SELECT mnemo.resume_session('rs', 'base');
SELECT seq_from, seq_to, label FROM mnemo.discarded WHERE session_id = 'rs' ORDER BY seq_from;
SELECT id, seq FROM mnemo.list_discarded('rs');
SELECT mnemo.resume_session('rs', 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.resume_session('rs_missing', 'base');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.resume_session('rs', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.list_discarded('rs_missing');
\echo :LAST_ERROR_SQLSTATE

-- a fork resumes within its own part only: not past its fork point
SELECT mnemo.resume_session('fk_g1', 'two-done');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.discarded WHERE session_id = 'fk_g1';
-- to its fork point it may (the parent's checkpoint there is inherited)
SELECT label FROM mnemo.add_checkpoint('fk_c1', 'child-start');
SELECT mnemo.resume_session('fk_c1', 'two-done');
SELECT id, seq FROM mnemo.get_messages('fk_c1');
SELECT item_id FROM mnemo.build_context('fk_c1', 10000);
SELECT mnemo.resume_session('fk_c1', 'child-start');
\echo :LAST_ERROR_SQLSTATE
SELECT seq FROM mnemo.append_message('fk_c1', 'user', '[{"type": "text", "text": "juliet"}]', id => 'fk_c1_m6');
SELECT id, seq FROM mnemo.get_messages('fk_c1');
SELECT id, seq FROM mnemo.list_discarded('fk_c1');
-- an inherited checkpoint is a fork point for a fork of the fork
SELECT fork_seq FROM mnemo.fork_session('fk_c1', 'two-done', 'fk_c1b');

-- purge and soft delete of a parent with forks
SELECT mnemo.purge_session('fk');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.soft_delete_session('fk');
SELECT id, seq FROM mnemo.get_messages('fk_c1') LIMIT 2;
SELECT mnemo.fork_session('fk', '1', 'fk_x');
\echo :LAST_ERROR_SQLSTATE
-- forks of an inactive session are refused; purge the forks, then the parent
SELECT mnemo.purge_session('fk_g1');
SELECT mnemo.purge_session('fk_c1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.purge_session('fk_c1b');
SELECT mnemo.purge_session('fk_c1');
SELECT forks FROM mnemo.get_session('fk');
SELECT mnemo.purge_session(id) FROM mnemo.sessions WHERE parent_id = 'fk' AND fork_seq = 0;
SELECT mnemo.purge_session('fk');
SELECT count(*) FROM mnemo.lineage WHERE session_id IN ('fk_c1', 'fk_g1', 'fk_c1b');

-- search reads the line: the inherited messages, not the parent's later
-- ones, nor the discarded ones; in_context is the searching session's view
SELECT id FROM mnemo.create_session('sr');
SELECT count(*) FROM mnemo.append_messages('sr', '[
  {"role": "user", "id": "sr_m1", "parts": [{"type": "text", "text": "papa zebra"}]},
  {"role": "assistant", "id": "sr_m2", "parts": [{"type": "text", "text": "quebec zebra"}]}]');
SELECT fork_seq FROM mnemo.fork_session('sr', '1', 'sr_c');
SELECT seq FROM mnemo.append_message('sr_c', 'user', '[{"type": "text", "text": "romeo zebra"}]', id => 'sr_c2');
-- a fork waits to index its own messages only, those past its fork point
SELECT mnemo.search_pending('sr_c') AS fork_pending, mnemo.search_pending('sr') AS parent_pending;
SELECT message_id, seq, in_context FROM mnemo.search_history('sr_c', 'zebra') ORDER BY seq;
SELECT mnemo.search_pending('sr_c') AS fork_pending, mnemo.search_pending('sr') AS parent_pending;
SELECT message_id, seq FROM mnemo.search_history('sr_c', 'quebec');
SELECT label FROM mnemo.add_checkpoint('sr', 'one');
SELECT seq FROM mnemo.append_message('sr', 'user', '[{"type": "text", "text": "sierra zebra"}]', id => 'sr_m3');
SELECT mnemo.resume_session('sr', 'one');
SELECT message_id, seq FROM mnemo.search_history('sr', 'zebra') ORDER BY seq;
SELECT message_id, seq FROM mnemo.search_history('sr', 'zebra', 1);

-- snapshot of a fork: its inherited messages, then its own by their run
SELECT run_id FROM mnemo.claim_run('fr_c', 'rc');
SELECT seq FROM mnemo.append_message('fr_c', 'assistant', '[{"type": "text", "text": "c8"}]', id => 'fr_c8', run_id => 'rc');
SELECT run_id FROM mnemo.claim_run('fr_c', 'rd');
SELECT run_id FROM mnemo.complete_run('fr_c', 'rd');
SELECT id, seq FROM mnemo.snapshot('fr_c', 'rd');
SELECT run_id FROM mnemo.complete_run('fr_c', 'rc');
SELECT id, seq FROM mnemo.snapshot('fr_c', 'rc');

-- the implicit tail (an append writes no context row): a fork and a resume
-- whose point lies in it, on a view that also has explicit rows
SELECT id FROM mnemo.create_session('ft');
SELECT count(*) FROM mnemo.append_messages('ft', '[
  {"role": "user", "id": "ft_1", "parts": [{"type": "text", "text": "one"}]},
  {"role": "assistant", "id": "ft_2", "parts": [{"type": "text", "text": "two"}]},
  {"role": "user", "id": "ft_3", "parts": [{"type": "text", "text": "three"}]},
  {"role": "assistant", "id": "ft_4", "parts": [{"type": "text", "text": "four"}]},
  {"role": "assistant", "id": "ft_s", "is_summary": true, "parts": [{"type": "text", "text": "1-2"}]}]');
SELECT mnemo.swap_context_items('ft', ARRAY['ft_1', 'ft_2'], 'ft_s');
SELECT count(*) FROM mnemo.append_messages('ft', '[
  {"role": "user", "id": "ft_6", "parts": [{"type": "text", "text": "six"}]},
  {"role": "assistant", "id": "ft_7", "parts": [{"type": "text", "text": "seven"}]},
  {"role": "user", "id": "ft_8", "parts": [{"type": "text", "text": "eight"}]},
  {"role": "assistant", "id": "ft_9", "parts": [{"type": "text", "text": "nine"}]}]');
SELECT label, seq FROM mnemo.add_checkpoint('ft', 'at7', seq => 7);
SELECT item_type, item_id, position FROM mnemo.get_context_items('ft');
SELECT context_tail_seq FROM mnemo.get_session('ft');
-- a fork at seq 8: the parent's rows and its tail up to the fork point
SELECT fork_seq, context_tail_seq FROM mnemo.fork_session('ft', '8', 'ft_c');
SELECT item_type, item_id, position FROM mnemo.get_context_items('ft_c');
SELECT seq FROM mnemo.append_message('ft_c', 'user', '[{"type": "text", "text": "child"}]', id => 'ft_c_9');
SELECT item_id, position, content FROM mnemo.build_context('ft_c', 10000);
-- the child's tail, partly inherited rows, swaps like any view
SELECT count(*) FROM mnemo.append_messages('ft_c', '[{"role": "assistant", "id": "ft_c_s", "is_summary": true, "parts": []}]');
SELECT mnemo.swap_context_items('ft_c', ARRAY['ft_8', 'ft_c_9'], 'ft_c_s');
SELECT item_type, item_id, position FROM mnemo.get_context_items('ft_c');
-- the parent is unchanged by both
SELECT item_type, item_id, position FROM mnemo.get_context_items('ft');
-- a resume into the tail: the view as of seq 7, written as rows; later
-- appends form the tail again
SELECT mnemo.resume_session('ft', 'at7');
SELECT item_type, item_id, position FROM mnemo.get_context_items('ft');
SELECT context_tail_seq = last_seq AS tail_restarts FROM mnemo.get_session('ft');
SELECT seq FROM mnemo.append_message('ft', 'user', '[{"type": "text", "text": "ten"}]', id => 'ft_10');
SELECT item_id, position FROM mnemo.build_context('ft', 10000);
-- a swap over the resumed rows and the new tail
SELECT count(*) FROM mnemo.append_messages('ft', '[{"role": "assistant", "id": "ft_s2", "is_summary": true, "parts": [{"type": "text", "text": "7, 10"}]}]');
SELECT mnemo.swap_context_items('ft', ARRAY['ft_7', 'ft_10'], 'ft_s2');
SELECT item_id, position, content FROM mnemo.build_context('ft', 10000);

-- a summary a resume discarded stays readable by id, but may not re-enter
-- the view: MN006, and the view is unchanged
SELECT id FROM mnemo.create_session('rds');
SELECT seq FROM mnemo.append_message('rds', 'user', '[{"type": "text", "text": "a"}]', id => 'rds_1');
SELECT seq FROM mnemo.append_message('rds', 'assistant', '[{"type": "text", "text": "b"}]', id => 'rds_2');
SELECT label, seq FROM mnemo.add_checkpoint('rds', 'c1');
SELECT seq FROM mnemo.append_message('rds', 'assistant', '[{"type": "text", "text": "S"}]', id => 'rds_s', is_summary => true);
SELECT mnemo.resume_session('rds', 'c1');
SELECT mnemo.swap_context_items('rds', ARRAY['rds_1'], 'rds_s');
\echo :LAST_ERROR_SQLSTATE
SELECT item_type, item_id, position FROM mnemo.get_context_items('rds');
SELECT id, is_summary FROM mnemo.get_message('rds', 'rds_s');

-- a fork or resume before a summary a bare swap put in the view: the swap
-- recorded no edges, so the messages it replaced are found on the line and
-- put back, in order
SELECT id FROM mnemo.create_session('bs');
SELECT count(*) FROM mnemo.append_messages('bs', '[{"role": "user", "id": "bs_1", "parts": [{"type": "text", "text": "1"}]},
  {"role": "assistant", "id": "bs_2", "parts": [{"type": "text", "text": "2"}]},
  {"role": "user", "id": "bs_3", "parts": [{"type": "text", "text": "3"}]},
  {"role": "assistant", "id": "bs_k", "is_summary": true, "parts": [{"type": "text", "text": "K: 1, 2"}]}]');
SELECT mnemo.swap_context_items('bs', ARRAY['bs_1', 'bs_2'], 'bs_k');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs');
SELECT fork_seq FROM mnemo.fork_session('bs', '3', 'bs_f3');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs_f3');
SELECT fork_seq FROM mnemo.fork_session('bs', '1', 'bs_f1');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs_f1');
-- a fork after the summary keeps it, and what it replaced stays out
SELECT fork_seq FROM mnemo.fork_session('bs', '4', 'bs_f4');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs_f4');
-- the same through a resume
SELECT label, seq FROM mnemo.add_checkpoint('bs', 'at3', seq => 3);
SELECT mnemo.resume_session('bs', 'at3');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs');
-- two bare summaries, one kept and one left out: which covers a message
-- left over is unknown, so the fork is refused, nothing written
SELECT id, seq FROM mnemo.append_messages('bs', '[{"role": "user", "id": "bs_6", "parts": [{"type": "text", "text": "6"}]},
  {"role": "assistant", "id": "bs_k2", "is_summary": true, "parts": [{"type": "text", "text": "K2: 1, 2"}]},
  {"role": "user", "id": "bs_8", "parts": [{"type": "text", "text": "8"}]},
  {"role": "assistant", "id": "bs_d", "is_summary": true, "parts": [{"type": "text", "text": "D: 3, 6, 8"}]}]');
SELECT mnemo.swap_context_items('bs', ARRAY['bs_1', 'bs_2'], 'bs_k2');
SELECT mnemo.swap_context_items('bs', ARRAY['bs_3', 'bs_6', 'bs_8'], 'bs_d');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs');
-- before both: each message of the line back, in order
SELECT fork_seq FROM mnemo.fork_session('bs', '5', 'bs_f5');
SELECT item_type, item_id, position FROM mnemo.get_context_items('bs_f5');
SELECT fork_seq FROM mnemo.fork_session('bs', '7', 'bs_f7');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS no_fork FROM mnemo.list_sessions() WHERE id = 'bs_f7';
SELECT forks FROM mnemo.get_session('bs');

-- a fork's messages by id, many at once: in the order given, each found
-- through a hash of the rows (not a scan of them per id)
SELECT id FROM mnemo.create_session('bid');
SELECT count(*) FROM mnemo.append_messages('bid', (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'bid_' || g,
  'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 't' || g)))) FROM generate_series(1, 3000) g));
SELECT fork_seq FROM mnemo.fork_session('bid', '3000', 'bid_f');
SELECT array_agg(id) = (SELECT array_agg('bid_' || g ORDER BY g DESC) FROM generate_series(1, 3000) g) AS in_order,
       count(*) AS n
  FROM mnemo.get_messages_with_parts_by_ids('bid_f', (SELECT array_agg('bid_' || g ORDER BY g DESC) FROM generate_series(1, 3000) g));
-- the last messages of a fork, across what it inherited and its own
SELECT count(*) FROM mnemo.append_messages('bid_f', '[{"role": "user", "id": "bid_f1", "parts": []}, {"role": "user", "id": "bid_f2", "parts": []}]');
SELECT id, seq FROM mnemo.history('bid_f', 4);
SELECT count(*), min(seq), max(seq) FROM mnemo.history('bid_f', NULL);
SELECT count(*) FROM mnemo.history('bid_f', 0);

-- the DAG after a resume: a condensation the resume discarded no longer
-- supersedes the nodes it consumed (they are back in the view), and nodes
-- whose summary was discarded are off summary_nodes, as their messages are
-- off get_messages
SELECT id FROM mnemo.create_session('sn');
SELECT count(*) FROM mnemo.append_messages('sn', '[{"role": "user", "id": "sn_1", "parts": [{"type": "text", "text": "1"}]},
  {"role": "assistant", "id": "sn_2", "parts": [{"type": "text", "text": "2"}]},
  {"role": "user", "id": "sn_3", "parts": [{"type": "text", "text": "3"}]},
  {"role": "assistant", "id": "sn_4", "parts": [{"type": "text", "text": "4"}]}]');
SELECT label FROM mnemo.add_checkpoint('sn', 'start');
SELECT mnemo.commit_summary('sn', 'sn_a', 'A: 1, 2', 5, ARRAY['sn_1', 'sn_2']);
SELECT mnemo.commit_summary('sn', 'sn_b', 'B: 3, 4', 5, ARRAY['sn_3', 'sn_4']);
SELECT label FROM mnemo.add_checkpoint('sn', 'leaves');
SELECT mnemo.commit_summary('sn', 'sn_c', 'C: A, B', 5, ARRAY['sn_a', 'sn_b'], 'condensed', 2);
SELECT id, kind, superseded_by FROM mnemo.summary_nodes('sn', true);
SELECT id FROM mnemo.summary_nodes('sn');
SELECT mnemo.resume_session('sn', 'leaves');
SELECT item_type, item_id FROM mnemo.get_context_items('sn');
SELECT id, kind, superseded_by FROM mnemo.summary_nodes('sn', true);
-- the table keeps every node; the discarded condensation's edges are kept
SELECT id, superseded_by FROM mnemo.summary_nodes WHERE session_id = 'sn' ORDER BY id;
SELECT item_id FROM mnemo.summary_edges WHERE session_id = 'sn' AND summary_id = 'sn_c' ORDER BY ordinal;
-- condensed again: the leaves are superseded by the new condensation
SELECT mnemo.commit_summary('sn', 'sn_c2', 'C2: A, B', 5, ARRAY['sn_a', 'sn_b'], 'condensed', 2);
SELECT id, kind, superseded_by FROM mnemo.summary_nodes('sn', true);
SELECT id FROM mnemo.summary_nodes('sn');
-- back before every summary: no node is on the live line
SELECT mnemo.resume_session('sn', 'start');
SELECT count(*) AS nodes FROM mnemo.summary_nodes('sn', true);
SELECT item_id FROM mnemo.get_context_items('sn');

-- ids are unique along a fork's line: an id it inherited is taken (MN004,
-- nothing written), for messages, parts and summaries alike; a parent's id
-- after the fork point is not on the fork's line and stays free
SELECT id FROM mnemo.create_session('fu');
SELECT count(*) FROM mnemo.append_messages('fu', '[{"role": "user", "id": "fu_m1", "parts": [{"type": "text", "id": "fu_p1", "text": "one"}]},
  {"role": "assistant", "id": "fu_m2", "parts": [{"type": "text", "id": "fu_p2", "text": "two"}]}]');
SELECT fork_seq FROM mnemo.fork_session('fu', '2', 'fu_f');
SELECT seq FROM mnemo.append_message('fu', 'user', '[{"type": "text", "id": "fu_p3", "text": "parent three"}]', id => 'fu_m3');
SELECT mnemo.append_message('fu_f', 'user', '[{"type": "text", "text": "again"}]', id => 'fu_m1');
SELECT mnemo.append_message('fu_f', 'user', '[{"type": "text", "id": "fu_p2", "text": "again"}]');
SELECT mnemo.append_messages('fu_f', '[{"role": "user", "id": "fu_new", "parts": []}, {"role": "user", "id": "fu_m2", "parts": []}]');
SELECT seq FROM mnemo.append_message('fu_f', 'user', '[{"type": "text", "id": "fu_fp", "text": "own"}]', id => 'fu_fm');
SELECT mnemo.append_part('fu_f', 'fu_fm', '{"type": "text", "id": "fu_p1", "text": "part"}');
SELECT mnemo.append_message('fu_f', 'assistant', '[{"type": "text", "text": "S"}]', id => 'fu_m2', is_summary => true);
SELECT mnemo.commit_summary('fu_f', 'fu_m1', 'sum', 1, '{fu_fm}');
SELECT mnemo.commit_summary('fu_f', 'fu_s', 'sum', 1, '{fu_fm}', part_ids => '{fu_p2,fu_sp}');
-- the first clash in message order, inherited or own
SELECT mnemo.append_messages('fu_f', '[{"role": "user", "id": "fu_fm", "parts": []}, {"role": "user", "id": "fu_m1", "parts": []}]');
SELECT mnemo.append_messages('fu_f', '[{"role": "user", "id": "fu_x", "parts": [{"type": "text", "id": "fu_p1", "text": "x"}]}, {"role": "user", "id": "fu_fm", "parts": []}]');
-- nothing of those was written; the view holds each id once
SELECT id, seq FROM mnemo.get_messages('fu_f');
SELECT item_id FROM mnemo.get_context_items('fu_f');
-- the parent's own later ids, and new ones, are free on the fork
SELECT seq FROM mnemo.append_message('fu_f', 'user', '[{"type": "text", "id": "fu_p3", "text": "mine"}]', id => 'fu_m3');
SELECT mnemo.commit_summary('fu_f', 'fu_s', 'sum', 1, '{fu_m1,fu_m2}') AS position;
SELECT item_type, item_id FROM mnemo.get_context_items('fu_f');
-- a fork of the fork inherits both lines' ids
SELECT fork_seq FROM mnemo.fork_session('fu_f', '4', 'fu_ff');
SELECT mnemo.append_message('fu_ff', 'user', '[]', id => 'fu_m2');
SELECT mnemo.append_message('fu_ff', 'user', '[]', id => 'fu_fm');
\set VERBOSITY default
SELECT mnemo.append_message('fu_ff', 'user', '[]', id => 'fu_m1');
\set VERBOSITY terse
SELECT seq FROM mnemo.append_message('fu_ff', 'user', '[]', id => 'fu_ff_m');
