/*
 * maps.c
 *		Maps in the database: create, load, claim, record, status, and the
 *		session a map belongs to.
 *
 * Every statement of the map room is here.  The options that decide how an
 * item is worked (retries, timeouts, prompts, turns) are stored with the
 * map at create, resolved to their defaults, so that every process that
 * runs or resumes the map works its items the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "map/map.h"

static const mn_stmt create_stmt = {
	"mnemo_map_create",
	"SELECT map_id FROM mnemo.create_map($1::text, $2::text, $3::jsonb, $4::text, $5::jsonb, "
	"$6::jsonb, $7::text)",
	7
};

static const mn_stmt load_stmt = {
	"mnemo_map_load",
	"SELECT kind, template, schema::text, options::text, item_count FROM mnemo.list_maps($1::text) "
	"WHERE map_id = $2::text",
	2
};

static const mn_stmt claim_stmt = {
	"mnemo_map_claim",
	"SELECT ordinal, item::text, claims FROM mnemo.claim_map_items($1::text, $2::text, $3::text, "
	"$4::integer, $5::integer)",
	5
};

static const mn_stmt complete_stmt = {
	"mnemo_map_complete",
	"SELECT mnemo.complete_map_item($1::text, $2::text, $3::integer, $4::text, $5::jsonb, "
	"$6::integer, $7::text)",
	7
};

static const mn_stmt fail_stmt = {
	"mnemo_map_fail",
	"SELECT mnemo.fail_map_item($1::text, $2::text, $3::integer, $4::text, $5::text, $6::text, "
	"$7::integer, $8::text)",
	8
};

static const mn_stmt status_stmt = {
	"mnemo_map_status",
	"SELECT kind, items, done, failed, in_flight, pending, created_at, completed_at "
	"FROM mnemo.map_status($1::text, $2::text)",
	2
};

static const mn_stmt session_stmt = {
	"mnemo_map_session",
	"SELECT session_id FROM mnemo.find_map($1::text) LIMIT 2",
	1
};

/* An option as stored: the given value, else the default. */
static int
or_default(int v, int def)
{
	return v != 0 ? v : def;
}

MNEMO_API int
mnemo_map_create(mnemo_store *st, const char *session_id, const char *template_text,
				 const char *items, const mnemo_map_options *opts, char **map_id)
{
	mnemo_map_options none = MNEMO_MAP_OPTIONS_INIT;
	const mnemo_map_options *o = opts ? opts : &none;
	struct json_object *parsed;
	struct json_object *options;
	char		id[MNEMO_ID_MAX + 1];
	const char *params[7];
	PGresult   *res;
	int			rc;

	if (map_id)
		*map_id = NULL;
	if (mn_begin(st, session_id != NULL && template_text != NULL && items != NULL && map_id != NULL,
				 "a session id, a template, items and a result pointer are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	if (mnemo_map_check_template(st, template_text) != MNEMO_OK)
		return st->errcode;
	if (mn_map_parse_json(items, &parsed) != NULL ||
		!json_object_is_type(parsed, json_type_array) || json_object_array_length(parsed) == 0)
	{
		json_object_put(parsed);
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the items must be a non-empty JSON array");
	}
	json_object_put(parsed);
	if (o->schema != NULL)
	{
		if ((parsed = json_tokener_parse(o->schema)) == NULL)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the schema is not JSON");
		rc = mn_schema_check(st, parsed);
		json_object_put(parsed);
		if (rc != MNEMO_OK)
			return rc;
	}
	if (o->max_retries > 10 || o->timeout_ms < 0 || o->backoff_ms < 0 || o->max_turns < 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "max_retries is at most 10; timeouts, backoff and turns are not negative");
	/* a given id goes to the server as it is: it refuses one too long */
	if (o->map_id == NULL && mnemo_new_id(st, "map", id) != MNEMO_OK)
		return st->errcode;

	if ((options = json_object_new_object()) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	json_object_object_add(options, "max_retries",
						   json_object_new_int(o->max_retries < 0 ? 0 : or_default(o->max_retries, 3)));
	json_object_object_add(options, "timeout_ms", json_object_new_int(or_default(o->timeout_ms, 60000)));
	json_object_object_add(options, "backoff_ms", json_object_new_int(or_default(o->backoff_ms, 500)));
	json_object_object_add(options, "max_turns", json_object_new_int(or_default(o->max_turns, 20)));
	if (o->system_prompt)
		json_object_object_add(options, "system_prompt", json_object_new_string(o->system_prompt));
	if (o->retry_guidance)
		json_object_object_add(options, "retry_guidance", json_object_new_string(o->retry_guidance));
	if (o->continuation_message)
		json_object_object_add(options, "continuation_message",
							   json_object_new_string(o->continuation_message));
	params[0] = session_id;
	params[1] = o->map_id ? o->map_id : id;
	params[2] = items;
	params[3] = template_text;
	params[4] = o->schema;
	params[5] = json_object_to_json_string_ext(options, JSON_C_TO_STRING_PLAIN);
	params[6] = o->agentic ? "agentic" : "llm";
	res = mn_exec(st, &create_stmt, params);
	json_object_put(options);
	if (res == NULL)
		return st->errcode;
	PQclear(res);
	if ((*map_id = strdup(params[1])) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	mn_emit(st, MNEMO_EVENT_MAP_STARTED, session_id, *map_id, 0, NULL, false);
	return MNEMO_OK;
}

void
mn_map_clear(mn_map *m)
{
	free(m->session_id);
	free(m->map_id);
	free(m->template_text);
	free(m->schema);
	free(m->system_prompt);
	free(m->retry_guidance);
	free(m->continuation);
	memset(m, 0, sizeof(*m));
}

static int
int_option(struct json_object *options, const char *key, int def)
{
	int64_t		v;

	return mn_js_int(options, key, &v) ? (int) v : def;
}

int
mn_map_load(mnemo_store *st, const char *session_id, const char *map_id, mn_map *m)
{
	const char *params[2] = {session_id, map_id};
	struct json_object *options;
	PGresult   *res;

	memset(m, 0, sizeof(*m));
	if ((res = mn_exec(st, &load_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOT_FOUND, "map \"%s\" of session \"%s\" does not exist",
					   map_id, session_id);
	}
	m->session_id = strdup(session_id);
	m->map_id = strdup(map_id);
	m->agentic = strcmp(PQgetvalue(res, 0, 0), "agentic") == 0;
	m->template_text = strdup(PQgetvalue(res, 0, 1));
	m->schema = PQgetisnull(res, 0, 2) ? NULL : strdup(PQgetvalue(res, 0, 2));
	m->item_count = atoi(PQgetvalue(res, 0, 4));
	options = json_tokener_parse(PQgetvalue(res, 0, 3));
	PQclear(res);
	m->max_retries = int_option(options, "max_retries", 3);
	m->timeout_ms = int_option(options, "timeout_ms", 60000);
	m->backoff_ms = int_option(options, "backoff_ms", 500);
	m->max_turns = int_option(options, "max_turns", 20);
	m->system_prompt = mn_js_text(options, "system_prompt");
	m->retry_guidance = mn_js_text(options, "retry_guidance");
	m->continuation = mn_js_text(options, "continuation_message");
	json_object_put(options);
	if (m->session_id == NULL || m->map_id == NULL || m->template_text == NULL)
	{
		mn_map_clear(m);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	return MNEMO_OK;
}

void
mn_map_item_clear(mn_map_item *it)
{
	free(it->item);
	free(it->output);
	free(it->error);
	memset(it, 0, sizeof(*it));
}

int
mn_map_claim(mnemo_store *st, const mn_map *m, const char *holder, int n, int lease_ms,
			 mn_map_item **items, int *count)
{
	char		nbuf[24];
	char		lbuf[24];
	const char *params[5] = {m->session_id, m->map_id, holder, mn_i64_param(nbuf, n),
	mn_i64_param(lbuf, lease_ms)};
	PGresult   *res;
	int			rows;

	*items = NULL;
	*count = 0;
	if ((res = mn_exec(st, &claim_stmt, params)) == NULL)
		return st->errcode;
	rows = PQntuples(res);
	if (rows > 0 && (*items = calloc((size_t) rows, sizeof(mn_map_item))) == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < rows; i++)
	{
		(*items)[i].ordinal = atoi(PQgetvalue(res, i, 0));
		(*items)[i].item = strdup(PQgetvalue(res, i, 1));
		(*items)[i].claims = atoi(PQgetvalue(res, i, 2));
	}
	*count = rows;
	PQclear(res);
	return MNEMO_OK;
}

int
mn_map_record(mnemo_store *st, const mn_map *m, const char *holder, const mn_map_item *it,
			  bool *recorded, bool *map_done)
{
	char		obuf[24];
	char		abuf[24];
	const char *sub = it->sub_session_id[0] ? it->sub_session_id : NULL;
	const char *params[8];
	PGresult   *res;

	params[0] = m->session_id;
	params[1] = m->map_id;
	params[2] = mn_i64_param(obuf, it->ordinal);
	params[3] = holder;
	if (it->success)
	{
		params[4] = it->output;
		params[5] = mn_i64_param(abuf, it->attempts);
		params[6] = sub;
		res = mn_exec(st, &complete_stmt, params);
	}
	else
	{
		params[4] = it->error_kind;
		params[5] = it->error ? it->error : "";
		params[6] = mn_i64_param(abuf, it->attempts);
		params[7] = sub;
		res = mn_exec(st, &fail_stmt, params);
	}
	if (res == NULL)
		return st->errcode;
	*recorded = !PQgetisnull(res, 0, 0);
	*map_done = *recorded && atoi(PQgetvalue(res, 0, 0)) == m->item_count;
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_map_get_status(mnemo_store *st, const char *session_id, const char *map_id,
					 mnemo_map_status *out)
{
	const char *params[2] = {session_id, map_id};
	PGresult   *res;

	if (mn_begin(st, session_id != NULL && map_id != NULL && out != NULL,
				 "a session id, a map id and a result pointer are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	memset(out, 0, sizeof(*out));
	if ((res = mn_exec(st, &status_stmt, params)) == NULL)
		return st->errcode;
	out->agentic = strcmp(PQgetvalue(res, 0, 0), "agentic") == 0;
	out->items = atoi(PQgetvalue(res, 0, 1));
	out->done = atoi(PQgetvalue(res, 0, 2));
	out->failed = atoi(PQgetvalue(res, 0, 3));
	out->in_flight = atoi(PQgetvalue(res, 0, 4));
	out->pending = atoi(PQgetvalue(res, 0, 5));
	out->created_at = atoll(PQgetvalue(res, 0, 6));
	out->completed_at = PQgetisnull(res, 0, 7) ? 0 : atoll(PQgetvalue(res, 0, 7));
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_map_session(mnemo_store *st, const char *map_id, char **session_id)
{
	const char *params[1] = {map_id};
	PGresult   *res;
	int			rows;

	if (session_id)
		*session_id = NULL;
	if (mn_begin(st, map_id != NULL && session_id != NULL,
				 "a map id and a result pointer are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	if ((res = mn_exec(st, &session_stmt, params)) == NULL)
		return st->errcode;
	rows = PQntuples(res);
	if (rows == 1)
		*session_id = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (rows == 0)
		return mn_fail(st, MNEMO_ERR_NOT_FOUND, "no map \"%s\"", map_id);
	if (rows > 1)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "map id \"%s\" is in several sessions: name the session", map_id);
	return *session_id ? MNEMO_OK : mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}

int
mn_map_lease_ms(const mn_map *m, const mnemo_map_options *o)
{
	int64_t		lease;

	if (o->lease_ms > 0)
		return o->lease_ms;
	lease = (int64_t) m->timeout_ms * (m->agentic ? m->max_turns : m->max_retries + 1) + 30000;
	if (!m->agentic)
		lease += (int64_t) m->backoff_ms << (m->max_retries < 20 ? m->max_retries : 20);
	return lease > 2000000000 ? 2000000000 : (int) lease;
}
