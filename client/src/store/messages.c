/*
 * messages.c
 *		Appending messages, recording their usage, and reading them back.
 *
 * An append is one statement: append_message with the parts as one jsonb
 * argument, or append_messages with the whole batch as one jsonb array, so
 * a message and all its parts (and a batch and all its messages) are stored
 * atomically by the server and an error leaves nothing behind.  Each stored
 * message is then published on the handle as MNEMO_EVENT_MESSAGE_CREATED,
 * after the server answered: a handler never hears of a message that was
 * not committed.
 *
 * Reads return mnemo.messages rows (no parts) or mnemo.message_with_parts
 * rows, whose "parts" column mn_message_from_row parses; a whole history
 * with its parts comes as get_messages_flat's rows, one per part, which
 * cost the server no JSON assembly (mn_messages_from_flat puts them
 * together).  libpq's single-row mode and binary results were measured on
 * that read and gained nothing (bench/profiles/reads.txt): the result is
 * read whole, as text.
 */
#include <locale.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "events/events.h"
#include "store/store.h"

#define MESSAGE_COLUMNS \
	"session_id, seq, id, role, created_at, agent, model_id, provider_id, run_id, " \
	"is_summary, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, " \
	"tokens_reasoning, cost, finish_reason"

static const mn_stmt append_stmt = {
	"mnemo_message_append",
	"SELECT id, seq FROM mnemo.append_message($1::text, $2::text, $3::jsonb, "
	"id => $4::text, agent => $5::text, model_id => $6::text, provider_id => $7::text, "
	"run_id => $8::text, is_summary => $9::boolean)",
	9
};

static const mn_stmt append_batch_stmt = {
	"mnemo_messages_append",
	"SELECT id, seq FROM mnemo.append_messages($1::text, $2::jsonb)",
	2
};

static const mn_stmt update_tokens_stmt = {
	"mnemo_message_update_tokens",
	"SELECT mnemo.update_message_tokens($1::text, $2::text, $3::jsonb, $4::double precision, "
	"$5::text)",
	5
};

static const mn_stmt get_stmt = {
	"mnemo_message_get",
	"SELECT " MESSAGE_COLUMNS " FROM mnemo.get_message($1::text, $2::text)",
	2
};

static const mn_stmt get_all_stmt = {
	"mnemo_messages_get",
	"SELECT " MESSAGE_COLUMNS " FROM mnemo.get_messages($1::text, $2::text)",
	2
};

/* one row per part, nothing assembled by the server (mn_messages_from_flat) */
static const mn_stmt get_all_parts_stmt = {
	"mnemo_messages_get_flat",
	"SELECT * FROM mnemo.get_messages_flat($1::text, $2::text)",
	2
};

static const mn_stmt get_by_ids_stmt = {
	"mnemo_messages_get_by_ids",
	"SELECT " MESSAGE_COLUMNS ", parts FROM mnemo.get_messages_with_parts_by_ids($1::text, "
	"$2::text[])",
	2
};

static const mn_stmt discarded_stmt = {
	"mnemo_discarded_list",
	"SELECT " MESSAGE_COLUMNS ", parts FROM mnemo.list_discarded($1::text)",
	1
};

static const mn_stmt history_stmt = {
	"mnemo_history",
	"SELECT " MESSAGE_COLUMNS ", parts FROM mnemo.history($1::text, $2::integer)",
	2
};

static const mn_stmt last_summary_stmt = {
	"mnemo_summary_last",
	"SELECT " MESSAGE_COLUMNS " FROM mnemo.last_summary($1::text)",
	1
};

/* Row `row` of an (id, seq) result as a message ref. */
static int
ref_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_message_ref *ref)
{
	int			id_col = mn_col(res, "id");
	int			seq_col = mn_col(res, "seq");

	if (id_col < 0 || seq_col < 0 || PQgetisnull(res, row, id_col))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "an append returned no message id");
	ref->seq = mn_get_i64(res, row, seq_col);
	return mn_id_copy(st, PQgetvalue(res, row, id_col), "message", ref->id);
}

int
mn_message_append_call(mnemo_store *st, const char *session_id, const mnemo_new_message *msg,
					   mn_call *call)
{
	if (session_id == NULL || msg == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and message are required");
	if (msg->role == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "message role is required");
	if ((call->json = mn_parts_to_json(st, msg->parts, msg->n_parts)) == NULL)
		return st->errcode;
	call->stmt = &append_stmt;
	call->params[0] = session_id;
	call->params[1] = msg->role;
	call->params[2] = mn_json_text(st, call->json);
	call->params[3] = msg->id;
	call->params[4] = msg->agent;
	call->params[5] = msg->model_id;
	call->params[6] = msg->provider_id;
	call->params[7] = msg->run_id;
	call->params[8] = msg->is_summary ? "true" : "false";
	return call->params[2] != NULL ? MNEMO_OK : st->errcode;
}

int
mn_message_ref_of(mnemo_store *st, mn_call *call, mnemo_message_ref *ref)
{
	PGresult   *res = call->res;
	int			rc;

	call->res = NULL;
	if (PQntuples(res) != 1)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_message returned %d rows", PQntuples(res));
	else
		rc = ref_from_row(st, res, 0, ref);
	PQclear(res);
	return rc;
}

MNEMO_API int
mnemo_message_append(mnemo_store *st, const char *session_id,
					 const mnemo_new_message *msg, mnemo_message_ref *ref)
{
	mn_call		call = {0};
	mnemo_message_ref got;
	int			rc;

	if ((rc = mn_begin(st, true, NULL)) != MNEMO_OK)
		return rc;
	if ((rc = mn_message_append_call(st, session_id, msg, &call)) == MNEMO_OK &&
		(rc = mn_call_run(st, &call)) == MNEMO_OK)
		rc = mn_message_ref_of(st, &call, &got);
	mn_call_clear(&call);
	if (rc != MNEMO_OK)
		return rc;
	if (ref != NULL)
		*ref = got;
	mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, session_id, got.id, got.seq, NULL, false);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_messages_append(mnemo_store *st, const char *session_id,
					  const mnemo_new_message *msgs, size_t n, mnemo_message_ref *refs)
{
	struct json_object *array;
	const char *params[2];
	PGresult   *res;
	mnemo_message_ref *got;
	size_t		i;
	int			rc = MNEMO_OK;

	if ((rc = mn_begin(st, session_id != NULL, "session id is required")) != MNEMO_OK)
		return rc;
	if (n > 0 && msgs == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "n is %zu but msgs is NULL", n);
	if (n > (size_t) INT32_MAX)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "too many messages in one call");

	array = json_object_new_array_ext((int) n);
	if (array == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
	{
		struct json_object *m = mn_message_to_json(st, &msgs[i]);

		if (m == NULL)
		{
			json_object_put(array);
			return st->errcode;
		}
		if (json_object_array_add(array, m) != 0)
		{
			json_object_put(m);
			json_object_put(array);
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		}
	}
	/* the refs are gathered apart so that a failure leaves the caller's alone */
	got = malloc((n > 0 ? n : 1) * sizeof(*got));
	params[0] = session_id;
	params[1] = got != NULL ? mn_json_text(st, array) : NULL;
	if (params[1] == NULL)
	{
		json_object_put(array);
		free(got);
		return got == NULL ? mn_fail(st, MNEMO_ERR_NOMEM, "out of memory") : st->errcode;
	}
	res = mn_exec(st, &append_batch_stmt, params);
	json_object_put(array);
	if (res == NULL)
	{
		free(got);
		return st->errcode;
	}
	if ((size_t) PQntuples(res) != n)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_messages returned %d rows for %zu messages",
					 PQntuples(res), n);
	for (i = 0; rc == MNEMO_OK && i < n; i++)
		rc = ref_from_row(st, res, (int) i, &got[i]);
	PQclear(res);
	if (rc != MNEMO_OK)
	{
		free(got);
		return rc;
	}
	if (refs != NULL && n > 0)
		memcpy(refs, got, n * sizeof(*got));
	for (i = 0; i < n; i++)
		mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, session_id, got[i].id, got[i].seq, NULL, false);
	free(got);
	return MNEMO_OK;
}

/* A double as SQL text, with '.' whatever LC_NUMERIC says. */
static const char *
float_param(char *buf, size_t size, double v)
{
	const char *point = localeconv()->decimal_point;
	char	   *p;

	snprintf(buf, size, "%.17g", v);
	if (point != NULL && point[0] != '\0' && strcmp(point, ".") != 0)
	{
		p = strstr(buf, point);
		if (p != NULL)
		{
			size_t		plen = strlen(point);

			*p = '.';
			memmove(p + 1, p + plen, strlen(p + plen) + 1);
		}
	}
	return buf;
}

int
mn_message_update_tokens_call(mnemo_store *st, const char *session_id, const char *message_id,
							  const mnemo_tokens *tokens, double cost, const char *finish_reason,
							  mn_call *call)
{
	if (session_id == NULL || message_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and message id are required");
	/* JSON has no NaN nor Infinity, and the server refuses them: send nothing */
	if (!isfinite(cost))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "cost must be a finite number");
	if (tokens != NULL && (tokens->input < 0 || tokens->output < 0 || tokens->cache_read < 0 ||
						   tokens->cache_write < 0 || tokens->reasoning < 0))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "token counts must not be negative");
	if ((call->heap = malloc(256)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (tokens != NULL)
		snprintf(call->heap, 256,
				 "{\"input\":%" PRId64 ",\"output\":%" PRId64 ",\"cache_read\":%" PRId64
				 ",\"cache_write\":%" PRId64 ",\"reasoning\":%" PRId64 "}",
				 tokens->input, tokens->output, tokens->cache_read, tokens->cache_write,
				 tokens->reasoning);
	else
		strcpy(call->heap, "{}");	/* no key: every count stays */
	call->stmt = &update_tokens_stmt;
	call->params[0] = session_id;
	call->params[1] = message_id;
	call->params[2] = call->heap;
	call->params[3] = cost >= 0 ? float_param(call->num, sizeof(call->num), cost) : NULL;
	call->params[4] = finish_reason;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_message_update_tokens(mnemo_store *st, const char *session_id, const char *message_id,
							const mnemo_tokens *tokens, double cost,
							const char *finish_reason)
{
	mn_call		call = {0};
	int			rc;

	if ((rc = mn_begin(st, true, NULL)) == MNEMO_OK &&
		(rc = mn_message_update_tokens_call(st, session_id, message_id, tokens, cost,
											finish_reason, &call)) == MNEMO_OK)
		rc = mn_call_run(st, &call);
	mn_call_clear(&call);
	return rc;
}

static int
message_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	return mn_message_from_row(st, res, row, item);
}

/* The rows of res as a new list; res is cleared. */
MN_LIST_RESULT(messages_result, mnemo_messages, message_from_row, mnemo_messages_free)

int
mn_messages_from_rows(mnemo_store *st, PGresult *res, mnemo_messages **out)
{
	return messages_result(st, res, out);
}

/*
 * The single message row of res as a new message; res is cleared.  A row
 * of NULLs (a function returning a NULL composite) gives *out = NULL when
 * none_ok, and PROTOCOL otherwise.
 */
static int
message_result(mnemo_store *st, PGresult *res, bool none_ok, mnemo_message **out)
{
	void	   *m;
	int			rc;

	rc = mn_row_new(st, res, "message", "id", sizeof(mnemo_message), message_from_row, &m);
	if (rc != MNEMO_OK)
		return rc;
	if (m == NULL && !none_ok)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the message row has no id");
	*out = m;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_message_get(mnemo_store *st, const char *session_id, const char *id, mnemo_message **out)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && id != NULL && out != NULL,
					   "session id, message id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = id;
	return message_result(st, mn_exec(st, &get_stmt, params), false, out);
}

MNEMO_API int
mnemo_messages_get(mnemo_store *st, const char *session_id, const char *since_message_id,
				   bool with_parts, mnemo_messages **out)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = since_message_id;
	if (with_parts)
	{
		PGresult   *res = mn_exec(st, &get_all_parts_stmt, params);

		if (res == NULL)
			return st->errcode;
		rc = mn_messages_from_flat(st, res, out);
		PQclear(res);
		return rc;
	}
	return messages_result(st, mn_exec(st, &get_all_stmt, params), out);
}

MNEMO_API int
mnemo_messages_get_by_ids(mnemo_store *st, const char *session_id, const char *const *ids,
						  size_t n, mnemo_messages **out)
{
	const char *params[2];
	char	   *array;
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL && (n == 0 || ids != NULL),
					   "session id, ids and out are required")) != MNEMO_OK)
		return rc;
	array = mn_id_array(st, ids, n, "ids");
	if (array == NULL)
		return st->errcode;
	params[0] = session_id;
	params[1] = array;
	res = mn_exec(st, &get_by_ids_stmt, params);
	free(array);
	if (res == NULL)
		return st->errcode;
	return messages_result(st, res, out);
}

MNEMO_API int
mnemo_history(mnemo_store *st, const char *session_id, int limit, mnemo_messages **out)
{
	char		limit_text[24];
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = limit < 0 ? NULL : mn_i64_param(limit_text, limit);
	return messages_result(st, mn_exec(st, &history_stmt, params), out);
}

MNEMO_API int
mnemo_summary_last(mnemo_store *st, const char *session_id, mnemo_message **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return message_result(st, mn_exec(st, &last_summary_stmt, params), true, out);
}

MNEMO_API int
mnemo_discarded_list(mnemo_store *st, const char *session_id, mnemo_messages **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return messages_result(st, mn_exec(st, &discarded_stmt, params), out);
}
