/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test compares them).
 */

/*
 * Rows written before 0.2.0 that the CHECKs below would refuse are brought
 * within them first (only cost, the token counts, metadata and state could
 * hold such values, and they are all columns 0.1.0's guard lets change).
 */
UPDATE mnemo.messages SET cost = 0 WHERE NOT (cost >= 0 AND cost < 'Infinity'::double precision);
UPDATE mnemo.messages SET tokens_input = greatest(tokens_input, 0),
       tokens_output = greatest(tokens_output, 0), tokens_cache_read = greatest(tokens_cache_read, 0),
       tokens_cache_write = greatest(tokens_cache_write, 0), tokens_reasoning = greatest(tokens_reasoning, 0)
 WHERE least(tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning) < 0;
UPDATE mnemo.sessions SET metadata = jsonb_build_object('value', metadata)
 WHERE jsonb_typeof(metadata) <> 'object';
UPDATE mnemo.sessions SET state = jsonb_build_object('value', state) WHERE jsonb_typeof(state) <> 'object';

/*
 * Integrity the functions check and the table keeps for every other writer
 * (a restore, a superuser): finite non-negative cost, non-negative counts and
 * times, metadata and state objects.  The functions refuse such values first
 * with 22023; these CHECKs (23514) are the backstop.  See doc/limits.md.
 */
ALTER TABLE mnemo.sessions
    ADD CONSTRAINT sessions_times_check CHECK (created_at >= 0 AND updated_at >= 0),
    ADD CONSTRAINT sessions_metadata_check CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object'),
    ADD CONSTRAINT sessions_state_check CHECK (jsonb_typeof(state) = 'object'),
    ADD CONSTRAINT sessions_counters_check CHECK (last_seq >= 0 AND last_position >= 0);
ALTER TABLE mnemo.messages
    ADD CONSTRAINT messages_cost_check CHECK (cost >= 0 AND cost < 'Infinity'::double precision),
    ADD CONSTRAINT messages_tokens_check CHECK (tokens_input >= 0 AND tokens_output >= 0
        AND tokens_cache_read >= 0 AND tokens_cache_write >= 0 AND tokens_reasoning >= 0),
    ADD CONSTRAINT messages_created_at_check CHECK (created_at >= 0);
ALTER TABLE mnemo.message_parts
    ADD CONSTRAINT message_parts_times_check CHECK (compacted_at >= 0 AND started_at >= 0
        AND completed_at >= 0),
    ADD CONSTRAINT message_parts_token_estimate_check CHECK (token_estimate >= 0);
ALTER TABLE mnemo.context_items
    ADD CONSTRAINT context_items_created_at_check CHECK (created_at >= 0);
ALTER TABLE mnemo.summary_nodes
    ADD CONSTRAINT summary_nodes_counts_check CHECK (token_count >= 0 AND created_at >= 0
        AND seq_start <= seq_end);
ALTER TABLE mnemo.file_references
    ADD CONSTRAINT file_references_counts_check CHECK (token_count >= 0 AND created_at >= 0);
