/*
 * t_jsonl.c
 *		mnemo's JSONL transcripts: mnemo_export_jsonl and mnemo_import_jsonl.
 *
 *	- a session with every kind of part and status exported, imported into
 *	  another database and exported again gives the same bytes; the
 *	  import is one transaction, so malformed input, a taken id or a
 *	  failure after batches were sent leave nothing behind;
 *	- a message whose parts run over the export's pages is one line;
 *	- a session whose system prompt and metadata are stored out of line
 *	  goes out and comes back whole.
 *
 * Claude Code logs are t_claude_code.c's.  Runs in a fresh database of its
 * own (PGDATABASE), and creates a second one beside it (PGDATABASE_copy)
 * for the round trip with ids kept.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "transcript_helpers.h"

/*
 * text with the part ids and summary_node_id of its summary lines blanked:
 * an import with new ids commits a summary again (commit_summary) under
 * new ones.
 */
static char *
summaries_blanked(const char *text)
{
	size_t		len = strlen(text);
	char	   *out = malloc(len + 1);
	const char *line = text;
	char	   *o = out;

	if (out == NULL)
		bail_out("out of memory");
	while (*line)
	{
		const char *end = strchr(line, '\n');
		size_t		n = end ? (size_t) (end - line + 1) : strlen(line);
		const char *hit = strstr(line, "\"is_summary\": true");
		bool		summary = hit != NULL && hit < line + n;

		for (size_t i = 0; i < n; i++)
		{
			if (summary && strncmp(line + i, "\"id\": \"part_", 12) == 0)
			{
				memcpy(o, "\"id\": \"", 7);
				o += 7;
				for (i += 7; line[i] != '"'; i++)
					;
			}
			else if (summary && strncmp(line + i, "\"summary_node_id\": \"", 20) == 0)
			{
				memcpy(o, line + i, 20);
				o += 20;
				for (i += 20; line[i] != '"'; i++)
					;
			}
			*o++ = line[i];
		}
		line += n;
	}
	*o = '\0';
	return out;
}

static void
quiet(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

/* A second database beside the test's, with the extension. */
static char *
create_copy_db(void)
{
	const char *base = getenv("PGDATABASE");
	PGconn	   *conn = PQconnectdb("");
	char	   *name;
	char	   *quoted;
	char		sql[600];
	PGresult   *res;

	if (base == NULL || PQstatus(conn) != CONNECTION_OK)
		bail_out("connecting to PGDATABASE: %s", PQerrorMessage(conn));
	PQsetNoticeProcessor(conn, quiet, NULL);
	if ((name = malloc(strlen(base) + 8)) == NULL)
		bail_out("out of memory");
	sprintf(name, "%s_copy", base);
	quoted = PQescapeIdentifier(conn, name, strlen(name));
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", quoted);
	PQclear(PQexec(conn, sql));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", quoted);
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfreemem(quoted);
	PQfinish(conn);

	snprintf(sql, sizeof(sql), "dbname=%s", name);
	conn = PQconnectdb(sql);
	res = PQexec(conn, "CREATE EXTENSION mnemo");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bail_out("CREATE EXTENSION mnemo in %s: %s", name, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
	return name;
}

static void
drop_copy_db(char *name)
{
	PGconn	   *conn = PQconnectdb("");
	char	   *quoted = PQescapeIdentifier(conn, name, strlen(name));
	char		sql[600];

	PQsetNoticeProcessor(conn, quiet, NULL);
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", quoted);
	PQclear(PQexec(conn, sql));
	PQfreemem(quoted);
	PQfinish(conn);
	free(name);
}

/* ------------------------------------------------------------------------
 * A session with every kind of part and status
 * ------------------------------------------------------------------------ */

static const char *const user_text =
	"h\xc3\xa9llo \"quoted\" back\\slash\nnew line\ttab \x01 ctrl \xf0\x9f\x98\x80 </script>";

static void
build_rich_session(mnemo_store *st)
{
	mnemo_new_session spec = {.id = "rich",.model_id = "model-a",.provider_id = "prov-a",
	.agent = "agent-a",.title = "round trip"};
	mnemo_new_part user_parts[1] = {MNEMO_NEW_PART_INIT};
	mnemo_new_part a_parts[6] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
	mnemo_new_part tool_parts[1] = {MNEMO_NEW_PART_INIT};
	mnemo_new_message msgs[4] = {{0}};
	mnemo_message_ref refs[4];
	mnemo_part_status done = {.tool_state = "completed",.started_at = 1700000000000,
	.completed_at = 1700000000123,.output = "line1\nline2 \xe2\x9c\x93"};
	mnemo_part_status failed = {.tool_state = "error",.error_message = "exit status 1"};
	mnemo_tokens tokens = {10, 20, 30, 40, 5};
	const char *remove[2];
	mnemo_new_summary sum = {0};
	int64_t		when = 0;
	int			rc;

	create_session(st, &spec);

	user_parts[0].type = "text";
	user_parts[0].text = user_text;

	a_parts[0].type = "reasoning";
	a_parts[0].text = "thinking it over";
	a_parts[1].type = "text";
	a_parts[1].text = "an answer whose estimate is given as 0";
	a_parts[1].token_estimate = 0;
	a_parts[2].content = "{\"type\":\"tool\",\"id\":\"rich-call-1\",\"tool_name\":\"Read\","
		"\"tool_call_id\":\"call_1\",\"input\":{\"path\":\"/a b/c\",\"n\":[1,2.50,-3e-7,"
		"{\"deep\":{\"x\":null,\"t\":true}}],\"\xc3\xbc\":\"\\u00fc\\t\"},"
		"\"extra\":{\"z\":1,\"a\":2}}";
	a_parts[3].type = "tool";
	a_parts[3].id = "rich-call-2";
	a_parts[3].tool_name = "Bash";
	a_parts[3].tool_call_id = "call_2";
	a_parts[3].tool_input = "{\"cmd\":\"false\"}";
	a_parts[4].type = "file_ref";
	a_parts[4].content_id = "sha256:abc";
	a_parts[4].path = "/docs/x.md";
	a_parts[4].file_type = "markdown";
	a_parts[4].summary = "a file";
	a_parts[5].content = "{\"type\":\"step_start\",\"snapshot\":\"abc\"}";

	tool_parts[0].type = "text";
	tool_parts[0].text = "a tool message";

	msgs[0].role = "user";
	msgs[0].n_parts = 1;
	msgs[0].parts = user_parts;
	msgs[1].role = "assistant";
	msgs[1].agent = "agent-b";
	msgs[1].model_id = "model-b";
	msgs[1].provider_id = "prov-b";
	msgs[1].run_id = "run-1";
	msgs[1].n_parts = 6;
	msgs[1].parts = a_parts;
	msgs[2].role = "assistant";	/* no parts: written before streaming */
	msgs[3].role = "tool";
	msgs[3].n_parts = 1;
	msgs[3].parts = tool_parts;
	if (mnemo_messages_append(st, "rich", msgs, 4, refs) != MNEMO_OK)
		bail_out("append to rich: %s", mnemo_errmsg(st));

	rc = mnemo_part_update_status(st, "rich", "rich-call-1", &done);
	rc = rc ? rc : mnemo_part_update_status(st, "rich", "rich-call-2", &failed);
	rc = rc ? rc : mnemo_part_tombstone(st, "rich", "rich-call-1", &when);
	rc = rc ? rc : mnemo_message_update_tokens(st, "rich", refs[1].id, &tokens, 0.0123, "tool_use");
	if (rc != MNEMO_OK)
		bail_out("status of rich: %s", mnemo_errmsg(st));

	remove[0] = refs[0].id;
	remove[1] = refs[1].id;
	sum.content = "the user said hello; the assistant read a file";
	sum.token_count = 12;
	sum.remove_item_ids = remove;
	sum.n_remove = 2;
	if (mnemo_summary_commit(st, "rich", &sum, NULL, NULL) != MNEMO_OK)
		bail_out("summary of rich: %s", mnemo_errmsg(st));
}

typedef struct progress_log
{
	int			calls;
	uint64_t	done;
	uint64_t	total;
	bool		monotonic;
} progress_log;

static void
on_progress(uint64_t done, uint64_t total, void *arg)
{
	progress_log *p = arg;

	if (done < p->done)
		p->monotonic = false;
	p->calls++;
	p->done = done;
	p->total = total;
}

static void
test_round_trip(mnemo_store *st)
{
	char	   *copy_db = create_copy_db();
	char		conninfo[600];
	mnemo_store *st2;
	char	   *first,
			   *second,
			   *third,
			   *a,
			   *b;
	size_t		first_len = 0,
				second_len = 0;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		n = -1;
	mnemo_import_options opts = {0};
	progress_log plog = {.monotonic = true};
	mnemo_context_items *items = NULL;
	mnemo_session *s = NULL;
	size_t		before;
	FILE	   *f;
	int			rc;

	build_rich_session(st);
	first = export_text(st, "rich", &first_len);
	if (first == NULL)
		bail_out("cannot go on without the export");
	diag("export of rich, %zu bytes; its first line:", first_len);
	diag("%.*s", (int) (strchr(first, '\n') - first), first);

	/* the format: a header line, then one message a line in a fixed key order */
	ok(strncmp(first, "{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"rich\", "
			   "\"title\": \"round trip\", \"agent\": \"agent-a\", \"model_id\": \"model-a\", "
			   "\"provider_id\": \"prov-a\", \"system_prompt\": \"\", \"created_at\": ", 160) == 0,
	   "the header line: type, version, id, title, agent, model_id, provider_id, "
	   "system_prompt, created_at");
	ok(strncmp(body_of(first), "{\"id\": \"msg_", 12) == 0, "a message line starts with its \"id\"");
	ok(strstr(first, "\", \"role\": \"user\", \"created_at\": ") != NULL &&
	   strstr(first, ", \"agent\": \"agent-a\", \"model_id\": \"model-a\", "
			  "\"provider_id\": \"prov-a\", \"parts\": [{\"id\": \"msg_") != NULL,
	   "then role, created_at, agent, model_id, provider_id and parts, each part led by its id "
	   "(its message's id and its index)");
	ok(strstr(first, "\"run_id\": \"run-1\", \"tokens\": {\"input\": 10, \"output\": 20, "
			  "\"cache_read\": 30, \"cache_write\": 40, \"reasoning\": 5}, \"cost\": 0.0123, "
			  "\"finish_reason\": \"tool_use\", \"parts\": [") != NULL,
	   "run_id, tokens, the shortest cost and finish_reason, in that order");
	ok(strstr(first, "\"tool_state\": \"completed\", \"compacted_at\": ") != NULL &&
	   strstr(first, "\"started_at\": 1700000000000, \"completed_at\": 1700000000123, "
			  "\"token_estimate\": ") != NULL,
	   "a part's status fields follow its content: tool_state, the tombstone, the times");
	ok(strstr(first, "\"output\": \"line1\\nline2 \xe2\x9c\x93\"") != NULL &&
	   strstr(first, "\"error_message\": \"exit status 1\"") != NULL,
	   "output and error_message are in the part's content");
	ok(strstr(first, "\"text\": \"h\xc3\xa9llo \\\"quoted\\\" back\\\\slash\\nnew line\\ttab "
			  "\\u0001 ctrl \xf0\x9f\x98\x80 </script>\"") != NULL,
	   "strings are escaped as jsonb prints them (UTF-8 as is, \\u0001, no \\/)");
	ok(strstr(first, "\"is_summary\": true") != NULL && strstr(first, "compaction_marker") != NULL,
	   "the summary message is exported with its compaction marker");
	ok(strstr(first, "\"text\": \"an answer whose estimate is given as 0\", \"type\": \"text\", "
			  "\"token_estimate\": 0}") != NULL,
	   "token_estimate is written even when 0");
	ok(strstr(body_of(first), "\"rich\"") == NULL && strstr(body_of(first), "session") == NULL,
	   "message lines do not name the session");
	ok(strstr(first, "\"parts\": []") != NULL, "a message without parts has \"parts\": []");

	/* into another database, ids kept: the same bytes again */
	snprintf(conninfo, sizeof(conninfo), "dbname=%s", copy_db);
	st2 = open_store(conninfo);
	f = file_of(first, first_len);
	opts.session_id = "rich-copy";
	opts.progress = on_progress;
	opts.progress_arg = &plog;
	rc = mnemo_import_jsonl(st2, f, &opts, sid, &n);
	fclose(f);
	is_code(st2, rc, MNEMO_OK, "import of the export into another database");
	is_str(sid, "rich-copy", "the session gets the id asked for");
	is_int(n, 5, "5 messages imported (4 and the summary)");
	ok(plog.calls >= 1 && plog.monotonic, "the progress callback ran (%d calls), never backwards",
	   plog.calls);
	is_int(plog.total, first_len, "progress total is the file's size");
	is_int(plog.done, first_len, "the last progress call has read it all");
	second = export_text(st2, "rich-copy", &second_len);
	is_str(second ? body_of(second) : "", body_of(first),
		   "export(import(export(s))) == export(s), byte for byte, message times included, "
		   "and the summary committed again with its own time and part ids");
	a = without_ids(first);
	b = without_ids(second ? second : "");
	is_str(b, a, "and the header but for the session's id (rich-copy, as asked): its created "
		   "time too");
	free(a);
	free(b);
	if (mnemo_session_get(st2, "rich-copy", &s) == MNEMO_OK)
	{
		is_str(s->agent, "agent-a", "the session takes the first message's agent");
		is_str(s->model_id, "model-a", "and its model");
		is_int(s->last_seq, 5, "seqs 1..5");
		mnemo_session_free(s);
	}
	else
		ok(0, "the imported session reads back: %s", mnemo_errmsg(st2));
	/* the compaction is restored: the summary in context, what it covers
	 * out, the DAG node and its edges written */
	{
		mnemo_context_items *orig = NULL;
		bool		same;

		rc = mnemo_context_items_get(st2, "rich-copy", &items);
		mnemo_context_items_get(st, "rich", &orig);
		same = items != NULL && orig != NULL && items->count == orig->count;
		for (size_t i = 0; same && i < items->count; i++)
			same = strcmp(items->items[i].item_id, orig->items[i].item_id) == 0 &&
				strcmp(items->items[i].item_type, orig->items[i].item_type) == 0;
		ok(same, "the imported context view is the original's, summary and all (%zu items)",
		   items ? items->count : 0);
		mnemo_context_items_free(items);
		mnemo_context_items_free(orig);
	}
	{
		mnemo_summary_nodes *nodes = NULL;

		rc = mnemo_summary_nodes_get(st2, "rich-copy", false, &nodes);
		ok(rc == MNEMO_OK && nodes->count == 1 && strcmp(nodes->items[0].kind, "leaf") == 0 &&
		   nodes->items[0].seq_start == 1 && nodes->items[0].seq_end == 2,
		   "with its DAG node (leaf, seqs 1..2)");
		mnemo_summary_nodes_free(nodes);
	}

	/* the same message and part ids into another session of the same
	 * database: ids are unique within their session only (0.2.0) */
	before = count_sessions(st);
	opts = (mnemo_import_options) {.session_id = "rich-dup"};
	n = -1;
	rc = import_text(st, first, &opts, sid, &n);
	is_int(rc, MNEMO_OK, "re-import with the same ids into another session of the same database: %s",
		   mnemo_errmsg(st));
	is_int(n, 5, "*imported: the 5 messages");
	ok(session_exists(st, "rich-dup"), "session rich-dup exists");
	is_int(count_sessions(st), before + 1, "one session more");
	if (mnemo_session_get(st, "rich-dup", &s) == MNEMO_OK)
	{
		is_int(s->last_seq, 5, "rich-dup: seqs 1..5");
		mnemo_session_free(s);
	}
	else
		ok(0, "rich-dup reads back: %s", mnemo_errmsg(st));

	/* an id that is taken: nothing written to it */
	opts = (mnemo_import_options) {.session_id = "rich",.new_ids = true};
	rc = import_text(st, first, &opts, sid, NULL);
	is_code(st, rc, MNEMO_ERR_DUPLICATE_ID, "import into an existing session id");
	if (mnemo_session_get(st, "rich", &s) == MNEMO_OK)
	{
		is_int(s->last_seq, 5, "the existing session kept its 5 messages");
		mnemo_session_free(s);
	}

	/* new ids: a copy in the same database, the same but for the ids */
	opts = (mnemo_import_options) {.new_ids = true};
	rc = import_text(st, first, &opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "import with new_ids into the same database");
	ok(strncmp(sid, "sess_", 5) == 0, "without a session id the server makes one (%s)", sid);
	third = rc == MNEMO_OK ? export_text(st, sid, NULL) : NULL;
	{
		char	   *x = summaries_blanked(body_of(first));
		char	   *y = summaries_blanked(third ? body_of(third) : "");

		a = without_ids(x);
		b = without_ids(y);
		free(x);
		free(y);
	}
	is_str(b, a, "the copy's messages export as the original's but for the ids");
	ok(third && strcmp(third, first) != 0, "and the ids are new");
	free(a);
	free(b);

	free(first);
	free(second);
	free(third);
	mnemo_store_close(st2);
	drop_copy_db(copy_db);
}

/* ------------------------------------------------------------------------
 * Malformed input and errors
 * ------------------------------------------------------------------------ */

static void
expect_format(mnemo_store *st, const char *text, const char *line_tag, const char *what)
{
	mnemo_import_options opts = {.session_id = "bad-import"};
	size_t		before = count_sessions(st);
	char		sid[MNEMO_ID_MAX + 1] = "untouched";
	int			rc = import_text(st, text, &opts, sid, NULL);

	is_code(st, rc, MNEMO_ERR_FORMAT, what);
	ok(strstr(mnemo_errmsg(st), line_tag) != NULL, "%s: the message names %s (\"%s\")", what,
	   line_tag, mnemo_errmsg(st));
	ok(!session_exists(st, "bad-import") && count_sessions(st) == before,
	   "%s: nothing left behind", what);
	is_str(sid, "untouched", "%s: session_id_out untouched", what);
}

static void
test_errors(mnemo_store *st)
{
	char	   *big;
	size_t		size = 0;
	FILE	   *f;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		n = -1;
	mnemo_messages *list = NULL;
	int			rc;

	/* a failure after a batch was sent still rolls everything back */
	f = open_memstream(&big, &size);
	for (int i = 1; i <= 300; i++)
		fprintf(f, "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"message %d\"}]}\n", i);
	fprintf(f, "{\"role\": \"user\", \"parts\": [\n");
	fclose(f);
	expect_format(st, big, "line 301",
				  "a broken line 301, after a first batch of 256 was appended");
	free(big);

	/* the server refuses line 200 while its batch is in flight and the
	 * reader has gone on to the next batch */
	f = open_memstream(&big, &size);
	for (int i = 1; i <= 700; i++)
		fprintf(f, "{\"role\": \"%s\", \"parts\": [{\"type\": \"text\", \"text\": \"m %d\"}]}\n",
				i == 200 ? "wizard" : "user", i);
	fclose(f);
	expect_format(st, big, "line 200", "a line the server refuses, found after the next batch was read");
	free(big);

	expect_format(st, "{\"role\": \"user\", \"parts\": []}\n"
				  "{\"role\": \"wizard\", \"parts\": []}\n",
				  "line 2", "an unknown role, refused by the server");
	expect_format(st, "{\"role\": \"user\", \"parts\": [{\"type\": \"bogus\"}]}\n",
				  "line 1", "an unknown part type, refused by the server");
	expect_format(st, "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"\xff\xfe\"}]}\n",
				  "line 1", "invalid UTF-8");
	expect_format(st, "{\"role\": \"user\", \"parts\": [], \"tokens\": 5}\n",
				  "line 1", "tokens not an object");
	expect_format(st, "{\"role\": \"user\", \"parts\": []} trailing\n",
				  "line 1", "text after the JSON value");
	expect_format(st, "\n  \n{\"role\": \"user\", \"parts\": [{\"type\": \"text\"\n",
				  "line 3", "blank lines count: a truncated line 3");
	expect_format(st, "[1, 2, 3]\n", "line 1", "neither format");
	expect_format(st, "{\"role\": \"user\", \"parts\": {}}\n", "line 1", "parts not an array");
	expect_format(st, "{\"role\": \"user\", \"parts\": [], \"tokens\": {\"input\": -1}}\n",
				  "line 1", "a negative token count");

	/* nothing at all is no transcript: an error, and no empty session */
	{
		size_t		before = count_sessions(st);

		rc = import_text(st, "", NULL, sid, &n);
		is_code(st, rc, MNEMO_ERR_FORMAT, "an empty file fails");
		ok(strstr(mnemo_errmsg(st), "empty") != NULL, "saying so (%s)", mnemo_errmsg(st));
		is_int(count_sessions(st), before, "and leaves no session");
	}

	/* a key this reader has no field for is kept in the message's metadata */
	{
		mnemo_import_options opts = {.session_id = "kept-key"};

		rc = import_text(st, "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"x\"}], "
						 "\"colour\": \"red\", \"timestamp\": 5}\n", &opts, sid, &n);
		is_code(st, rc, MNEMO_OK, "unknown message keys import");
		rc = mnemo_messages_get(st, "kept-key", NULL, true, &list);
		ok(rc == MNEMO_OK && list->count == 1 && list->items[0].n_parts == 1 &&
		   strstr(list->items[0].parts[0].content, "\"metadata\": {\"colour\": \"red\", \"timestamp\": 5}") != NULL,
		   "kept in the first part's metadata (%s)",
		   rc == MNEMO_OK && list->count == 1 ? list->items[0].parts[0].content : "");
		mnemo_messages_free(list);
		list = NULL;
	}

	/* lines of any length */
	{
		size_t		len = 5 * 1024 * 1024;
		char	   *text = malloc(len + 1);
		char	   *line = malloc(len + 100);
		mnemo_import_options opts = {.session_id = "long-line"};

		for (size_t i = 0; i < len; i++)
			text[i] = "abcdefghij"[i % 10];
		text[len] = '\0';
		sprintf(line, "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"%s\"}]}\n", text);
		rc = import_text(st, line, &opts, sid, &n);
		is_code(st, rc, MNEMO_OK, "a line of 5 MB imports");
		rc = mnemo_messages_get(st, "long-line", NULL, true, &list);
		ok(rc == MNEMO_OK && list->count == 1 && list->items[0].n_parts == 1 &&
		   strcmp(list->items[0].parts[0].text, text) == 0, "and its 5 MB text reads back exactly");
		mnemo_messages_free(list);
		free(text);
		free(line);
	}

	/* numbers are stored as written, beyond what json-c can hold too */
	{
		mnemo_import_options opts = {.session_id = "big-numbers"};
		char	   *out;

		rc = import_text(st, "{\"role\": \"user\", \"parts\": [{\"type\": \"tool\", \"tool_name\": \"t\", "
						 "\"tool_call_id\": \"c\", \"input\": {\"big\": 123456789012345678901234567890, "
						 "\"small\": -0.000001250, \"e\": 1E+400}}]}\n", &opts, sid, NULL);
		is_code(st, rc, MNEMO_OK, "a tool input with numbers beyond 64 bits imports");
		out = export_text(st, "big-numbers", NULL);
		ok(out && strstr(out, "\"big\": 123456789012345678901234567890") != NULL &&
		   strstr(out, "\"small\": -0.000001250") != NULL,
		   "and they are exported digit for digit");
		free(out);
	}

	/* arguments and streams */
	f = tmpfile();
	is_int(mnemo_import_jsonl(NULL, f, NULL, sid, NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "import with a NULL handle");
	fclose(f);
	is_code(st, mnemo_import_jsonl(st, NULL, NULL, sid, NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "import from a NULL stream");
	f = tmpfile();
	is_code(st, mnemo_export_jsonl(st, "no-such-session", f), MNEMO_ERR_SESSION_NOT_FOUND,
		   "export of a session that does not exist");
	fclose(f);
	is_code(st, mnemo_export_jsonl(st, "rich", NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "export to a NULL stream");
	if ((f = fopen("/dev/full", "w")) != NULL)
	{
		is_code(st, mnemo_export_jsonl(st, "rich", f), MNEMO_ERR_IO,
			   "export to a full device (/dev/full)");
		fclose(f);
	}
	/* reading a directory fails with EISDIR: an I/O error */
	if ((f = fopen(".", "r")) != NULL)
	{
		is_code(st, mnemo_import_jsonl(st, f, NULL, sid, NULL), MNEMO_ERR_IO,
			   "import from a stream that cannot be read (a directory)");
		ok(strcmp(mnemo_errmsg(st), "reading the transcript failed: Is a directory") == 0,
		   "the message says why, and names no line before the first: %s",
		   mnemo_errmsg(st));
		fclose(f);
	}
}

/* Lines of text, counted. */
static size_t
count_lines(const char *text)
{
	size_t		n = 0;

	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return n;
}

/* Occurrences of needle in the line of text that holds key. */
static size_t
count_in_line(const char *text, const char *key, const char *needle)
{
	const char *line = strstr(text, key);
	const char *end;
	size_t		n = 0;

	if (line == NULL)
		return 0;
	end = strchr(line, '\n');
	for (const char *p = line; (p = strstr(p, needle)) != NULL && p < end; p++)
		n++;
	return n;
}

/*
 * The export reads a page of rows at a time, a row a part: a message's
 * parts may run over one page, or several, and still make one line.
 */
static void
test_pages(mnemo_store *st)
{
	mnemo_import_options opts = {.session_id = "pages"};
	mnemo_import_options copy = {.session_id = "pages-copy"};
	char		sid[MNEMO_ID_MAX + 1];
	char	   *text;
	char	   *first;
	char	   *second;
	size_t		size = 0;
	FILE	   *f = open_memstream(&text, &size);
	int64_t		n = -1;
	int			rc;

	fprintf(f, "{\"id\": \"m-first\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"a\"}]}\n");
	fprintf(f, "{\"id\": \"m-wide\", \"role\": \"assistant\", \"parts\": [");
	for (int i = 0; i < 1201; i++)
		fprintf(f, "%s{\"type\": \"text\", \"text\": \"w%d\"}", i ? ", " : "", i);
	fprintf(f, "]}\n");
	fprintf(f, "{\"id\": \"m-empty\", \"role\": \"user\", \"parts\": []}\n");
	for (int i = 0; i < 700; i++)
		fprintf(f, "{\"id\": \"m-%04d\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", "
				"\"text\": \"x%d\"}, {\"type\": \"text\", \"text\": \"y%d\"}]}\n", i, i, i);
	fclose(f);
	rc = import_text(st, text, &opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "pages: a message of 1,201 parts among 702 others imports");
	first = export_text(st, "pages", NULL);
	ok(first != NULL && count_lines(first) == 1 + 703, "pages: the export has the header and 703 lines (%zu)",
	   first ? count_lines(first) : 0);
	is_int(first ? count_in_line(first, "\"m-wide\"", "\"type\": \"text\"") : 0, 1201,
		   "pages: the message whose parts span three pages is one line with all of them");
	ok(first != NULL && strstr(first, "\"text\": \"w1199\", \"type\": \"text\", \"token_estimate\": 1}, {\"id\"") != NULL &&
	   strstr(first, "\"text\": \"w1200\", \"type\": \"text\", \"token_estimate\": 1}]}\n") != NULL,
	   "pages: in their order, the last one last");
	ok(first != NULL && strstr(first, "\"id\": \"m-empty\"") != NULL &&
	   count_in_line(first, "\"m-empty\"", "\"parts\": []}") == 1, "pages: a message without parts keeps its line");
	is_int(first ? count_in_line(first, "\"m-0699\"", "\"type\": \"text\"") : 0, 2,
		   "pages: the last message has both its parts");
	rc = first ? import_text(st, first, &copy, sid, NULL) : MNEMO_ERR_FORMAT;
	is_code(st, rc, MNEMO_OK, "pages: the export imports again");
	second = export_text(st, "pages-copy", NULL);
	ok(first && second && strcmp(strchr(first, '\n'), strchr(second, '\n')) == 0,
	   "pages: and exports to the same lines after its header");
	free(text);
	free(first);
	free(second);
}

/* n pseudo-random hex digits: a text compression cannot keep in its row */
static char *
noise(size_t n, unsigned seed)
{
	char	   *s = malloc(n + 1);

	if (s == NULL)
		bail_out("out of memory");
	for (size_t i = 0; i < n; i++)
	{
		seed = seed * 1103515245u + 12345u;
		s[i] = "0123456789abcdef"[(seed >> 16) & 15];
	}
	s[n] = '\0';
	return s;
}

/*
 * A system prompt and metadata of 100 kB are stored out of line
 * (TOAST); reading such a session once crashed the server.  They go out
 * and come back whole.
 */
static void
test_big_header(mnemo_store *st)
{
	mnemo_new_session spec = {0};
	mnemo_new_message msg = {.role = "user"};
	mnemo_import_options copy = {.session_id = "big-header-copy"};
	char	   *prompt = noise(100000, 7);
	char	   *info = noise(100000, 11);
	char	   *metadata = malloc(strlen(info) + 32);
	char	   *first;
	char	   *second = NULL;
	mnemo_session *s = NULL;
	mnemo_store *fresh;
	char		sid[MNEMO_ID_MAX + 1];
	int			rc;

	sprintf(metadata, "{\"info\": \"%s\"}", info);
	spec.id = "big-header";
	spec.system_prompt = prompt;
	spec.metadata = metadata;
	create_session(st, &spec);
	append_text_message(st, "big-header", &msg, "hello");
	/* on a new connection: a backend whose first large allocation the row
	 * is, so that the server's malloc maps it apart, and a use after
	 * SPI_finish freed it faults */
	fresh = open_store(NULL);
	rc = mnemo_session_get(fresh, "big-header", &s);
	is_code(fresh, rc, MNEMO_OK, "big header: the session reads back");
	ok(rc == MNEMO_OK && s->system_prompt && strcmp(s->system_prompt, prompt) == 0 &&
	   s->metadata && strstr(s->metadata, info) != NULL,
	   "big header: its 100 kB system prompt and 100 kB metadata whole");
	mnemo_session_free(s);
	s = NULL;
	mnemo_store_close(fresh);
	first = export_text(st, "big-header", NULL);
	ok(first != NULL && strstr(first, prompt) != NULL && strstr(first, info) != NULL,
	   "big header: the export's header holds both");
	rc = first ? import_text(st, first, &copy, sid, NULL) : MNEMO_ERR_FORMAT;
	is_code(st, rc, MNEMO_OK, "big header: the export imports");
	if (rc == MNEMO_OK)
		second = export_text(st, "big-header-copy", NULL);
	ok(first && second && strcmp(strchr(first, '\n'), strchr(second, '\n')) == 0 &&
	   strstr(second, prompt) != NULL && strstr(second, info) != NULL,
	   "big header: and exports again with the same prompt, metadata and messages");
	free(first);
	free(second);
	free(prompt);
	free(info);
	free(metadata);
}


int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_round_trip(st);
	test_errors(st);
	test_pages(st);
	test_big_header(st);
	mnemo_store_close(st);
	return tap_done();
}
