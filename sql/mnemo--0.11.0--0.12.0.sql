/* mnemo 0.11.0 -> 0.12.0: ALTER EXTENSION mnemo UPDATE TO '0.12.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.12.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.12.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.12.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 *
 * 0.12.0's library stores the search documents of parts shorter than
 * 1,024 characters without their words' positions (src/reads/search_index.c,
 * search_words.c).  The documents
 * stored before keep theirs and are searched the same way; nothing is
 * rewritten here, since that would be the whole table in one transaction
 * (doc/operations.md, Search indexing, says how to take the space back).
 */
COMMENT ON TABLE mnemo.search_documents IS 'the searched words of each indexed part, a part shorter than 1,024 characters'' without their positions (configuration simple, the first 100,000 characters of its text fields), keyed by the message''s seq';
