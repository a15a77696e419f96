/*
 * t_rows.c
 *		Rows read back exactly: the converters behind every read.
 *
 * A part reaches the client in two shapes, a message_parts row (parts_get)
 * and an element of a message's parts array (messages_get with parts); both
 * must give the stored JSON unchanged, byte for byte as the server prints
 * it, numbers beyond 64 bits and escapes included, and the same status
 * fields.  The server itself is the oracle: the expected texts are read
 * with libpq beside the library.  Also: text[] parameters with awkward ids,
 * numbers in a comma-decimal locale, every session and message field.
 */
#define _POSIX_C_SOURCE 200809L

#include <libpq-fe.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"

static PGconn *oracle;

/* The one text value of sql with $1 = arg, malloc'd. */
static char *
server_text(const char *sql, const char *arg)
{
	const char *params[1] = {arg};
	PGresult   *res = PQexecParams(oracle, sql, 1, NULL, params, NULL, NULL, 0);
	char	   *v;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		bail_out("%s: %s", sql, PQerrorMessage(oracle));
	v = strdup(PQgetisnull(res, 0, 0) ? "(null)" : PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

#define must(call) \
	do { int rc_ = (call); if (rc_ != MNEMO_OK) \
		bail_out("%s: %d %s", #call, rc_, mnemo_errmsg(st)); } while (0)

static const char *const TOOL_CONTENT =
	"{\"type\": \"tool\", \"tool_name\": \"calc\", \"tool_call_id\": \"call-1\", "
	"\"tool_state\": \"pending\", \"id\": \"rows-tool\", "
	"\"input\": {\"big\": 123456789012345678901234567890, \"f\": 1.50, \"neg\": -0.000001, "
	"\"s\": \"\\u00e9 \\\"q\\\" back\\\\slash \\/ tab\\t nl\\n ctl\\u0001 \\ud83d\\ude00\"}, "
	"\"output\": {\"rows\": [1, 2, {\"deep\": [true, false, null]}]}, \"extra\": \"kept\"}";

/* The text the server must decode "s" to. */
static const char *const TOOL_S =
	"\xc3\xa9 \"q\" back\\slash / tab\t nl\n ctl\x01 \xf0\x9f\x98\x80";

static const char *const TEXT_TEXT =
	"line one\nline two \"quoted\" \\ \t caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \x1f end";

static void
test_parts(mnemo_store *st)
{
	mnemo_session *s = NULL;
	mnemo_new_part parts[3] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
	mnemo_new_message msg = {.role = "assistant", .id = "rows-msg", .n_parts = 3, .parts = parts};
	mnemo_part_status status = {.tool_state = "completed", .started_at = 1700000000123,
	.completed_at = 1700000000456};
	mnemo_parts *rows = NULL;
	mnemo_messages *msgs = NULL;
	char	   *want;
	int64_t		tomb = 0;

	must(mnemo_session_create(st, &(mnemo_new_session) {.id = "rows-s"}, &s));
	parts[0].type = "text";
	parts[0].text = TEXT_TEXT;
	parts[0].id = "rows-text";
	parts[1].content = TOOL_CONTENT;
	parts[2].type = "reasoning";
	parts[2].text = "";
	parts[2].token_estimate = 42;
	must(mnemo_message_append(st, s->id, &msg, NULL));
	must(mnemo_part_update_status(st, "rows-s", "rows-tool", &status));
	must(mnemo_part_tombstone(st, "rows-s", "rows-tool", &tomb));

	must(mnemo_parts_get(st, "rows-s", "rows-msg", &rows));
	must(mnemo_messages_get(st, s->id, NULL, true, &msgs));
	if (rows->count != 3 || msgs->count != 1 || msgs->items[0].n_parts != 3)
		bail_out("expected 3 parts in one message, got %zu and %zu", rows->count,
				 msgs->count ? msgs->items[0].n_parts : 0);

	/* the row shape: content is the stored column, verbatim */
	want = server_text("SELECT content::text FROM mnemo.message_parts WHERE id = $1", "rows-tool");
	is_str(rows->items[1].content, want, "parts_get: content is the stored jsonb, byte for byte");
	free(want);

	/* the array shape: the stored object without the laid-over status keys */
	want = server_text("SELECT (content - ARRAY['id', 'part_index', 'tool_state', 'compacted_at', "
					   "'started_at', 'completed_at', 'token_estimate'])::text "
					   "FROM mnemo.message_parts WHERE id = $1", "rows-tool");
	is_str(msgs->items[0].parts[1].content, want,
		   "messages_get: content is the stored jsonb less the status keys, byte for byte");
	free(want);
	want = server_text("SELECT content::text FROM mnemo.message_parts WHERE id = $1", "rows-text");
	is_str(rows->items[0].content, want, "a text part appended with its id: parts_get keeps it in content");
	free(want);
	want = server_text("SELECT (content - 'id')::text FROM mnemo.message_parts WHERE id = $1",
					   "rows-text");
	is_str(msgs->items[0].parts[0].content, want, "and messages_get has it in the id field only");
	free(want);

	for (int shape = 0; shape < 2; shape++)
	{
		const char *how = shape == 0 ? "parts_get" : "messages_get";
		mnemo_part *tool = shape == 0 ? &rows->items[1] : &msgs->items[0].parts[1];
		mnemo_part *text = shape == 0 ? &rows->items[0] : &msgs->items[0].parts[0];
		mnemo_part *reasoning = shape == 0 ? &rows->items[2] : &msgs->items[0].parts[2];

		is_str(tool->id, "rows-tool", "%s: the id given in the content", how);
		is_str(tool->message_id, "rows-msg", "%s: message_id", how);
		is_int(tool->part_index, 1, "%s: part_index", how);
		is_str(tool->type, "tool", "%s: type", how);
		is_str(tool->tool_name, "calc", "%s: tool_name", how);
		is_str(tool->tool_call_id, "call-1", "%s: tool_call_id", how);
		is_str(tool->tool_state, "completed", "%s: the live tool_state, not the appended one", how);
		ok(tool->tool_input != NULL &&
		   strstr(tool->tool_input, "\"big\": 123456789012345678901234567890") != NULL &&
		   strstr(tool->tool_input, "\"f\": 1.50") != NULL,
		   "%s: tool_input keeps a 30-digit integer and 1.50 exactly (%s)", how, tool->tool_input);
		is_str(tool->tool_output, "{\"rows\": [1, 2, {\"deep\": [true, false, null]}]}",
			   "%s: a non-string output is its JSON text", how);
		ok(tool->text == NULL, "%s: a tool part has no text", how);
		ok(tool->error_message == NULL, "%s: no error_message", how);
		is_int(tool->started_at, 1700000000123LL, "%s: started_at", how);
		is_int(tool->completed_at, 1700000000456LL, "%s: completed_at", how);
		ok(tool->compacted_at > 0 && tool->compacted_at == tomb, "%s: compacted_at is the tombstone", how);

		is_str(text->text, TEXT_TEXT, "%s: text with quotes, escapes, control and multibyte characters", how);
		is_str(text->id, "rows-text", "%s: the id given in the spec", how);
		ok(text->tool_name == NULL && text->tool_state == NULL && text->tool_input == NULL &&
		   text->tool_output == NULL, "%s: a text part has no tool fields", how);
		is_int(text->compacted_at, 0, "%s: a live part has compacted_at 0", how);
		is_int(text->token_estimate, mnemo_estimate_tokens(TEXT_TEXT),
			   "%s: token_estimate is the server's estimate of the text", how);

		is_str(reasoning->text, "", "%s: an empty text is \"\", not NULL", how);
		is_int(reasoning->token_estimate, 42, "%s: a token_estimate given is kept", how);
		is_str(reasoning->id, "rows-msg:2",
			   "%s: a part appended without an id has its message's id and its index", how);
	}

	/* the decoded string inside the input, through the server's own ->> */
	want = server_text("SELECT content->'input'->>'s' FROM mnemo.message_parts WHERE id = $1",
					   "rows-tool");
	is_str(want, TOOL_S, "(the server decodes the \\u escapes, surrogate pair included, the same way)");
	free(want);

	mnemo_parts_free(rows);
	mnemo_messages_free(msgs);
	mnemo_session_free(s);
}

static void
test_output_string(mnemo_store *st)
{
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {.role = "assistant", .id = "rows-msg2", .n_parts = 1, .parts = &part};
	mnemo_part_status status = {.tool_state = "error", .output = "partial\nout \"put\"",
	.error_message = "exit status 2: caf\xc3\xa9"};
	mnemo_messages *msgs = NULL;
	mnemo_parts *rows = NULL;

	part.type = "tool";
	part.id = "rows-tool2";
	part.tool_name = "sh";
	part.tool_call_id = "call-2";
	part.tool_input = "{}";
	must(mnemo_message_append(st, "rows-s", &msg, NULL));
	must(mnemo_part_update_status(st, "rows-s", "rows-tool2", &status));
	must(mnemo_messages_get(st, "rows-s", "rows-msg", true, &msgs));
	must(mnemo_parts_get(st, "rows-s", "rows-msg2", &rows));
	if (msgs->count != 1 || msgs->items[0].n_parts != 1 || rows->count != 1)
		bail_out("expected the one message after rows-msg");
	is_str(msgs->items[0].parts[0].tool_output, "partial\nout \"put\"",
		   "a merged string output is the string itself (messages_get)");
	is_str(rows->items[0].tool_output, "partial\nout \"put\"", "(parts_get)");
	is_str(msgs->items[0].parts[0].error_message, "exit status 2: caf\xc3\xa9",
		   "the merged error_message (messages_get)");
	is_str(rows->items[0].error_message, "exit status 2: caf\xc3\xa9", "(parts_get)");
	is_str(msgs->items[0].parts[0].tool_input, "{}", "an empty input object");
	is_str(msgs->items[0].parts[0].tool_state, "error", "the state set with it");
	mnemo_messages_free(msgs);
	mnemo_parts_free(rows);
}

static void
test_message_fields(mnemo_store *st)
{
	mnemo_tokens tokens = {.input = 1234567890123LL, .output = 2, .cache_read = 3,
	.cache_write = 4, .reasoning = 5};
	mnemo_message *m = NULL;
	mnemo_new_message empty = {.role = "user", .id = "rows-msg3", .run_id = "run-7"};
	const char *loc;

	must(mnemo_message_update_tokens(st, "rows-s", "rows-msg", &tokens, 0.25, "stop"));
	must(mnemo_message_append(st, "rows-s", &empty, NULL));

	/* a locale whose decimal separator is a comma must not change numbers */
	loc = setlocale(LC_NUMERIC, "de_DE.UTF-8");
	if (loc == NULL)
		loc = setlocale(LC_NUMERIC, "fr_FR.UTF-8");
	must(mnemo_message_get(st, "rows-s", "rows-msg", &m));
	is_str(m->id, "rows-msg", "message id");
	is_str(m->session_id, "rows-s", "session_id");
	is_int(m->seq, 1, "seq");
	is_str(m->role, "assistant", "role");
	ok(m->created_at > 1600000000000LL, "created_at in unix ms (%lld)", (long long) m->created_at);
	is_str(m->agent, "default", "agent: the session's");
	is_str(m->model_id, "", "model_id \"\", not NULL");
	ok(m->run_id == NULL, "run_id NULL when not given");
	ok(!m->is_summary, "is_summary false");
	is_int(m->tokens.input, 1234567890123LL, "tokens.input beyond 32 bits");
	ok(m->tokens.output == 2 && m->tokens.cache_read == 3 && m->tokens.cache_write == 4 &&
	   m->tokens.reasoning == 5, "the other four counts");
	ok(m->cost == 0.25, "cost 0.25 (LC_NUMERIC %s)", loc ? loc : "C: no comma locale here");
	is_str(m->finish_reason, "stop", "finish_reason");
	is_int((long long) m->n_parts, 0, "message_get: no parts");
	ok(m->parts == NULL, "and parts NULL");
	mnemo_message_free(m);
	setlocale(LC_NUMERIC, "C");

	must(mnemo_message_get(st, "rows-s", "rows-msg3", &m));
	is_str(m->run_id, "run-7", "run_id when given");
	ok(m->finish_reason == NULL && m->cost == 0, "finish_reason NULL and cost 0 by default");
	mnemo_message_free(m);
}

static void
test_text_arrays(mnemo_store *st)
{
	static const char *const ids[] = {
		"rows,comma", "rows\"quote", "rows{brace}", "rows\\backslash", "NULL",
		"rows space ", "rows-\xc3\xa9t\xc3\xa9", "rows'apos"
	};
	const size_t n = sizeof(ids) / sizeof(ids[0]);
	mnemo_messages *got = NULL;
	bool		same = true;
	const char *with_null[2] = {"rows-msg", NULL};

	for (size_t i = 0; i < n; i++)
	{
		mnemo_new_part part = MNEMO_NEW_PART_INIT;
		mnemo_new_message msg = {.role = "user", .id = ids[i], .n_parts = 1, .parts = &part};

		part.type = "text";
		part.text = ids[i];
		must(mnemo_message_append(st, "rows-s", &msg, NULL));
	}
	/* in reverse: the order given is the order returned */
	{
		const char *reversed[sizeof(ids) / sizeof(ids[0])];

		for (size_t i = 0; i < n; i++)
			reversed[i] = ids[n - 1 - i];
		must(mnemo_messages_get_by_ids(st, "rows-s", reversed, n, &got));
		if (got->count != n)
			same = false;
		for (size_t i = 0; same && i < n; i++)
			if (strcmp(got->items[i].id, reversed[i]) != 0 ||
				got->items[i].n_parts != 1 || strcmp(got->items[i].parts[0].text, reversed[i]) != 0)
			{
				diag("item %zu: %s", i, got->items[i].id);
				same = false;
			}
	}
	ok(same, "ids with commas, quotes, braces, backslashes, blanks and the word NULL "
	   "go through a text[] parameter unchanged");
	mnemo_messages_free(got);
	got = NULL;

	is_int(mnemo_messages_get_by_ids(st, "rows-s", with_null, 2, &got), MNEMO_ERR_INVALID_ARGUMENT,
		   "a NULL id in the list: INVALID_ARGUMENT");
	ok(got == NULL, "and *out stays NULL");
}

static void
test_session_fields(mnemo_store *st)
{
	mnemo_session *s = NULL,
			   *child = NULL;
	mnemo_new_session spec = {.id = "rows-child", .parent_id = "rows-s", .title = "T\xc3\xaftle",
		.metadata = "{\"n\": 12345678901234567890, \"k\": [1, \"two\"]}",
	.system_prompt = "Be brief.", .agent = "coder", .model_id = "m", .provider_id = "p"};

	must(mnemo_session_create(st, &spec, &child));
	must(mnemo_session_get(st, "rows-child", &s));
	is_str(s->id, "rows-child", "session id");
	is_str(s->parent_id, "rows-s", "parent_id");
	is_str(s->title, "T\xc3\xaftle", "title");
	is_str(s->metadata, "{\"k\": [1, \"two\"], \"n\": 12345678901234567890}",
		   "metadata: the server's JSON text, 20-digit number intact");
	is_str(s->system_prompt, "Be brief.", "system_prompt");
	is_str(s->agent, "coder", "agent");
	ok(strcmp(s->model_id, "m") == 0 && strcmp(s->provider_id, "p") == 0, "model and provider");
	is_str(s->state, "{}", "state: an empty object");
	ok(s->is_active && !s->watched, "active, not watched");
	ok(s->created_at > 0 && s->updated_at >= s->created_at, "created_at and updated_at");
	is_int(s->last_seq, 0, "last_seq 0 without messages");
	mnemo_session_free(s);
	s = NULL;

	must(mnemo_session_get(st, "rows-s", &s));
	ok(s->parent_id == NULL && s->title == NULL && s->metadata == NULL,
	   "parent_id, title and metadata NULL when not given");
	ok(s->last_seq >= 3, "last_seq counts the messages (%lld)", (long long) s->last_seq);
	mnemo_session_free(s);
	mnemo_session_free(child);

	mnemo_session_free(NULL);
	mnemo_sessions_free(NULL);
	mnemo_message_free(NULL);
	mnemo_messages_free(NULL);
	mnemo_part_free(NULL);
	mnemo_parts_free(NULL);
	ok(1, "every _free(NULL) does nothing");
}

int
main(void)
{
	mnemo_store *st;

	oracle = PQconnectdb("");
	if (PQstatus(oracle) != CONNECTION_OK)
		bail_out("connect: %s", PQerrorMessage(oracle));
	st = mnemo_store_open(NULL);
	if (mnemo_errcode(st) != MNEMO_OK)
		bail_out("open: %s", mnemo_errmsg(st));

	test_parts(st);
	test_output_string(st);
	test_message_fields(st);
	test_text_arrays(st);
	test_session_fields(st);

	mnemo_store_close(st);
	PQfinish(oracle);
	return tap_done();
}
