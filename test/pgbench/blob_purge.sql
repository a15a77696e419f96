-- pgbench script for test/concurrency.sh: appends and purges racing on the
-- same few images (src/log/blobs.c).  Each transaction appends image k to a new
-- session and to the client's own session conc_img_<client_id>; then the
-- new session is purged, taking its reference off image k while the other
-- clients append it.
\set k random(0, 2)
BEGIN;
SELECT id AS sid FROM mnemo.create_session() \gset
SELECT seq FROM mnemo.append_message(:sid, 'user', conc_image(:k));
SELECT seq FROM mnemo.append_message('conc_img_' || :client_id, 'user', conc_image(:k));
COMMIT;
SELECT mnemo.purge_session(:sid);
