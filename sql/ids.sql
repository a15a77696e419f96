--
-- ids: mnemo.new_id(), mnemo.estimate_tokens(), mnemo.version()
--

-- version: the library's version is the installed extension's
SELECT mnemo.version();
SELECT mnemo.version() = extversion AS matches_extension
  FROM pg_extension WHERE extname = 'mnemo';

--
-- new_id: prefix, '_', 26 Crockford base32 characters (no I, L, O, U)
--
SELECT id ~ '^msg_[0-9A-HJKMNP-TV-Z]{26}$' AS format_ok, length(id)
  FROM mnemo.new_id('msg') AS id;
SELECT mnemo.new_id('sess') ~ '^sess_[0-9A-HJKMNP-TV-Z]{26}$' AS sess_ok,
       mnemo.new_id('part') ~ '^part_[0-9A-HJKMNP-TV-Z]{26}$' AS part_ok,
       mnemo.new_id('sum') ~ '^sum_[0-9A-HJKMNP-TV-Z]{26}$' AS sum_ok;
-- letters, digits, '_' and '-' are allowed; 1 and 32 characters are the bounds
SELECT mnemo.new_id('a-B_9') ~ '^a-B_9_[0-9A-HJKMNP-TV-Z]{26}$' AS mixed_ok,
       mnemo.new_id('x') ~ '^x_[0-9A-HJKMNP-TV-Z]{26}$' AS one_char_ok,
       length(mnemo.new_id(repeat('p', 32))) AS len_32_prefix;

-- the first 10 characters are the unix time in milliseconds: it decodes to now
WITH t AS (SELECT substr(mnemo.new_id('t'), 3, 10) AS enc),
     d AS (SELECT sum((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(enc, k, 1)) - 1)::numeric
                      * 32::numeric ^ (10 - k)) AS ms
             FROM t, generate_series(1, 10) AS k)
SELECT abs(ms - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS time_is_now FROM d;

-- ids made later sort later: 10000 ids in one statement (mostly within one
-- millisecond) are all distinct and strictly increasing in creation order
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       bool_and(prev < id COLLATE "C") AS strictly_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, mnemo.new_id('o') AS id FROM generate_series(1, 10000) AS n) AS g) AS l;

-- ... across statements
SELECT mnemo.new_id('o') AS first_id \gset
SELECT pg_sleep(0.01);
SELECT mnemo.new_id('o') > :'first_id' COLLATE "C" AS later_sorts_later;
-- ... and across backends
SELECT pg_sleep(0.01);
\c
SELECT mnemo.new_id('o') > :'first_id' COLLATE "C" AS later_sorts_later_other_backend;

-- bad prefixes: 22023; NULL: 22004
\set VERBOSITY sqlstate
SELECT mnemo.new_id('');
SELECT mnemo.new_id(repeat('p', 33));
SELECT mnemo.new_id('a b');
SELECT mnemo.new_id('a.b');
SELECT mnemo.new_id('ü');
SELECT mnemo.new_id('x/y');
SELECT mnemo.new_id(NULL);
\set VERBOSITY default

--
-- estimate_tokens: 0 for '', otherwise max(1, characters / 4)
--
SELECT mnemo.estimate_tokens('') AS empty,
       mnemo.estimate_tokens('a') AS one_char,
       mnemo.estimate_tokens('abc') AS three,
       mnemo.estimate_tokens('abcd') AS four,
       mnemo.estimate_tokens('abcdefg') AS seven,
       mnemo.estimate_tokens('abcdefgh') AS eight,
       mnemo.estimate_tokens(' ') AS space,
       mnemo.estimate_tokens(repeat('x', 4003)) AS x4003;
-- characters, not bytes
SELECT octet_length(repeat('é', 8)) AS bytes, mnemo.estimate_tokens(repeat('é', 8)) AS tokens;
SELECT octet_length(repeat('日本', 6)) AS bytes, mnemo.estimate_tokens(repeat('日本', 6)) AS tokens;
SELECT octet_length('😀😀😀😀') AS bytes, mnemo.estimate_tokens('😀😀😀😀') AS tokens;
-- agrees with the formula on a range of lengths
SELECT bool_and(mnemo.estimate_tokens(repeat('ä', n)) =
                CASE WHEN n = 0 THEN 0 ELSE greatest(1, n / 4) END) AS formula_holds
  FROM generate_series(0, 100) AS n;
-- and counts characters as PostgreSQL does, in text mixing 1- to 4-byte ones
SELECT bool_and(mnemo.estimate_tokens(s) = greatest(1, char_length(s) / 4)) AS agrees_with_char_length
  FROM (SELECT repeat('aé日😀', n) || left('x🙂', n % 3) AS s FROM generate_series(1, 60) AS n) AS t;
-- STRICT: NULL in, NULL out
SELECT mnemo.estimate_tokens(NULL) IS NULL AS null_is_null;

--
-- ids a person or a script could not tell apart or type back: refused
-- (22023) wherever an id is given, nothing written
--
SELECT count(*) AS sessions_before FROM mnemo.sessions \gset
SELECT mnemo.create_session('   ');
SELECT mnemo.create_session(E'ids_a\nb');
SELECT mnemo.create_session(E'ids_\tb');
SELECT mnemo.create_session(E'ids_\x1b[31m');
SELECT mnemo.create_session(E'ids_\x7f');
SELECT count(*) = :sessions_before AS no_session_written FROM mnemo.sessions;
-- spaces inside an id, and any UTF-8, are fine
SELECT (mnemo.create_session('ids a b')).id;
SELECT (mnemo.create_session('ids_ünï')).id;
SELECT mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "x"}]', ' ');
SELECT mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "x"}]', E'm\r');
SELECT mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "x", "id": "  "}]');
SELECT mnemo.append_messages('ids a b', '[{"role": "user", "parts": [], "id": "ok"}, {"role": "user", "parts": [], "id": "\u0001"}]');
SELECT mnemo.add_checkpoint('ids a b', ' ');
SELECT mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "x"}]', run_id => '');
SELECT mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "x"}]', run_id => E'r\t1');
SELECT mnemo.append_messages('ids a b', '[{"role": "user", "parts": [], "run_id": "  "}]');
SELECT count(*) AS messages_written FROM mnemo.messages WHERE session_id = 'ids a b';

--
-- list arguments (text[]) are one-dimensional, without nulls: a
-- two-dimensional array was read flat before
--
SELECT (mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "one"}]', 'ids_m1')).seq;
SELECT (mnemo.append_message('ids a b', 'user', '[{"type": "text", "text": "two"}]', 'ids_m2')).seq;
\set VERBOSITY sqlstate
SELECT mnemo.swap_context_items('ids a b', '{{ids_m1},{ids_m2}}', 'ids_s');
SELECT mnemo.swap_context_items('ids a b', ARRAY['ids_m1', NULL], 'ids_s');
SELECT mnemo.commit_summary('ids a b', 'ids_s', 'sum', 5, '{{ids_m1,ids_m2}}', 'leaf', 1, NULL, NULL);
SELECT mnemo.commit_summary('ids a b', 'ids_s', 'sum', 5, '{ids_m1,ids_m2}', 'leaf', 1, NULL, NULL, NULL, NULL, '{{p1},{p2}}');
SELECT mnemo.commit_summary('ids a b', 'ids_s', 'sum', 5, '{ids_m1,ids_m2}', 'leaf', 1, NULL, NULL, NULL, NULL, ARRAY['p1', NULL]);
SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('ids a b', '{{ids_m1},{ids_m2}}');
SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('ids a b', ARRAY[NULL]::text[]);
SELECT mnemo.prune_tool_outputs('ids a b', 0, 0, '{{bash},{grep}}');
SELECT mnemo.file_id_footer('x', '{{file_a},{file_b}}');
SELECT mnemo.file_id_footer('x', ARRAY['file_a', NULL]);
\set VERBOSITY default
SELECT mnemo.swap_context_items('ids a b', '{{ids_m1},{ids_m2}}', 'ids_s');
-- nothing was swapped or written; a one-dimensional list works, with any lower bound
SELECT count(*) AS messages, count(*) FILTER (WHERE is_summary) AS summaries
  FROM mnemo.messages WHERE session_id = 'ids a b';
SELECT mnemo.commit_summary('ids a b', 'ids_s', 'sum', 5, '[0:1]={ids_m1,ids_m2}', 'leaf', 1, NULL, NULL) AS position;
SELECT item_type, item_id FROM mnemo.get_context_items('ids a b') ORDER BY position;
SELECT mnemo.file_id_footer('x', '[5:6]={file_a,file_b}');
SELECT mnemo.purge_session('ids a b');
SELECT mnemo.purge_session('ids_ünï');
