/*
 * t_bounds.c
 *		The limits the client shares with the server (doc/limits.md).
 *
 *	- JSON nesting: a part nests at most MNEMO_MAX_JSON_DEPTH (512) levels,
 *	  the part object being level 1 and each value inside one deeper; 512 is appended, 513 is refused before
 *	  anything is sent (MNEMO_ERR_FORMAT), for a part's content and for a
 *	  tool's input (one level down).  The server refuses 513 too (pgTAP
 *	  090_bounds).  A session holding a 512-level part exports and the
 *	  export imports again; a line with a 513-level part is refused.
 *	- Non-finite numbers: update_tokens with a NaN or infinite cost, or a
 *	  negative count, is MNEMO_ERR_INVALID_ARGUMENT and sends nothing; an
 *	  export never writes NaN (a row that holds one, from before the CHECK
 *	  constraints, exports as valid JSON).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/* JSON nesting exactly depth levels: an object, depth - 2 arrays, a number. */
static char *
nested(int depth, const char *prefix, const char *suffix)
{
	size_t		len = strlen(prefix) + strlen(suffix) + 2 * (size_t) depth + 16;
	char	   *s = malloc(len);
	char	   *p = s;

	if (s == NULL)
		bail_out("out of memory");
	p += sprintf(p, "%s{\"x\":", prefix);
	for (int i = 2; i < depth; i++)
		*p++ = '[';
	*p++ = '1';
	for (int i = 2; i < depth; i++)
		*p++ = ']';
	sprintf(p, "}%s", suffix);
	return s;
}

static int64_t
count_messages(mnemo_store *st, const char *session_id)
{
	mnemo_messages *list = NULL;
	int64_t		n;

	if (mnemo_messages_get(st, session_id, NULL, false, &list) != MNEMO_OK)
		bail_out("messages of %s: %s", session_id, mnemo_errmsg(st));
	n = (int64_t) list->count;
	mnemo_messages_free(list);
	return n;
}

static int
append_part(mnemo_store *st, const char *session_id, const mnemo_new_part *part)
{
	mnemo_new_message msg = {0};

	msg.role = "assistant";
	msg.n_parts = 1;
	msg.parts = part;
	return mnemo_message_append(st, session_id, &msg, NULL);
}

static void
test_nesting(mnemo_store *st)
{
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	char	   *content;
	char	   *input;
	char	   *buf = NULL;
	size_t		size = 0;
	FILE	   *f;
	int64_t		imported = 0;
	mnemo_import_options opts = {0};
	int			rc;

	is_int(MNEMO_MAX_JSON_DEPTH, 512, "the shared nesting limit is 512 levels");
	new_session(st, "deep");

	/* a part's content: the part object is level 1, "x" holds the rest */
	content = nested(MNEMO_MAX_JSON_DEPTH - 1, "{\"type\":\"tool\",\"tool_name\":\"t\",\"tool_call_id\":\"c\",\"input\":", "}");
	part.content = content;
	is_code(st, append_part(st, "deep", &part), MNEMO_OK, "a part 512 levels deep is appended");
	free(content);
	content = nested(MNEMO_MAX_JSON_DEPTH, "{\"type\":\"tool\",\"tool_name\":\"t\",\"tool_call_id\":\"c\",\"input\":", "}");
	part.content = content;
	rc = append_part(st, "deep", &part);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a part 513 levels deep is refused by the client");
	ok(strstr(mnemo_errmsg(st), "nests deeper than 512 levels") != NULL, "saying so: %s", mnemo_errmsg(st));
	free(content);

	/* a tool's input sits at level 2 of its part */
	part = (mnemo_new_part) MNEMO_NEW_PART_INIT;
	part.type = "tool";
	part.tool_name = "t";
	part.tool_call_id = "c2";
	input = nested(MNEMO_MAX_JSON_DEPTH - 1, "", "");
	part.tool_input = input;
	is_code(st, append_part(st, "deep", &part), MNEMO_OK, "a tool input 511 levels deep (its part 512) is appended");
	free(input);
	input = nested(MNEMO_MAX_JSON_DEPTH, "", "");
	part.tool_input = input;
	is_code(st, append_part(st, "deep", &part), MNEMO_ERR_FORMAT,
			"a tool input 512 levels deep (its part 513) is refused by the client");
	free(input);
	is_int(count_messages(st, "deep"), 2, "the refused parts sent nothing");

	/* the export of parts at the limit imports again */
	if ((f = open_memstream(&buf, &size)) == NULL)
		bail_out("open_memstream");
	rc = mnemo_export_jsonl(st, "deep", f);
	fclose(f);
	is_code(st, rc, MNEMO_OK, "export of the session with 512-level parts");
	opts.new_ids = true;
	f = fmemopen(buf, size, "r");
	rc = mnemo_import_jsonl(st, f, &opts, NULL, &imported);
	fclose(f);
	is_code(st, rc, MNEMO_OK, "re-imports");
	is_int(imported, 2, "both messages");
	free(buf);

	/* a line whose part is 513 deep: the line nests 515 levels */
	content = nested(MNEMO_MAX_JSON_DEPTH,
					 "{\"role\":\"user\",\"parts\":[{\"type\":\"tool\",\"tool_name\":\"t\",\"tool_call_id\":\"c\",\"input\":",
					 "}]}\n");
	f = fmemopen(content, strlen(content), "r");
	imported = -1;
	rc = mnemo_import_jsonl(st, f, &opts, NULL, &imported);
	fclose(f);
	is_code(st, rc, MNEMO_ERR_FORMAT, "an import line with a 513-level part is refused");
	free(content);
}

static void
test_non_finite(mnemo_store *st)
{
	mnemo_new_message msg = {0};
	mnemo_message_ref ref;
	mnemo_messages *list = NULL;
	mnemo_tokens tokens = {0};
	PGconn	   *conn;
	PGresult   *res;
	char	   *buf = NULL;
	size_t		size = 0;
	FILE	   *f;
	int			rc;

	new_session(st, "costs");
	msg.role = "assistant";
	if (mnemo_message_append(st, "costs", &msg, &ref) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
	is_code(st, mnemo_message_update_tokens(st, "costs", ref.id, NULL, 0.25, "stop"), MNEMO_OK, "a cost of 0.25");

	is_code(st, mnemo_message_update_tokens(st, "costs", ref.id, NULL, NAN, NULL), MNEMO_ERR_INVALID_ARGUMENT,
			"cost NaN is refused");
	is_str(mnemo_sqlstate(st), "", "by the client: no SQLSTATE, nothing sent");
	is_code(st, mnemo_message_update_tokens(st, "costs", ref.id, NULL, INFINITY, NULL), MNEMO_ERR_INVALID_ARGUMENT,
			"cost Infinity is refused");
	is_code(st, mnemo_message_update_tokens(st, "costs", ref.id, NULL, -INFINITY, NULL), MNEMO_ERR_INVALID_ARGUMENT,
			"cost -Infinity is refused");
	tokens.output = -5;
	is_code(st, mnemo_message_update_tokens(st, "costs", ref.id, &tokens, 1, NULL), MNEMO_ERR_INVALID_ARGUMENT,
			"a negative token count is refused");
	if (mnemo_messages_get(st, "costs", NULL, false, &list) != MNEMO_OK || list->count != 1)
		bail_out("messages of costs: %s", mnemo_errmsg(st));
	ok(list->items[0].cost == 0.25 && list->items[0].tokens.output == 0,
	   "the message still has cost 0.25 and no output tokens");
	mnemo_messages_free(list);

	/* a NaN stored before the CHECK constraints: export writes valid JSON */
	conn = PQconnectdb("");
	res = PQexec(conn, "ALTER TABLE mnemo.log DROP CONSTRAINT log_row_check");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bail_out("drop the log's CHECK: %s", PQerrorMessage(conn));
	PQclear(res);
	res = PQexecParams(conn, "UPDATE mnemo.log SET cost = 'NaN' WHERE id = $1", 1, NULL,
					   (const char *const[]) {ref.id}, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bail_out("store a NaN: %s", PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);

	if ((f = open_memstream(&buf, &size)) == NULL)
		bail_out("open_memstream");
	rc = mnemo_export_jsonl(st, "costs", f);
	fclose(f);
	is_code(st, rc, MNEMO_OK, "export of a message whose cost is NaN");
	{
		struct json_tokener *tok = json_tokener_new();
		struct json_object *line;

		/* the message's line, after the session's header */
		const char *msg = strchr(buf, '\n') ? strchr(buf, '\n') + 1 : buf;

		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		line = json_tokener_parse_ex(tok, msg, (int) (size - (size_t) (msg - buf)) - 1);
		ok(line != NULL && json_tokener_get_error(tok) == json_tokener_success,
		   "is valid JSON: %s", buf);
		ok(line != NULL && !json_object_object_get_ex(line, "cost", NULL), "without the NaN cost");
		json_object_put(line);
		json_tokener_free(tok);
	}
	ok(strstr(buf, "nan") == NULL && strstr(buf, "NaN") == NULL, "no nan anywhere in it");
	free(buf);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_nesting(st);
	test_non_finite(st);
	mnemo_store_close(st);
	return tap_done();
}
