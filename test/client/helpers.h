/*
 * helpers.h
 *		What several client test programs do the same way: check an error
 *		code with its SQLSTATE, open a store, create a session or append a
 *		one-part message or bail out, read one value with SQL.  Include
 *		after tap.h.
 */
#ifndef MNEMO_TEST_HELPERS_H
#define MNEMO_TEST_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"

/* The code a call returned, its error message in the description. */
#define is_code(st, rc, code, what) \
	is_int((rc), (code), "%s: %s (%s)", (what), mnemo_strerror(code), mnemo_errmsg(st))

/* Two tests: the code a call returned, and the SQLSTATE the handle kept. */
#define is_err(st, rc, code, state, what) \
	do { \
		is_int((rc), (code), "%s: %s", (what), mnemo_strerror(code)); \
		is_str(mnemo_sqlstate(st), (state), "%s: SQLSTATE \"%s\"", (what), (state)); \
	} while (0)

/* A store on conninfo (NULL: the environment), or bail out. */
static inline mnemo_store *
open_store(const char *conninfo)
{
	mnemo_store *st = mnemo_store_open(conninfo);

	if (st == NULL)
		bail_out("mnemo_store_open: out of memory");
	if (mnemo_errcode(st) != MNEMO_OK)
		bail_out("mnemo_store_open(%s): %s", conninfo ? conninfo : "", mnemo_errmsg(st));
	return st;
}

/* Create the session spec describes, or bail out. */
static inline void
create_session(mnemo_store *st, const mnemo_new_session *spec)
{
	mnemo_session *s = NULL;

	if (mnemo_session_create(st, spec, &s) != MNEMO_OK)
		bail_out("create %s: %s", spec->id ? spec->id : "a session", mnemo_errmsg(st));
	mnemo_session_free(s);
}

/* A session with this id and the defaults, or bail out. */
static inline void
new_session(mnemo_store *st, const char *id)
{
	mnemo_new_session spec = {0};

	spec.id = id;
	create_session(st, &spec);
}

/* Append msg (its role, id, flags) with one text part, or bail out. */
static inline void
append_text_message(mnemo_store *st, const char *session_id, mnemo_new_message *msg,
					const char *text)
{
	mnemo_new_part part = MNEMO_NEW_PART_INIT;

	part.type = "text";
	part.text = text;
	msg->n_parts = 1;
	msg->parts = &part;
	if (mnemo_message_append(st, session_id, msg, NULL) != MNEMO_OK)
		bail_out("append to %s: %s", session_id, mnemo_errmsg(st));
	msg->parts = NULL;
	msg->n_parts = 0;
}

/* One value from SQL on a connection of its own, malloc'd. */
static inline char *
sql_value(const char *sql, const char *param)
{
	PGconn	   *conn = PQconnectdb("");
	const char *params[1] = {param};
	PGresult   *res = PQexecParams(conn, sql, param ? 1 : 0, NULL, params, NULL, NULL, 0);
	char	   *v;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	/* not strdup: every test includes this, in C11 without POSIX too */
	v = malloc(strlen(PQgetvalue(res, 0, 0)) + 1);
	if (v == NULL)
		bail_out("out of memory");
	strcpy(v, PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(conn);
	return v;
}

#endif							/* MNEMO_TEST_HELPERS_H */
