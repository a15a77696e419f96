--
-- notify: NOTIFY mnemo on committed writes to watched sessions
--
-- psql prints a notification after the command that received it, with the
-- sending backend's PID; to keep the output stable, each command whose
-- notifications we look at runs with its output piped through sed, which
-- masks the PID (its output appears after the closing \o).  Payloads name
-- caller-supplied ids only.
--
\set VERBOSITY sqlstate

SELECT id FROM mnemo.create_session('nt_w');
SELECT id FROM mnemo.create_session('nt_u');
SHOW mnemo.notify;
-- watch returns the channel of the session's tenant: "mnemo_" and 32 random
-- hex digits, the same for every session of the tenant
SELECT mnemo.watch('nt_w') AS channel \gset
SELECT :'channel' ~ '^mnemo_[0-9a-f]{32}$' AS unguessable,
       (SELECT channel FROM mnemo.tenants WHERE tenant = current_user) = :'channel' AS stored;
SELECT id, watched FROM mnemo.get_session('nt_w')
UNION ALL SELECT id, watched FROM mnemo.get_session('nt_u');
LISTEN mnemo;
LISTEN :"channel";

-- an append to a watched session: message_created with its id and seq
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[{"type": "text", "id": "nt_p1", "text": "hi"}]', id => 'nt_m1');
\o

-- an unwatched session sends nothing
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_u', 'user', '[]', id => 'nt_u1');
SELECT 'nothing above' AS unwatched;
\o

-- a batch: one notification per message, in seq order
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_messages('nt_w', '[
  {"id": "nt_m2", "role": "assistant", "parts": [{"type": "tool", "id": "nt_p2", "tool_name": "ls", "tool_call_id": "c1"}]},
  {"id": "nt_s1", "role": "assistant", "is_summary": true, "parts": []}
]');
\o

-- part_created (the part id and its message's seq), part_updated,
-- message_updated (with its seq), context_swapped (the summary id)
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.append_part('nt_w', 'nt_m2', '{"type": "text", "id": "nt_p3", "text": "streamed"}');
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.update_part_status('nt_w', 'nt_p2', tool_state => 'completed', output => 'a.txt');
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.tombstone_part('nt_w', 'nt_p2') > 0 AS tombstoned;
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.update_message_tokens('nt_w', 'nt_m2', '{"input": 1}', 0, 'stop');
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.swap_context_items('nt_w', ARRAY['nt_m1'], 'nt_s1');
\o

-- notifications are sent at commit, in the order of the writes: nothing
-- before COMMIT, both after it
BEGIN;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m4');
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m5');
SELECT 'nothing above yet' AS in_transaction;
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
COMMIT;
\o
-- a rolled back write, and a failed one, send nothing
BEGIN;
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_rolled_back');
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
ROLLBACK;
SELECT mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m1');
SELECT 'nothing above' AS rolled_back_and_failed;
\o

-- mnemo.notify = all: every session notifies
SET mnemo.notify = 'all';
SHOW mnemo.notify;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_u', 'user', '[]', id => 'nt_u2');
\o
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.update_part_status('nt_w', 'nt_p1', compacted_at => 1);
\o
-- mnemo.notify = off: even watched sessions are silent
SET mnemo.notify = 'off';
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m7');
SELECT mnemo.append_part('nt_w', 'nt_m7', '{"type": "text", "id": "nt_p4", "text": "x"}');
SELECT mnemo.tombstone_part('nt_w', 'nt_p4') > 0 AS tombstoned;
SELECT 'nothing above' AS notify_off;
\o
-- back to the default
RESET mnemo.notify;
SHOW mnemo.notify;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_u', 'user', '[]', id => 'nt_u3');
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m8');
\o
-- only the settings' values are accepted
SET mnemo.notify = 'sometimes';
SHOW mnemo.notify;

-- ids are escaped as JSON strings
SELECT id FROM mnemo.create_session('nt_"q"\');
SELECT mnemo.watch('nt_"q"\') = :'channel' AS same_channel;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_"q"\', 'user', '[]', id => 'nt_"m"');
\o

-- watching is stored with the session: another backend sees it
\c
SELECT id, watched FROM mnemo.get_session('nt_w');
LISTEN :"channel";
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m9');
\o

-- the end of a compaction: release_compaction with its outcome tells
-- followers (compaction_completed / compaction_failed), held or not
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.claim_compaction('nt_w', 'nt_h');
SELECT mnemo.release_compaction('nt_w', 'nt_h', 'completed', 900, 300, 2, 'nt_s1');
SELECT mnemo.release_compaction('nt_w', 'nt_h', 'failed', 900, error => 'provider "down"');
SELECT mnemo.release_compaction('nt_w', 'nt_h');
SELECT 'nothing above but the release' AS plain_release;
\o
SELECT mnemo.release_compaction('nt_w', 'nt_h', 'done');

-- unwatch: silent again
SELECT mnemo.unwatch('nt_w');
SELECT watched FROM mnemo.get_session('nt_w');
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('nt_w', 'user', '[]', id => 'nt_m10');
SELECT 'nothing above' AS unwatched;
\o
-- watching twice, unwatching twice are fine; unknown session MN001; NULL 22004
SELECT mnemo.watch('nt_u') = :'channel' AS same_channel;
SELECT mnemo.watch('nt_u') = :'channel' AS same_channel;
SELECT mnemo.unwatch('nt_u');
SELECT mnemo.unwatch('nt_u');
SELECT mnemo.watch('no_such_session');
SELECT mnemo.unwatch('no_such_session');
SELECT mnemo.watch(NULL);
SELECT mnemo.unwatch(NULL);
UNLISTEN mnemo;
