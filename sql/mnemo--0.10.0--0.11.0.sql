/* mnemo 0.10.0 -> 0.11.0: ALTER EXTENSION mnemo UPDATE TO '0.11.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.11.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.11.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.11.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 *
 * 0.11.0 changes no SQL object.  Its library stores a part's content
 * compressed once it is 256 bytes long, where PostgreSQL compresses a value
 * only in a row past 2 kB (src/core/insert_direct.c); the rows stored
 * before stay as they are, and every row reads the same either way.
 */
