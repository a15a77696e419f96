/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test compares them).
 */
