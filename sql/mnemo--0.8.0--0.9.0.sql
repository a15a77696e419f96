/* mnemo 0.8.0 -> 0.9.0: ALTER EXTENSION mnemo UPDATE TO '0.9.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.9.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.9.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.9.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A part carries its message's seq, and the parts are keyed by
 * (session_id, tenant, seq, part_index) where they were keyed by the
 * message's id: a message's parts are a range of the key a history read
 * walks beside the messages' own (src/reads/flat.c), and the key holds a
 * bigint where it held the message's text id.  The UPDATE writes a new
 * version of every part row (its content's TOAST is not rewritten); on a
 * partitioned install the partitions follow their parent.
 */
ALTER TABLE mnemo.message_parts ADD COLUMN seq bigint;
UPDATE mnemo.message_parts p SET seq = m.seq
  FROM mnemo.messages m
 WHERE m.session_id = p.session_id AND m.tenant = p.tenant AND m.id = p.message_id;
ALTER TABLE mnemo.message_parts ALTER COLUMN seq SET NOT NULL;
-- two statements: Citus runs an ADD CONSTRAINT only alone
ALTER TABLE mnemo.message_parts ADD CONSTRAINT message_parts_session_id_tenant_seq_part_index_key
    UNIQUE (session_id, tenant, seq, part_index);
ALTER TABLE mnemo.message_parts
    DROP CONSTRAINT message_parts_session_id_tenant_message_id_part_index_key;
