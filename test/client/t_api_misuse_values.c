/*
 * t_api_misuse_values.c
 *		The public API given wrong values rather than missing ones, and used
 *		after its server went away: empty, over-long, blank ids and ids with
 *		a control character; text that is not UTF-8; JSON text that is not
 *		JSON; pg_terminate_backend of the handle's backend, idle and in the
 *		middle of a call.  Each outcome is the one doc/c-api.md documents,
 *		with nothing written by a refused call.
 *
 * Missing arguments (NULL) and _free(NULL) are in t_api_misuse.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define SID "values-s"
#define MID "values-m1"
#define GONE_APP "t_api_misuse_gone"

static char long_id[MNEMO_ID_MAX + 2];	/* 257 bytes */
static char max_id[MNEMO_ID_MAX + 1];	/* 256 bytes */

/* An id the server refuses to create: "  ", "a\nb", "" and 257 bytes. */
static const char *const bad_ids[] = {"", "   ", "values\nid", "values\tid", long_id};
static const char *const bad_names[] = {"empty", "blank", "a newline", "a tab", "257 bytes"};

/* A refusal by the server for the value: INVALID_ARGUMENT with its SQLSTATE. */
#define bad_value(st, call, state, what) \
	do { \
		int			rc_ = (call); \
		\
		is_int(rc_, MNEMO_ERR_INVALID_ARGUMENT, "%s: INVALID_ARGUMENT (%s)", (what), mnemo_errmsg(st)); \
		is_str(mnemo_sqlstate(st), (state), "%s: SQLSTATE %s", (what), (state)); \
	} while (0)

static char *
count_of(const char *sql, const char *param)
{
	return sql_value(sql, param);
}

static void
is_count(const char *sql, const char *param, const char *want, const char *what)
{
	char	   *got = count_of(sql, param);

	is_str(got, want, "%s", what);
	free(got);
}

#define MESSAGES "SELECT count(*) FROM mnemo.messages WHERE session_id = $1"

/* Ids a creating call refuses (22023), and reads that find nothing there. */
static void
test_bad_ids(mnemo_store *st)
{
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_message two[2] = {MNEMO_NEW_MESSAGE_INIT, MNEMO_NEW_MESSAGE_INIT};
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_file_ref file = MNEMO_NEW_FILE_REF_INIT;
	const char *items[1] = {MID};
	mnemo_session *s = NULL;
	mnemo_file_ref *ref = NULL;
	char		what[128];

	msg.role = "user";
	part.type = "text";
	part.text = "t";
	msg.parts = &part;
	msg.n_parts = 1;
	summary.content = "sum";
	summary.remove_item_ids = items;
	summary.n_remove = 1;
	file.path = "values.txt";
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
	{
		const char *id = bad_ids[i];
		const char *name = bad_names[i];

#define WHAT(fmt) (snprintf(what, sizeof(what), fmt, name), what)
		bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.id = id}, &s), "22023",
				  WHAT("mnemo_session_create, id %s"));
		bad_value(st, mnemo_session_get_or_create(st, &(mnemo_new_session) {.id = id}, &s), "22023",
				  WHAT("mnemo_session_get_or_create, id %s"));
		msg.id = id;
		bad_value(st, mnemo_message_append(st, SID, &msg, NULL), "22023",
				  WHAT("mnemo_message_append, message id %s"));
		msg.id = NULL;
		part.id = id;
		bad_value(st, mnemo_message_append(st, SID, &msg, NULL), "22023",
				  WHAT("mnemo_message_append, part id %s"));
		bad_value(st, mnemo_part_append(st, SID, MID, &part, NULL), "22023",
				  WHAT("mnemo_part_append, part id %s"));
		part.id = NULL;
		two[0] = msg;
		two[1] = msg;
		two[1].id = id;
		bad_value(st, mnemo_messages_append(st, SID, two, 2, NULL), "22023",
				  WHAT("mnemo_messages_append, the second message's id %s"));
		bad_value(st, mnemo_checkpoint_add(st, SID, id, false, NULL), "22023",
				  WHAT("mnemo_checkpoint_add, label %s"));
		bad_value(st, mnemo_run_claim(st, SID, id, NULL), "22023",
				  WHAT("mnemo_run_claim, run id %s"));
		bad_value(st, mnemo_session_fork(st, SID, "1", id, &s), "22023",
				  WHAT("mnemo_session_fork, new id %s"));
		summary.summary_id = id;
		bad_value(st, mnemo_summary_commit(st, SID, &summary, NULL, NULL), "22023",
				  WHAT("mnemo_summary_commit, summary id %s"));
		file.content_id = id;
		bad_value(st, mnemo_file_ref_store(st, &file, NULL), "22023",
				  WHAT("mnemo_file_ref_store, content id %s"));

		/* reads and changes of something by an id that cannot exist: not found */
		is_code(st, mnemo_session_get(st, id, &s), MNEMO_ERR_SESSION_NOT_FOUND,
				WHAT("mnemo_session_get, id %s"));
		is_code(st, mnemo_message_get(st, SID, id, &(mnemo_message *) {NULL}),
				MNEMO_ERR_MESSAGE_NOT_FOUND, WHAT("mnemo_message_get, id %s"));
		is_code(st, mnemo_part_tombstone(st, SID, id, NULL), MNEMO_ERR_PART_NOT_FOUND,
				WHAT("mnemo_part_tombstone, part id %s"));
		is_code(st, mnemo_file_ref_get(st, id, &ref), MNEMO_OK, WHAT("mnemo_file_ref_get, id %s"));
		ok(ref == NULL, "%s: no such file (*out NULL)", what);
		is_code(st, mnemo_feed_follow(st, id, 0),
				i == 0 || i == 4 ? MNEMO_ERR_INVALID_ARGUMENT : MNEMO_ERR_SESSION_NOT_FOUND,
				WHAT("mnemo_feed_follow, session id %s"));
#undef WHAT
	}
	ok(s == NULL, "no session was returned");

	/* the longest id there may be is fine */
	is_code(st, mnemo_session_create(st, &(mnemo_new_session) {.id = max_id}, &s), MNEMO_OK,
			"mnemo_session_create, an id of 256 bytes");
	mnemo_session_free(s);
	is_code(st, mnemo_session_purge(st, max_id, NULL), MNEMO_OK, "and it purges");

	is_count(MESSAGES, SID, "1", "no message was written by the refused calls");
	is_count("SELECT count(*) FROM mnemo.sessions", NULL, "1", "nor any session");
	is_count("SELECT count(*) FROM mnemo.checkpoints", NULL, "0", "nor any checkpoint");
	is_count("SELECT count(*) FROM mnemo.file_references", NULL, "0", "nor any file reference");

	bad_value(st, mnemo_new_id(st, "", (char[MNEMO_ID_MAX + 1]) {0}), "22023", "mnemo_new_id, prefix empty");
	bad_value(st, mnemo_new_id(st, "a\nb", (char[MNEMO_ID_MAX + 1]) {0}), "22023",
			  "mnemo_new_id, prefix with a newline");
}

/* Text that is not UTF-8, wherever text goes to the server. */
static void
test_invalid_utf8(mnemo_store *st)
{
	const char *bad = "caf\xe9 \xff";
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_session *s = NULL;
	mnemo_search_hits *hits = NULL;

	bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.id = bad}, &s), "22021",
			  "mnemo_session_create, an id not UTF-8");
	bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.title = bad}, &s), "22021",
			  "mnemo_session_create, a title not UTF-8");
	bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.metadata = "{\"a\": \"\xff\"}"}, &s),
			  "22021", "mnemo_session_create, metadata with a string not UTF-8");
	msg.role = "user";
	part.type = "text";
	part.text = bad;
	msg.parts = &part;
	msg.n_parts = 1;
	bad_value(st, mnemo_message_append(st, SID, &msg, NULL), "22021",
			  "mnemo_message_append, a text part not UTF-8");
	bad_value(st, mnemo_part_append(st, SID, MID, &part, NULL), "22021",
			  "mnemo_part_append, a text part not UTF-8");
	part.text = NULL;

	/* JSON text the library parses (content, tool_input): it is no JSON text */
	part.content = "{\"type\": \"text\", \"text\": \"\xff\"}";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT,
			"mnemo_message_append, content with a string not UTF-8: FORMAT");
	part.content = NULL;
	part.type = "tool";
	part.tool_name = "grep";
	part.tool_call_id = "call-u";
	part.tool_state = "pending";
	part.tool_input = "{\"q\": \"\xff\"}";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT,
			"mnemo_message_append, tool_input with a string not UTF-8: FORMAT");
	part.tool_input = NULL;
	part.tool_output = bad;
	bad_value(st, mnemo_message_append(st, SID, &msg, NULL), "22021",
			  "mnemo_message_append, tool_output not UTF-8");

	bad_value(st, mnemo_message_update_tokens(st, SID, MID, NULL, -1, bad), "22021",
			  "mnemo_message_update_tokens, a finish reason not UTF-8");
	bad_value(st, mnemo_part_update_status(st, SID, "values-p1",
										   &(mnemo_part_status) {.output = bad}), "22021",
			  "mnemo_part_update_status, an output not UTF-8");
	summary.content = bad;
	summary.remove_item_ids = (const char *const[]) {MID};
	summary.n_remove = 1;
	bad_value(st, mnemo_summary_commit(st, SID, &summary, NULL, NULL), "22021",
			  "mnemo_summary_commit, content not UTF-8");
	bad_value(st, mnemo_pending_set(st, SID, "{\"q\": \"\xff\"}", NULL), "22021",
			  "mnemo_pending_set, a request with a string not UTF-8");
	bad_value(st, mnemo_state_update(st, SID, "{\"q\": \"\xff\"}", NULL), "22021",
			  "mnemo_state_update, a patch with a string not UTF-8");
	bad_value(st, mnemo_search(st, SID, bad, -1, &hits), "22021", "mnemo_search, a query not UTF-8");
	bad_value(st, mnemo_file_ref_store(st, &(mnemo_new_file_ref) {.content_id = "values-c", .path = bad},
									   NULL), "22021", "mnemo_file_ref_store, a path not UTF-8");
	ok(s == NULL && hits == NULL, "nothing was returned");
	is_count(MESSAGES, SID, "1", "no message was written by the refused calls");
}

/* Values json-c's strict mode takes: not JSON, or nothing jsonb can hold. */
static const char *const lax_json[] = {
	"{'q': 1}", "NaN", "-Infinity", "1.", "\"a\nb\"", "\"\\u0000\"", "\"\\ud800\""
};
static const char *const lax_names[] = {
	"content with a single-quoted key: FORMAT", "content with NaN: FORMAT",
	"content with -Infinity: FORMAT", "content with the number 1.: FORMAT",
	"content with a raw newline in a string: FORMAT", "content with \\u0000: FORMAT",
	"content with a lone surrogate escape: FORMAT"
};

/* JSON text that is not JSON, where the API takes JSON text. */
static void
test_not_json(mnemo_store *st)
{
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_session *s = NULL;
	char	   *state = NULL;

	bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.metadata = "{oops"}, &s), "22P02",
			  "mnemo_session_create, metadata not JSON");
	bad_value(st, mnemo_session_create(st, &(mnemo_new_session) {.metadata = "[1]"}, &s), "22023",
			  "mnemo_session_create, metadata not an object");
	msg.role = "user";
	msg.parts = &part;
	msg.n_parts = 1;
	part.content = "{\"type\": \"text\", \"text\": ";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT,
			"mnemo_message_append, content cut short: FORMAT");
	part.content = "{\"type\": \"text\"} trailing";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT,
			"mnemo_message_append, content with text after the object: FORMAT");
	part.content = "";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT,
			"mnemo_message_append, content empty: FORMAT");
	/* what json-c's strict mode takes and PostgreSQL's json does not */
	for (size_t i = 0; i < sizeof(lax_json) / sizeof(lax_json[0]); i++)
	{
		char		content[128];

		snprintf(content, sizeof(content), "{\"type\": \"text\", \"x\": %s}", lax_json[i]);
		part.content = content;
		is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_FORMAT, lax_names[i]);
	}
	part.content = "[{\"type\": \"text\"}]";
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_ERR_INVALID_ARGUMENT,
			"mnemo_message_append, content an array: INVALID_ARGUMENT");
	part.content = NULL;
	part.type = "tool";
	part.tool_name = "grep";
	part.tool_call_id = "call-j";
	part.tool_state = "pending";
	part.tool_input = "{'q': 1}";
	is_code(st, mnemo_part_append(st, SID, MID, &part, NULL), MNEMO_ERR_FORMAT,
			"mnemo_part_append, tool_input not JSON: FORMAT");
	part.tool_input = "";
	is_code(st, mnemo_part_append(st, SID, MID, &part, NULL), MNEMO_ERR_FORMAT,
			"mnemo_part_append, tool_input empty: FORMAT");
	ok(strstr(mnemo_errmsg(st), "tool_input") != NULL, "the message names the argument (%s)",
	   mnemo_errmsg(st));

	bad_value(st, mnemo_pending_set(st, SID, "nope", NULL), "22P02", "mnemo_pending_set, request not JSON");
	bad_value(st, mnemo_pending_set(st, SID, "", NULL), "22P02", "mnemo_pending_set, request empty");
	bad_value(st, mnemo_pending_set(st, SID, "[1]", NULL), "22023", "mnemo_pending_set, request an array");
	bad_value(st, mnemo_state_update(st, SID, "{\"a\": }", NULL), "22P02",
			  "mnemo_state_update, patch not JSON");
	bad_value(st, mnemo_state_update(st, SID, "\"s\"", NULL), "22023",
			  "mnemo_state_update, patch a string");
	summary.content = "sum";
	summary.remove_item_ids = (const char *const[]) {MID};
	summary.n_remove = 1;
	summary.metadata = "{";
	bad_value(st, mnemo_summary_commit(st, SID, &summary, NULL, NULL), "22P02",
			  "mnemo_summary_commit, metadata not JSON");
	is_code(st, mnemo_state_get(st, SID, &state), MNEMO_OK, "the state reads back");
	is_str(state, "{}", "unchanged by the refused patches");
	mnemo_state_free(state);
	is_count(MESSAGES, SID, "1", "no message was written by the refused calls");
	is_count("SELECT count(*) FROM mnemo.message_parts WHERE session_id = $1", SID, "1",
			 "nor any part");
	ok(s == NULL, "no session was returned");
}

/* Empty strings that are not ids: what each call documents. */
static void
test_empty_strings(mnemo_store *st)
{
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_search_hits *hits = NULL;
	mnemo_messages *list = NULL;
	mnemo_file_result *fr = NULL;
	char		fifo[64];

	msg.role = "";
	bad_value(st, mnemo_message_append(st, SID, &msg, NULL), "22023", "mnemo_message_append, role empty");
	is_code(st, mnemo_search(st, SID, "", -1, &hits), MNEMO_OK, "mnemo_search, query empty");
	ok(hits != NULL && hits->count == 0, "finds nothing");
	mnemo_search_hits_free(hits);
	is_code(st, mnemo_messages_get_by_ids(st, SID, NULL, 0, &list), MNEMO_OK,
			"mnemo_messages_get_by_ids, no ids");
	ok(list != NULL && list->count == 0, "an empty list");
	mnemo_messages_free(list);
	is_code(st, mnemo_context_swap(st, SID, NULL, 0, "values-none", NULL), MNEMO_ERR_INVALID_SWAP,
			"mnemo_context_swap, no items: INVALID_SWAP");
	bad_value(st, mnemo_file_ref_store(st, &(mnemo_new_file_ref) {.content_id = "values-c", .path = ""},
									   NULL), "22023", "mnemo_file_ref_store, path empty");
	is_code(st, mnemo_file_handle(st, "", NULL, &fr), MNEMO_ERR_INVALID_ARGUMENT,
			"mnemo_file_handle, path empty");
	is_code(st, mnemo_file_handle(st, "/nonexistent/values", NULL, &fr), MNEMO_ERR_IO,
			"mnemo_file_handle, no such file: IO");
	is_code(st, mnemo_file_handle(st, "/", NULL, &fr), MNEMO_ERR_IO,
			"mnemo_file_handle, a directory: IO");
	/* a FIFO nobody writes to: refused at once, not waited on */
	snprintf(fifo, sizeof(fifo), "/tmp/t_api_misuse_fifo.%ld", (long) getpid());
	unlink(fifo);
	if (mkfifo(fifo, 0600) != 0)
		bail_out("mkfifo %s failed", fifo);
	is_code(st, mnemo_file_handle(st, fifo, NULL, &fr), MNEMO_ERR_IO,
			"mnemo_file_handle, a FIFO with no writer: IO, without waiting");
	unlink(fifo);
	ok(fr == NULL, "no file result");
}

/* ---- the server gone ---------------------------------------------------- */

static void
terminate_gone(void)
{
	char	   *n = sql_value("SELECT count(pg_catalog.pg_terminate_backend(pid)) "
							  "FROM pg_catalog.pg_stat_activity WHERE application_name = $1",
							  GONE_APP);

	if (strcmp(n, "1") != 0)
		bail_out("pg_terminate_backend ended %s backends, not 1", n);
	free(n);
}

static void *
terminate_later(void *arg)
{
	struct timespec ts = {0, 300 * 1000 * 1000};

	(void) arg;
	nanosleep(&ts, NULL);
	terminate_gone();
	return NULL;
}

/* Every call after the loss fails with CONNECTION, a message, no hang, its
 * out-parameter untouched, until mnemo_store_reconnect. */
static void
check_gone(mnemo_store *st, const char *when)
{
	mnemo_session *s = NULL;
	mnemo_message_ref ref = {"untouched", 7};
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	int64_t		deleted = 42;

	msg.role = "user";
	is_code(st, mnemo_session_get(st, SID, &s), MNEMO_ERR_CONNECTION, when);
	ok(strstr(mnemo_errmsg(st), "terminating connection due to administrator command") != NULL,
	   "%s: the message has the server's reason (%s)", when, mnemo_errmsg(st));
	is_code(st, mnemo_message_append(st, SID, &msg, &ref), MNEMO_ERR_CONNECTION,
			"then an append: CONNECTION too");
	is_code(st, mnemo_session_purge(st, SID, &deleted), MNEMO_ERR_CONNECTION,
			"then a purge: CONNECTION too");
	is_code(st, mnemo_feed_follow(st, SID, 0), MNEMO_ERR_CONNECTION, "then a follow: CONNECTION");
	is_code(st, mnemo_feed_poll(st, 100), MNEMO_ERR_CONNECTION, "then a poll: CONNECTION");
	is_int(mnemo_feed_socket(st), -1, "the feed's socket is gone: -1");
	ok(s == NULL && strcmp(ref.id, "untouched") == 0 && ref.seq == 7 && deleted == 42,
	   "no out-parameter was written");
	is_code(st, mnemo_store_reconnect(st), MNEMO_OK, "mnemo_store_reconnect");
	is_code(st, mnemo_session_get(st, SID, &s), MNEMO_OK, "the handle works again");
	mnemo_session_free(s);
}

static void
test_server_gone(void)
{
	mnemo_store *st = open_store("application_name=" GONE_APP);
	PGconn	   *locker;
	PGresult   *res;
	pthread_t	killer;
	mnemo_messages *list = NULL;

	/* idle: the backend is ended between two calls */
	is_code(st, mnemo_state_update(st, SID, "{}", NULL), MNEMO_OK, "a call before the backend is ended");
	terminate_gone();
	check_gone(st, "the call after pg_terminate_backend: CONNECTION");

	/* mid-call: the backend is ended while the call waits on a lock */
	is_code(st, mnemo_messages_get(st, SID, NULL, false, &list), MNEMO_OK, "a read, prepared");
	mnemo_messages_free(list);
	list = NULL;
	locker = PQconnectdb("");
	res = PQexec(locker, "BEGIN; LOCK TABLE mnemo.messages IN ACCESS EXCLUSIVE MODE");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		bail_out("LOCK TABLE: %s", PQerrorMessage(locker));
	PQclear(res);
	if (pthread_create(&killer, NULL, terminate_later, NULL) != 0)
		bail_out("pthread_create failed");
	is_code(st, mnemo_messages_get(st, SID, NULL, false, &list), MNEMO_ERR_CONNECTION,
			"a read waiting on a lock when its backend is ended: CONNECTION");
	ok(list == NULL && strstr(mnemo_errmsg(st), "terminating connection") != NULL,
	   "no list; the message has the server's reason");
	pthread_join(killer, NULL);
	PQclear(PQexec(locker, "ROLLBACK"));
	PQfinish(locker);
	check_gone(st, "the call after that: CONNECTION");
	mnemo_store_close(st);
}

int
main(void)
{
	mnemo_store *st;
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;

	memset(long_id, 'x', MNEMO_ID_MAX + 1);
	memset(max_id, 'y', MNEMO_ID_MAX);
	st = open_store(NULL);
	new_session(st, SID);
	msg.role = "user";
	msg.id = MID;
	part.type = "text";
	part.id = "values-p1";
	part.text = "one";
	msg.parts = &part;
	msg.n_parts = 1;
	if (mnemo_message_append(st, SID, &msg, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
	test_bad_ids(st);
	test_invalid_utf8(st);
	test_not_json(st);
	test_empty_strings(st);
	mnemo_store_close(st);
	test_server_gone();
	return tap_done();
}
