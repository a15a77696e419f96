/*
 * compact_helpers.h
 *		What the compaction tests (t_compact.c, t_compact_default.c,
 *		t_compact_close.c) share: a session of long-ish turns, the first
 *		with a file reference, the engine's options for the scripted
 *		provider server, and a count read on a connection of its own.
 *		Include after helpers.h and provider.h.
 */
#ifndef MNEMO_TEST_COMPACT_HELPERS_H
#define MNEMO_TEST_COMPACT_HELPERS_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"

#define CONTENT_ID "sha256:00c0ffee00c0ffee"

/*
 * A session of `turns` user/assistant pairs of long-ish text, the first
 * user message with a file reference.
 */
static inline void
conversation_with(mnemo_store *st, const char *sid, int turns, const char *system_prompt)
{
	mnemo_new_session spec = {0};
	int			i;

	spec.id = sid;
	spec.provider_id = "openai";
	spec.model_id = "gpt-chat";
	spec.system_prompt = system_prompt;
	create_session(st, &spec);
	for (i = 0; i < turns; i++)
	{
		mnemo_new_message m[2];
		mnemo_new_part user[2];
		mnemo_new_part answer;
		char		utext[700],
					atext[700];

		memset(m, 0, sizeof(m));
		memset(user, 0, sizeof(user));
		memset(&answer, 0, sizeof(answer));
		snprintf(utext, sizeof(utext), "Question %d: %0600d", i, i);
		snprintf(atext, sizeof(atext), "Answer %d: %0600d", i, i);
		user[0].type = "text";
		user[0].text = utext;
		user[1].type = "file_ref";
		user[1].content_id = CONTENT_ID;
		user[1].path = "/src/big.c";
		answer.type = "text";
		answer.text = atext;
		m[0].role = "user";
		m[0].parts = user;
		m[0].n_parts = i == 0 ? 2 : 1;
		m[1].role = "assistant";
		m[1].parts = &answer;
		m[1].n_parts = 1;
		if (mnemo_messages_append(st, sid, m, 2, NULL) != MNEMO_OK)
			bail_out("append: %s", mnemo_errmsg(st));
	}
}

/* The number the query's one row starts with, on a connection of its own
 * (the compactor's tables, read as a test sees them from outside). */
static inline int
count_sql(const char *sql)
{
	PGconn	   *conn = PQconnectdb("");
	PGresult   *res = PQexec(conn, sql);
	int			n;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(conn);
	return n;
}

static inline void
conversation(mnemo_store *st, const char *sid, int turns)
{
	conversation_with(st, sid, turns, NULL);
}

static inline void
options(mnemo_compact_options *o, const server *s, char *url, size_t urlsize)
{
	mnemo_compact_options init = MNEMO_COMPACT_OPTIONS_INIT;

	*o = init;
	o->provider = "openai";
	o->model = "gpt-compact";
	snprintf(url, urlsize, "%s/v1", s->url);
	o->base_url = url;
	o->api_key = KEY;
	o->max_retries = -1;
	o->tail_messages = 2;
}

#endif
