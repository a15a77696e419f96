/*
 * claude_code_compaction.c
 *		Claude Code's compactions in its log: the summary a conversation
 *		goes on from after /compact (a user record with isCompactSummary),
 *		committed as a summary, and the tool results a microcompaction
 *		cleared, tombstoned.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/claude_code.h"

/* The tool parts of the calls a microcompaction cleared, tombstoned at its
 * time: their ids read through get_messages_flat (application roles read no
 * table), then update_part_status over them.
 * One statement calling the function for each row of the table would be
 * routed whole to a Citus shard, where the function's own statements are
 * refused ("cannot execute a distributed query from a query on a shard"). */
static const mn_stmt microcompact_parts_stmt = {
	"mnemo_import_microcompact_parts",
	"SELECT array_agg(p.part_id)::text FROM mnemo.get_messages_flat($1::text) p "
	"WHERE p.content->>'tool_call_id' = ANY ($2::text[]) AND p.compacted_at IS NULL",
	2
};

static const mn_stmt microcompact_stmt = {
	"mnemo_import_microcompact",
	"SELECT mnemo.update_part_status($1::text, u.id, compacted_at => "
	"coalesce($3::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)) "
	"FROM unnest($2::text[]) AS u(id)",
	3
};

/*
 * A microcompact_boundary system record: Claude Code cleared the results of
 * the calls in microcompactMetadata.compactedToolIds from its context, so
 * their tool parts are tombstoned (build_context shows them pruned).
 */
int
mn_cc_microcompact(mn_import *imp, cc_state *cc, struct json_object *rec)
{
	struct json_object *meta = mn_js_obj(rec, "microcompactMetadata");
	struct json_object *list = meta ? mn_js_arr(meta, "compactedToolIds") : NULL;
	size_t		n = list ? json_object_array_length(list) : 0;
	const char **ids;
	const char *params[3];
	char	   *array;
	char		when[24];
	PGresult   *res;
	int			rc;

	if (n == 0)
		return MNEMO_OK;
	if ((rc = mn_cc_release(imp, cc)) != MNEMO_OK || (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if ((ids = calloc(n, sizeof(*ids))) == NULL)
		return mn_import_oom(imp);
	for (size_t i = 0; i < n; i++)
		if ((ids[i] = json_object_get_string(json_object_array_get_idx(list, i))) == NULL)
			ids[i] = "";
	array = mn_id_array(imp->st, ids, n, "compactedToolIds");
	free(ids);
	if (array == NULL)
		return imp->st->errcode;
	snprintf(when, sizeof(when), "%" PRId64,
			 mn_import_iso_time(mn_js_str(rec, "timestamp", NULL)));
	params[0] = imp->session_id;
	params[1] = array;
	res = mn_exec(imp->st, &microcompact_parts_stmt, params);
	free(array);
	if (res == NULL)
		return imp->st->errcode;
	if (PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		return MNEMO_OK;
	}
	if ((array = strdup(PQgetvalue(res, 0, 0))) == NULL)
	{
		PQclear(res);
		return mn_import_oom(imp);
	}
	PQclear(res);
	params[1] = array;
	params[2] = strcmp(when, "0") != 0 ? when : NULL;
	res = mn_exec(imp->st, &microcompact_stmt, params);
	free(array);
	if (res == NULL)
		return imp->st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

/*
 * A user record with isCompactSummary: after /compact (or an automatic
 * compaction, after its compact_boundary record) the conversation goes on
 * from this summary alone.  Committed as a leaf summary over every message
 * in context before it, so the context is the summary and what follows, as
 * Claude Code's is.
 */
int
mn_cc_compact_summary(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec,
					  mn_span text, bool *done)
{
	struct json_object *flag;
	struct json_object *msg;
	struct json_object *content;
	mn_span		msg_text;
	mn_span		raw;
	int			rc;

	*done = false;
	if (!json_object_object_get_ex(rec, "isCompactSummary", &flag) ||
		!json_object_get_boolean(flag))
		return MNEMO_OK;
	if ((rc = mn_cc_message_of(imp, line, rec, text, &msg, &msg_text)) != MNEMO_OK)
		return rc;
	if (!json_object_object_get_ex(msg, "content", &content) ||
		!json_object_is_type(content, json_type_string))
		return MNEMO_OK;
	if ((rc = mn_cc_release(imp, cc)) != MNEMO_OK || (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if (imp->imported == 0 || !mn_json_member(msg_text, "content", &raw))
		return MNEMO_OK;
	*done = true;
	return mn_import_compaction(imp, line, mn_import_iso_time(mn_js_str(rec, "timestamp", NULL)),
								raw, json_object_get_string(content), imp->imported, NULL,
								(mn_span) {NULL, 0}, NULL);
}
