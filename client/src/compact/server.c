/*
 * server.c
 *		The deterministic half of compaction, on the server so that every
 *		client compacts by the same rules: the block picker, the file-id
 *		footer, Level 3 and the claim, one statement each.
 *
 * Arrays travel as JSON text, which json-c reads, rather than in
 * PostgreSQL's array syntax.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact/compact.h"

static const mn_stmt block_stmt = {
	"mnemo_compaction_block",
	"SELECT kind, to_json(item_ids)::text AS item_ids, content, tokens, "
	"to_json(file_ids)::text AS file_ids "
	"FROM mnemo.compaction_block($1::text, $2::text, $3::integer, $4::integer, $5::integer, "
	"$6::integer, $7::integer, $8::integer)",
	8
};

/* through functions: an application role reads no table (doc/security.md) */
static const mn_stmt release_any_stmt = {
	"mnemo_release_any_compaction",
	"SELECT h.holder, CASE WHEN h.holder IS NOT NULL "
	"THEN mnemo.release_compaction($1::text, h.holder) END "
	"FROM mnemo.compaction_holder($1::text) AS h(holder)",
	1
};

static const mn_stmt footer_stmt = {
	"mnemo_file_id_footer",
	"SELECT mnemo.file_id_footer($1::text, "
	"ARRAY(SELECT json_array_elements_text($2::json))) AS text",
	2
};

static const mn_stmt truncate_stmt = {
	"mnemo_truncate_summary",
	"SELECT mnemo.truncate_summary($1::text, $2::integer) AS text",
	2
};

static const mn_stmt claim_stmt = {
	"mnemo_claim_compaction",
	"SELECT mnemo.claim_compaction($1::text, $2::text, $3::integer) AS taken",
	3
};

static const mn_stmt release_stmt = {
	"mnemo_release_compaction",
	"SELECT mnemo.release_compaction($1::text, $2::text, $3::text, $4::bigint, $5::bigint, "
	"$6::integer, $7::text, $8::text)",
	8
};

void
mn_block_clear(mn_block *b)
{
	free(b->content);
	json_object_put(b->item_ids);
	json_object_put(b->file_ids);
	memset(b, 0, sizeof(*b));
}

static json_object *
id_array(const char *text)
{
	json_object *a = json_tokener_parse(text);

	if (a != NULL && !json_object_is_type(a, json_type_array))
	{
		json_object_put(a);
		a = NULL;
	}
	return a;
}

int
mn_compact_block(mnemo_store *st, const char *sid, const mn_pick *p,
				 const mnemo_compact_options *o, int item_chars, mn_block *b, bool *found)
{
	char		tail[24],
				cap[24],
				min[24],
				chars[24],
				protect[24],
				lone[24];
	const char *params[8];
	PGresult   *res;

	memset(b, 0, sizeof(*b));
	*found = false;
	params[0] = sid;
	params[1] = p->condensed ? "condensed" : "leaf";
	params[2] = mn_i64_param(tail, o->tail_messages > 0 ? o->tail_messages :
							 o->tail_messages < 0 ? 0 : 8);
	params[3] = mn_i64_param(cap, o->block_tokens > 0 ? o->block_tokens : 20000);
	params[4] = mn_i64_param(min, p->min_items);
	params[5] = item_chars > 0 ? mn_i64_param(chars, item_chars) : NULL;
	params[6] = p->protect_tokens >= 0 ? mn_i64_param(protect, p->protect_tokens) : NULL;
	params[7] = p->lone_tokens >= 0 ? mn_i64_param(lone, p->lone_tokens) : NULL;
	if ((res = mn_exec(st, &block_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) == 1)
	{
		b->pick = *p;
		b->condensed = p->condensed;
		b->content = strdup(PQgetvalue(res, 0, mn_col(res, "content")));
		b->tokens = (int) mn_get_i64(res, 0, mn_col(res, "tokens"));
		b->item_ids = id_array(PQgetvalue(res, 0, mn_col(res, "item_ids")));
		b->file_ids = id_array(PQgetvalue(res, 0, mn_col(res, "file_ids")));
		*found = true;
	}
	PQclear(res);
	if (*found && (b->content == NULL || b->item_ids == NULL || b->file_ids == NULL))
	{
		mn_block_clear(b);
		*found = false;
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	return MNEMO_OK;
}

/* The one text column of a one-row result, malloc'd into *out. */
static int
one_text(mnemo_store *st, const mn_stmt *stmt, const char *const *params, char **out)
{
	PGresult   *res = mn_exec(st, stmt, params);

	*out = NULL;
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "%s returned no text", stmt->name);
	}
	*out = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return *out != NULL ? MNEMO_OK : mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}

int
mn_compact_footer(mnemo_store *st, const char *text, json_object *file_ids, char **out)
{
	const char *params[2];

	params[0] = text;
	params[1] = json_object_to_json_string_ext(file_ids, JSON_C_TO_STRING_PLAIN);
	return one_text(st, &footer_stmt, params, out);
}

int
mn_compact_truncate(mnemo_store *st, const char *content, int max_tokens, char **out)
{
	char		num[24];
	const char *params[2];

	params[0] = content;
	params[1] = mn_i64_param(num, max_tokens);
	return one_text(st, &truncate_stmt, params, out);
}

int
mn_compact_claim(mnemo_store *st, const char *sid, const char *holder, int ttl_ms, bool *taken)
{
	char		num[24];
	const char *params[3];
	PGresult   *res;

	params[0] = sid;
	params[1] = holder;
	params[2] = mn_i64_param(num, ttl_ms);
	if ((res = mn_exec(st, &claim_stmt, params)) == NULL)
		return st->errcode;
	*taken = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return MNEMO_OK;
}

int
mn_compact_release(mnemo_store *st, const char *sid, const char *holder, int rc,
				   const mnemo_compact_result *r, const char *error)
{
	const char *params[8];
	char		before[24],
				after[24],
				level[24];
	PGresult   *res;

	params[0] = sid;
	params[1] = holder;
	params[2] = rc == MNEMO_OK ? "completed" : "failed";
	params[3] = mn_i64_param(before, r->tokens_before);
	params[4] = rc == MNEMO_OK ? mn_i64_param(after, r->tokens_after) : NULL;
	params[5] = r->summaries > 0 ? mn_i64_param(level, r->level) : NULL;
	params[6] = r->summary_id[0] ? r->summary_id : NULL;
	params[7] = rc == MNEMO_OK ? NULL : error;
	if ((res = mn_exec(st, &release_stmt, params)) == NULL)
		return st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

int
mn_compact_release_any(mnemo_store *st, const char *sid, char *holder)
{
	const char *params[1];
	PGresult   *res;

	params[0] = sid;
	holder[0] = '\0';
	if ((res = mn_exec(st, &release_any_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) == 0)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_SESSION_NOT_FOUND, "session \"%s\" does not exist", sid);
	}
	if (!PQgetisnull(res, 0, 0))
		snprintf(holder, MNEMO_ID_MAX + 1, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return MNEMO_OK;
}

int
mn_compact_size(mnemo_store *st, const char *sid, int budget_tokens, int64_t *size)
{
	turn_context tc;
	int			rc;

	/*
	 * For INT_MAX, context_report renders the whole view: on a session never
	 * compacted, every round rendered every message (a million of them on
	 * an import); at the budget, it renders what the budget holds and
	 * counts the rest.
	 */
	memset(&tc, 0, sizeof(tc));
	if ((rc = mnemo_context_report(st, sid, budget_tokens > 0 ? budget_tokens : INT_MAX,
								   &tc.report)) == MNEMO_OK)
		*size = mn_turn_context_size(&tc);
	return rc;
}
