/*
 * t_jsonl.c
 *		JSONL transcripts: mnemo_export_jsonl and mnemo_import_jsonl.
 *
 *	- a session with every kind of part and status exported, imported into
 *	  another database and exported again gives the same bytes; the
 *	  import is one transaction, so malformed input, a taken id or a
 *	  failure after batches were sent leave nothing behind;
 *	- real Claude Code logs (a small and a large one in detail, kept in
 *	  test/data/claude-code; all 22 when ../shared/data is there) are
 *	  imported, and every user and assistant text, tool
 *	  input and tool output is compared with the log parsed here
 *	  independently, byte for byte;
 *	- the odd corners of the Claude Code reader (results that arrive late or
 *	  for no known call, sidechains, images, redacted thinking).
 *
 * Runs in a fresh database of its own (PGDATABASE), and creates a second
 * one beside it (PGDATABASE_copy) for the round trip with ids kept.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <glob.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/* two logs kept in the repository; the whole data set where it is present */
#define CLAUDE_DIR_DEFAULT "test/data/claude-code"
#define SHARED_CLAUDE_DIR_DEFAULT "../shared/data/transcripts/kimi-cli-claude-code"
#define SMALL_LOG "bf/3a8bd70c3e/1/full.jsonl"
#define LARGE_LOG "29/77bc73228c/1/full.jsonl"

#define is_code(st, rc, code, what) \
	is_int((rc), (code), "%s: %s (%s)", (what), mnemo_strerror(code), mnemo_errmsg(st))

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The export of a session as a string (NULL, with a failed test, on error). */
static char *
export_text(mnemo_store *st, const char *session_id, size_t *len)
{
	char	   *buf = NULL;
	size_t		size = 0;
	FILE	   *out = open_memstream(&buf, &size);
	int			rc;

	if (out == NULL)
		bail_out("open_memstream: %s", strerror(errno));
	rc = mnemo_export_jsonl(st, session_id, out);
	fclose(out);
	if (rc != MNEMO_OK)
	{
		ok(0, "export of %s: %s", session_id, mnemo_errmsg(st));
		free(buf);
		return NULL;
	}
	if (len != NULL)
		*len = size;
	return buf;
}

/* A temporary regular file holding len bytes of text, at its start. */
static FILE *
file_of(const char *text, size_t len)
{
	FILE	   *f = tmpfile();

	if (f == NULL)
		bail_out("tmpfile: %s", strerror(errno));
	if (len > 0 && fwrite(text, 1, len, f) != len)
		bail_out("writing a temporary file: %s", strerror(errno));
	fflush(f);
	rewind(f);
	return f;
}

static int
import_text(mnemo_store *st, const char *text, const mnemo_import_options *opts,
			char sid[MNEMO_ID_MAX + 1], int64_t *n)
{
	FILE	   *f = file_of(text, strlen(text));
	int			rc = mnemo_import_jsonl(st, f, opts, sid, n);

	fclose(f);
	return rc;
}

static size_t
count_sessions(mnemo_store *st)
{
	mnemo_session_filter filter = {.include_inactive = true,.limit = 100000};
	mnemo_sessions *list = NULL;
	size_t		n;

	if (mnemo_session_list(st, &filter, &list) != MNEMO_OK)
		bail_out("mnemo_session_list: %s", mnemo_errmsg(st));
	n = list->count;
	mnemo_sessions_free(list);
	return n;
}

static bool
session_exists(mnemo_store *st, const char *id)
{
	mnemo_session *s = NULL;
	int			rc = mnemo_session_get(st, id, &s);

	mnemo_session_free(s);
	if (rc != MNEMO_OK && rc != MNEMO_ERR_SESSION_NOT_FOUND)
		bail_out("mnemo_session_get: %s", mnemo_errmsg(st));
	return rc == MNEMO_OK;
}

/* Every "id": "..." value emptied, to compare exports made with new ids. */
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

/* The export after its header line: the messages. */
static const char *
body_of(const char *text)
{
	const char *nl = strchr(text, '\n');

	return nl != NULL ? nl + 1 : "";
}

static char *
without_ids(const char *text)
{
	char	   *out = malloc(strlen(text) + 1);
	const char *p = text;
	char	   *o = out;

	if (out == NULL)
		bail_out("out of memory");
	while (*p)
	{
		if (strncmp(p, "\"id\": \"", 7) == 0)
		{
			memcpy(o, p, 7);
			o += 7;
			p += 7;
			while (*p && *p != '"')
				p++;
			continue;
		}
		*o++ = *p++;
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
			  "\"provider_id\": \"prov-a\", \"parts\": [{\"id\": \"part_") != NULL,
	   "then role, created_at, agent, model_id, provider_id and parts, each part led by its id");
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
		fclose(f);
	}
}

/* ------------------------------------------------------------------------
 * Claude Code logs, checked against an independent reading
 * ------------------------------------------------------------------------ */

typedef struct exp_part
{
	const char *type;			/* text, reasoning, tool */
	json_object *text;			/* a string */
	json_object *tool;			/* the tool_use block */
} exp_part;

typedef struct exp_msg
{
	const char *role;
	const char *api_id;
	exp_part   *parts;
	size_t		n_parts;
	json_object *usage;			/* the last one */
	const char *stop;
} exp_msg;

typedef struct expected
{
	json_object **records;		/* kept alive: the pieces point into them */
	size_t		n_records;
	exp_msg    *msgs;
	size_t		n_msgs;
	json_object *results;		/* tool_use_id -> the tool_result block */
	int64_t		skipped;
	size_t		texts;			/* strings compared */
	size_t		bytes;
} expected;

static const char *
str_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static exp_msg *
exp_new(expected *e, const char *role)
{
	exp_msg    *m;

	e->msgs = realloc(e->msgs, (e->n_msgs + 1) * sizeof(*e->msgs));
	m = &e->msgs[e->n_msgs++];
	memset(m, 0, sizeof(*m));
	m->role = role;
	return m;
}

static void
exp_part_add(exp_msg *m, const char *type, json_object *text, json_object *tool)
{
	m->parts = realloc(m->parts, (m->n_parts + 1) * sizeof(*m->parts));
	m->parts[m->n_parts].type = type;
	m->parts[m->n_parts].text = text;
	m->parts[m->n_parts].tool = tool;
	m->n_parts++;
}

/* The log read the simple way: whole file, json_tokener per line. */
static void
read_expected(const char *path, expected *e)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;

	memset(e, 0, sizeof(*e));
	e->results = json_object_new_object();
	if (f == NULL)
		bail_out("%s: %s", path, strerror(errno));
	while (getline(&line, &cap, f) > 0)
	{
		json_object *rec = json_tokener_parse(line);
		json_object *msg,
				   *content,
				   *v;
		const char *type;

		if (rec == NULL)
			bail_out("%s: a line json-c cannot parse", path);
		e->records = realloc(e->records, (e->n_records + 1) * sizeof(*e->records));
		e->records[e->n_records++] = rec;
		type = str_of(rec, "type");
		if (json_object_object_get_ex(rec, "isSidechain", &v) && json_object_get_boolean(v))
			type = "sidechain";
		if (type == NULL || (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0))
		{
			e->skipped++;
			continue;
		}
		json_object_object_get_ex(rec, "message", &msg);
		json_object_object_get_ex(msg, "content", &content);
		if (strcmp(type, "user") == 0)
		{
			exp_msg    *m = NULL;

			if (json_object_is_type(content, json_type_string))
			{
				exp_part_add(exp_new(e, "user"), "text", content, NULL);
				continue;
			}
			for (size_t i = 0; i < json_object_array_length(content); i++)
			{
				json_object *b = json_object_array_get_idx(content, i);
				const char *bt = str_of(b, "type");

				if (strcmp(bt, "tool_result") == 0)
					json_object_object_add(e->results, str_of(b, "tool_use_id"), json_object_get(b));
				else if (strcmp(bt, "text") == 0 || strcmp(bt, "image") == 0)
				{
					if (m == NULL)
						m = exp_new(e, "user");
					json_object_object_get_ex(b, "text", &v);
					exp_part_add(m, strcmp(bt, "text") == 0 ? "text" : "image",
								 strcmp(bt, "text") == 0 ? v : NULL, NULL);
				}
				else
					e->skipped++;
			}
		}
		else
		{
			const char *api_id = str_of(msg, "id");
			exp_msg    *m = e->n_msgs ? &e->msgs[e->n_msgs - 1] : NULL;

			if (m == NULL || strcmp(m->role, "assistant") != 0 || api_id == NULL ||
				m->api_id == NULL || strcmp(m->api_id, api_id) != 0)
			{
				m = exp_new(e, "assistant");
				m->api_id = api_id;
			}
			for (size_t i = 0; i < json_object_array_length(content); i++)
			{
				json_object *b = json_object_array_get_idx(content, i);
				const char *bt = str_of(b, "type");

				if (strcmp(bt, "text") == 0 && json_object_object_get_ex(b, "text", &v))
					exp_part_add(m, "text", v, NULL);
				else if (strcmp(bt, "thinking") == 0 && json_object_object_get_ex(b, "thinking", &v))
					exp_part_add(m, "reasoning", v, NULL);
				else if (strcmp(bt, "tool_use") == 0)
					exp_part_add(m, "tool", NULL, b);
				else
					e->skipped++;
			}
			if (json_object_object_get_ex(msg, "usage", &v))
				m->usage = v;
			if (str_of(msg, "stop_reason") != NULL)
				m->stop = str_of(msg, "stop_reason");
		}
	}
	free(line);
	fclose(f);
}

static void
free_expected(expected *e)
{
	for (size_t i = 0; i < e->n_msgs; i++)
		free(e->msgs[i].parts);
	free(e->msgs);
	for (size_t i = 0; i < e->n_records; i++)
		json_object_put(e->records[i]);
	free(e->records);
	json_object_put(e->results);
}

/* A stored string equal to a JSON string, byte for byte. */
static bool
same_string(const char *got, json_object *want, expected *e)
{
	size_t		len = (size_t) json_object_get_string_len(want);

	e->texts++;
	e->bytes += len;
	return got != NULL && strlen(got) == len && memcmp(got, json_object_get_string(want), len) == 0;
}

/* JSON text equal to a json-c value (same members and values). */
static bool
same_json(const char *got, json_object *want)
{
	json_object *parsed = got ? json_tokener_parse(got) : NULL;
	bool		same = parsed != NULL && json_object_equal(parsed, want);

	json_object_put(parsed);
	return same;
}

static int64_t
usage_of(json_object *usage, const char *key)
{
	json_object *v;

	return usage && json_object_object_get_ex(usage, key, &v) ? json_object_get_int64(v) : 0;
}

/* Compare one imported message with what the log says; the first problem. */
static const char *
check_message(const mnemo_message *got, const exp_msg *want, expected *e)
{
	if (strcmp(got->role, want->role) != 0)
		return "role";
	if (got->n_parts != want->n_parts)
		return "number of parts";
	for (size_t i = 0; i < got->n_parts; i++)
	{
		const mnemo_part *p = &got->parts[i];
		const exp_part *w = &want->parts[i];

		if (strcmp(p->type, w->type) != 0)
			return "part type";
		if (w->tool == NULL)
		{
			if (w->text != NULL ? !same_string(p->text, w->text, e)
				: strstr(p->content, "\"data\": \"") == NULL)
				return "text";
			continue;
		}
		{
			json_object *input,
					   *result,
					   *content = NULL,
					   *flag;
			bool		is_error;

			if (!p->tool_name || strcmp(p->tool_name, str_of(w->tool, "name")) != 0 ||
				!p->tool_call_id || strcmp(p->tool_call_id, str_of(w->tool, "id")) != 0)
				return "tool name or call id";
			json_object_object_get_ex(w->tool, "input", &input);
			if (!same_json(p->tool_input, input))
				return "tool input";
			if (!json_object_object_get_ex(e->results, p->tool_call_id, &result))
			{
				if (strcmp(p->tool_state, "pending") != 0 || p->tool_output || p->error_message)
					return "a call without result is pending";
				continue;
			}
			is_error = json_object_object_get_ex(result, "is_error", &flag) &&
				json_object_get_boolean(flag);
			json_object_object_get_ex(result, "content", &content);
			if (strcmp(p->tool_state, is_error ? "error" : "completed") != 0)
				return "tool state";
			if (json_object_is_type(content, json_type_string))
			{
				if (!same_string(is_error ? p->error_message : p->tool_output, content, e))
					return "tool output";
			}
			else if (content != NULL && !same_json(p->tool_output, content))
				return "tool output (a list)";
			else if (content != NULL)
			{
				/* the text blocks of a list, byte for byte */
				json_object *stored = json_tokener_parse(p->tool_output);
				bool		same = true;

				for (size_t k = 0; k < json_object_array_length(content); k++)
				{
					json_object *t;

					if (json_object_object_get_ex(json_object_array_get_idx(content, k), "text", &t))
					{
						json_object *st_t;

						json_object_object_get_ex(json_object_array_get_idx(stored, k), "text", &st_t);
						same = same && same_string(json_object_get_string(st_t), t, e);
					}
				}
				json_object_put(stored);
				if (!same)
					return "tool output text";
			}
		}
	}
	if (strcmp(want->role, "assistant") == 0)
	{
		if (got->tokens.input != usage_of(want->usage, "input_tokens") ||
			got->tokens.output != usage_of(want->usage, "output_tokens") ||
			got->tokens.cache_read != usage_of(want->usage, "cache_read_input_tokens") ||
			got->tokens.cache_write != usage_of(want->usage, "cache_creation_input_tokens"))
			return "tokens";
		if ((want->stop == NULL) != (got->finish_reason == NULL) ||
			(want->stop && strcmp(want->stop, got->finish_reason) != 0))
			return "finish_reason";
	}
	return NULL;
}

typedef struct skip_log
{
	int64_t		count;
	int64_t		progress;
	int64_t		last_line;
	int64_t		kept;			/* options.kept calls */
} skip_log;

static void
on_kept(int64_t line, const char *kind, void *arg)
{
	(void) line;
	(void) kind;
	((skip_log *) arg)->kept++;
}

static void
on_skip(int64_t line, const char *kind, void *arg)
{
	skip_log   *s = arg;

	s->count++;
	if (strcmp(kind, "progress") == 0)
		s->progress++;
	s->last_line = line;
}

/*
 * Import a log and compare it with the independent reading.  brief: one
 * test line for the whole file instead of one per property.
 */
static void
check_claude_log(mnemo_store *st, const char *dir, const char *rel, bool brief)
{
	char		path[4096];
	expected	e;
	FILE	   *f;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		n = -1;
	skip_log	skips = {0};
	mnemo_import_options opts = {.skipped = on_skip,.progress_arg = &skips};
	mnemo_messages *list = NULL;
	struct stat sb;
	const char *problem = NULL;
	size_t		bad = 0;
	size_t		tools = 0;
	double		t0;
	int			rc,
				read_rc = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((f = fopen(path, "r")) == NULL)
	{
		ok(0, "%s: %s", rel, strerror(errno));
		return;
	}
	fstat(fileno(f), &sb);
	read_expected(path, &e);
	t0 = now_s();
	rc = mnemo_import_jsonl(st, f, &opts, sid, &n);
	fclose(f);
	if (!brief)
	{
		is_code(st, rc, MNEMO_OK, rel);
		diag("%s: %lld bytes imported in %.3f s (under the sanitizers)", rel,
			 (long long) sb.st_size, now_s() - t0);
		is_int(n, e.n_msgs, "%s: %zu messages, as the log reads independently", rel, e.n_msgs);
		is_int(skips.count, e.skipped, "%s: every record left out was reported (%lld)", rel,
			   (long long) e.skipped);
	}
	else if (rc != MNEMO_OK)
		diag("%s: %s", rel, mnemo_errmsg(st));
	if (rc == MNEMO_OK)
		read_rc = mnemo_messages_get(st, sid, NULL, true, &list);
	if (!brief)
		is_code(st, read_rc, MNEMO_OK, "read the imported session back");
	for (size_t i = 0; list && i < list->count && i < e.n_msgs; i++)
	{
		const char *why = check_message(&list->items[i], &e.msgs[i], &e);

		for (size_t k = 0; k < e.msgs[i].n_parts; k++)
			tools += e.msgs[i].parts[k].tool != NULL;
		if (why != NULL && bad++ == 0)
		{
			problem = why;
			diag("first difference: message %zu (seq %lld): %s", i, (long long) list->items[i].seq, why);
		}
	}
	if (brief)
		ok(list && n == (int64_t) e.n_msgs && list->count == e.n_msgs && bad == 0 &&
		   skips.count == e.skipped,
		   "%s: %zu messages, %lld records left out, %zu strings (%zu bytes) and %zu tool calls "
		   "as in the log%s%s", rel, e.n_msgs, (long long) e.skipped, e.texts, e.bytes, tools,
		   problem ? "; wrong: " : "", problem ? problem : "");
	else
		ok(list && list->count == e.n_msgs && bad == 0,
		   "%s: every message, text, tool input and output reads back as in the log "
		   "(%zu strings, %zu bytes, %zu tool calls compared)%s%s", rel, e.texts, e.bytes, tools,
		   problem ? "; wrong: " : "", problem ? problem : "");
	mnemo_messages_free(list);
	free_expected(&e);
}

/* Every other log of the data set, one line each. */
static void
check_all_logs(mnemo_store *st, const char *dir)
{
	char		pattern[4096];
	glob_t		g;
	size_t		skip = strlen(dir) + 1;

	snprintf(pattern, sizeof(pattern), "%s/*/*/*/full.jsonl", dir);
	if (access(dir, R_OK) != 0)
	{
		skip("the whole Claude Code data set: %s is not on this machine", dir);
		return;
	}
	if (glob(pattern, 0, NULL, &g) != 0)
	{
		ok(0, "the Claude Code logs under %s", dir);
		return;
	}
	is_int(g.gl_pathc, 22, "22 Claude Code logs under %s", dir);
	for (size_t i = 0; i < g.gl_pathc; i++)
	{
		const char *rel = g.gl_pathv[i] + skip;

		if (strcmp(rel, SMALL_LOG) != 0 && strcmp(rel, LARGE_LOG) != 0)
			check_claude_log(st, dir, rel, true);
	}
	globfree(&g);
}

static void
test_claude_code(mnemo_store *st)
{
	const char *dir = getenv("MNEMO_CLAUDE_DIR") ? getenv("MNEMO_CLAUDE_DIR") : CLAUDE_DIR_DEFAULT;
	char		path[4096];
	mnemo_session *s = NULL;
	char	   *head = NULL;
	size_t		size = 0;
	FILE	   *in,
			   *out;
	char	   *line = NULL;
	size_t		cap = 0;
	char		sid[MNEMO_ID_MAX + 1];
	int			rc;

	check_claude_log(st, dir, SMALL_LOG, false);
	if (mnemo_session_get(st, "5c0447e5-f29d-434b-bb0b-8898b57a8e78", &s) == MNEMO_OK)
	{
		ok(1, "the session takes the log's sessionId");
		is_str(s->agent, "claude-code", "agent claude-code");
		is_str(s->provider_id, "anthropic", "provider anthropic");
		is_str(s->model_id, "claude-sonnet-4-6", "the log's model");
		ok(s->metadata && strstr(s->metadata, "\"cwd\": \"/Users/moonshot/dev/working/kimi/kimi-cli\"") &&
		   strstr(s->metadata, "\"source\": \"claude-code\""),
		   "metadata holds the source and the log's cwd");
		mnemo_session_free(s);
	}
	else
		ok(0, "the session takes the log's sessionId: %s", mnemo_errmsg(st));

	/* the same log again: it was imported, so refused; new_ids makes a copy */
	snprintf(path, sizeof(path), "%s/%s", dir, SMALL_LOG);
	in = fopen(path, "r");
	rc = in ? mnemo_import_jsonl(st, in, NULL, sid, NULL) : -1;
	if (in)
		fclose(in);
	is_code(st, rc, MNEMO_ERR_DUPLICATE_ID, "the same log twice: refused");
	ok(strstr(mnemo_errmsg(st), "imported before (--new-ids") != NULL, "with a hint (%s)",
	   mnemo_errmsg(st));
	{
		mnemo_import_options copy = {.new_ids = true};

		in = fopen(path, "r");
		rc = in ? mnemo_import_jsonl(st, in, &copy, sid, NULL) : -1;
		if (in)
			fclose(in);
		is_code(st, rc, MNEMO_OK, "with new_ids, a copy");
		ok(strncmp(sid, "sess_", 5) == 0, "in a new session (%s)", sid);
	}

	check_claude_log(st, dir, LARGE_LOG, false);
	check_all_logs(st, getenv("MNEMO_SHARED_CLAUDE_DIR") ? getenv("MNEMO_SHARED_CLAUDE_DIR") :
				   SHARED_CLAUDE_DIR_DEFAULT);

	/* a log cut in the middle of line 7: nothing of it stays */
	in = fopen(path, "r");
	out = open_memstream(&head, &size);
	for (int i = 1; in && getline(&line, &cap, in) > 0 && i <= 7; i++)
		fwrite(line, 1, i < 7 ? strlen(line) : strlen(line) / 2, out);
	fclose(out);
	if (in)
		fclose(in);
	free(line);
	{
		mnemo_import_options opts = {.session_id = "cut-log"};
		size_t		before = count_sessions(st);

		rc = import_text(st, head, &opts, sid, NULL);
		is_code(st, rc, MNEMO_ERR_FORMAT, "a Claude Code log cut short");
		ok(strstr(mnemo_errmsg(st), "line 7") != NULL, "the error names line 7 (%s)", mnemo_errmsg(st));
		ok(!session_exists(st, "cut-log") && count_sessions(st) == before, "and nothing is left behind");
	}
	free(head);
}

/* ------------------------------------------------------------------------
 * The corners of the Claude Code reader
 * ------------------------------------------------------------------------ */

static void
test_claude_corners(mnemo_store *st)
{
	char	   *text = NULL;
	size_t		size = 0;
	FILE	   *f = open_memstream(&text, &size);
	skip_log	skips = {0};
	mnemo_import_options opts = {.skipped = on_skip,.kept = on_kept,.progress_arg = &skips};
	mnemo_messages *list = NULL;
	mnemo_session *s = NULL;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		n = 0;
	const char *rec = "\"sessionId\": \"corner-log\", \"isSidechain\": false";
	int			rc;

	fprintf(f, "{\"type\": \"summary\", \"summary\": \"A corner case\", \"leafUuid\": \"x\"}\n");
	/* 1: user; 2: assistant with redacted thinking, unknown block, tool_use late-1 */
	fprintf(f, "{\"type\": \"user\", %s, \"message\": {\"role\": \"user\", \"content\": \"go\"}}\n", rec);
	fprintf(f, "{\"type\": \"assistant\", %s, \"message\": {\"id\": \"m1\", \"model\": \"claude-x\", "
			"\"role\": \"assistant\", \"content\": [{\"type\": \"redacted_thinking\", \"data\": \"Zm9v\"}, "
			"{\"type\": \"server_tool_use\", \"id\": \"s1\"}, {\"type\": \"tool_use\", \"id\": \"late-1\", "
			"\"name\": \"Slow\", \"input\": {\"n\": 1}}], \"stop_reason\": \"tool_use\", "
			"\"usage\": {\"input_tokens\": 5, \"output_tokens\": 7}}}\n", rec);
	/* a sidechain record is not this conversation */
	fprintf(f, "{\"type\": \"user\", \"sessionId\": \"corner-log\", \"isSidechain\": true, "
			"\"message\": {\"role\": \"user\", \"content\": \"sub-agent prompt\"}}\n");
	/* 600 user turns: the call's batch was stored, and the next one is in
	 * flight (sent, its result not read) when the result arrives */
	for (int i = 0; i < 600; i++)
		fprintf(f, "{\"type\": \"user\", %s, \"message\": {\"role\": \"user\", \"content\": [{\"type\": "
				"\"text\", \"text\": \"turn %d\"}]}}\n", rec, i);
	/* the late result, a result for no known call, an image */
	fprintf(f, "{\"type\": \"user\", %s, \"message\": {\"role\": \"user\", \"content\": ["
			"{\"type\": \"tool_result\", \"tool_use_id\": \"late-1\", \"content\": \"finally\"}, "
			"{\"type\": \"tool_result\", \"tool_use_id\": \"ghost\", \"content\": [{\"type\": \"text\", "
			"\"text\": \"boo\"}], \"is_error\": true}, "
			"{\"type\": \"text\", \"text\": \"look\"}, {\"type\": \"image\", \"source\": {\"type\": \"base64\", "
			"\"media_type\": \"image/png\", \"data\": \"iVBORw0KGgo=\"}}]}}\n", rec);
	fprintf(f, "{\"type\": \"progress\", %s, \"data\": {}}\n", rec);
	fclose(f);

	rc = import_text(st, text, &opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "a synthetic Claude Code log with every corner");
	is_str(sid, "corner-log", "its sessionId");
	/* user, assistant, 600 user turns, the ghost's tool message, the user text+image */
	is_int(n, 604, "604 messages");
	is_int(skips.count, 3, "left out: the summary record, the sidechain, the progress record");
	is_int(skips.kept, 1, "kept in the message's metadata: the unknown block");
	if (mnemo_session_get(st, "corner-log", &s) == MNEMO_OK)
	{
		is_str(s->title, "A corner case", "the summary record is the title");
		mnemo_session_free(s);
	}
	rc = mnemo_messages_get(st, "corner-log", NULL, true, &list);
	if (rc != MNEMO_OK || list->count != 604)
	{
		ok(0, "read the corner session back: %s", mnemo_errmsg(st));
		mnemo_messages_free(list);
		free(text);
		return;
	}
	{
		json_object *boo = json_tokener_parse("[{\"type\": \"text\", \"text\": \"boo\"}]");
		const mnemo_message *a = &list->items[1];
		const mnemo_message *ghost = &list->items[602];
		const mnemo_message *last = &list->items[603];

		ok(a->n_parts == 2 && strcmp(a->parts[0].type, "reasoning") == 0 &&
		   strcmp(a->parts[0].text, "") == 0 && strstr(a->parts[0].content, "\"data\": \"Zm9v\""),
		   "redacted thinking is a reasoning part that keeps its data");
		ok(strcmp(a->parts[1].tool_state, "completed") == 0 && a->parts[1].tool_output &&
		   strcmp(a->parts[1].tool_output, "finally") == 0,
		   "a result that comes after its message was sent completes the stored part");
		is_int(a->tokens.output, 7, "usage of the held message");
		is_str(a->finish_reason, "tool_use", "its stop_reason");
		ok(strcmp(ghost->role, "tool") == 0 && ghost->n_parts == 1 &&
		   strcmp(ghost->parts[0].tool_name, "unknown") == 0 &&
		   strcmp(ghost->parts[0].tool_call_id, "ghost") == 0 &&
		   strcmp(ghost->parts[0].tool_state, "error") == 0 &&
		   same_json(ghost->parts[0].tool_output, boo),
		   "a result for no known call is a tool message of its own");
		json_object_put(boo);
		ok(last->n_parts == 2 && strcmp(last->parts[0].text, "look") == 0 &&
		   strcmp(last->parts[1].type, "image") == 0 &&
		   strstr(last->parts[1].content, "\"media_type\": \"image/png\"") != NULL &&
		   strstr(last->parts[1].content, "\"data\": \"iVBORw0KGgo=\"") != NULL,
		   "an image is an image part: its media type and base64 data");
	}
	mnemo_messages_free(list);
	free(text);

	/* an export longer than one page (200), and its copy */
	{
		mnemo_import_options copy = {.new_ids = true};
		size_t		lines = 0;
		char	   *first = export_text(st, "corner-log", NULL);
		char	   *second = NULL;
		char	   *a,
				   *b;

		for (const char *p = first ? first : ""; *p; p++)
			lines += *p == '\n';
		is_int(lines, 605, "the export of 604 messages, read a page at a time, has a header and 604 lines");
		rc = first ? import_text(st, first, &copy, sid, NULL) : -1;
		is_code(st, rc, MNEMO_OK, "its copy imports with new ids");
		if (rc == MNEMO_OK)
			second = export_text(st, sid, NULL);
		a = without_ids(first ? body_of(first) : "");
		b = without_ids(second ? body_of(second) : "");
		is_str(b, a, "an imported Claude Code log exports the same after a round trip");
		free(a);
		free(b);
		free(first);
		free(second);
	}
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_round_trip(st);
	test_errors(st);
	test_claude_code(st);
	test_claude_corners(st);
	mnemo_store_close(st);
	return tap_done();
}
