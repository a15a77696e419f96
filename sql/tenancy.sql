--
-- tenancy: NOTIFY payloads reach only a listener that knows the tenant's
-- channel.  In 0.1.0 every watched session notified channel "mnemo", which
-- any role could LISTEN to and so read every watched session's ids.  Here
-- one connection LISTENs as tenant role tn_b on "mnemo" and on its own
-- channel while tenant tn_a writes to its watched session: nothing arrives;
-- once it LISTENs on tn_a's channel (which only tn_a can learn), it does.
--
\set VERBOSITY terse
CREATE ROLE tn_a;
CREATE ROLE tn_b;
GRANT USAGE ON SCHEMA mnemo TO tn_a, tn_b;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO tn_a, tn_b;

SET ROLE tn_a;
SELECT id FROM mnemo.create_session('tn_a_s');
SELECT mnemo.watch('tn_a_s') AS a_channel \gset
RESET ROLE;
SET ROLE tn_b;
SELECT id FROM mnemo.create_session('tn_b_s');
SELECT mnemo.watch('tn_b_s') AS b_channel \gset
SELECT :'a_channel' <> :'b_channel' AS different_channels;
-- tn_b cannot learn tn_a's channel: not from the table, not from watch
SELECT count(*) AS a_rows_seen FROM mnemo.tenants WHERE channel = :'a_channel';
SELECT mnemo.watch('tn_a_s');
LISTEN mnemo;
LISTEN :"b_channel";
RESET ROLE;

SET ROLE tn_a;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('tn_a_s', 'user', '[{"type": "text", "text": "private"}]', id => 'tn_m1');
SELECT 'nothing above: no payload on mnemo or on tn_b''s channel' AS listening_as_b;
\o
LISTEN :"a_channel";
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT seq FROM mnemo.append_message('tn_a_s', 'user', '[]', id => 'tn_m2');
\o
UNLISTEN *;
RESET ROLE;

SELECT mnemo.purge_session('tn_a_s') + mnemo.purge_session('tn_b_s') AS purged;
DELETE FROM mnemo.tenants WHERE tenant IN ('tn_a', 'tn_b');
DROP OWNED BY tn_a, tn_b;
DROP ROLE tn_a, tn_b;
