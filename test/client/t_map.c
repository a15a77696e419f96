/*
 * t_map.c
 *		LLMMap and AgenticMap (mnemo_map_*) against the scripted provider
 *		server: templates and schemas checked before any call, invalid JSON
 *		then valid, schema failures with the retry guidance, timeouts,
 *		provider errors, the concurrency bound, results in completion order,
 *		the events in process and on the feed, and AgenticMap's sub-sessions
 *		that compact.  The durable side with several processes and a kill is
 *		test/client/map.sh.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"

static PGconn *db;

/* The first column of the first row of sql, malloc'd ("" when none). */
static char *
q(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
q(const char *fmt, ...)
{
	char		sql[2048];
	va_list		ap;
	PGresult   *res;
	char	   *v;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	res = PQexec(db, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(db));
	v = strdup(PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");
	PQclear(res);
	return v;
}

#define is_q(want, what, ...) \
	do { char *v_ = q(__VA_ARGS__); is_str(v_, (want), "%s", (what)); free(v_); } while (0)

/* ---- results as they come ---------------------------------------------------- */

typedef struct seen
{
	int			n;
	int			ordinals[400];
	char		kinds[400][16];
	char		outputs[400][256];
	int			attempts[400];
	char		subs[400][MNEMO_ID_MAX + 1];
} seen;

static int
collect(const mnemo_map_result *r, void *arg)
{
	seen	   *s = arg;

	if (s->n < 400)
	{
		s->ordinals[s->n] = r->ordinal;
		snprintf(s->kinds[s->n], sizeof(s->kinds[0]), "%s", r->success ? "ok" : r->error_kind);
		snprintf(s->outputs[s->n], sizeof(s->outputs[0]), "%s",
				 r->output ? r->output : r->error ? r->error : "");
		s->attempts[s->n] = r->attempts;
		snprintf(s->subs[s->n], sizeof(s->subs[0]), "%s", r->sub_session_id ? r->sub_session_id : "");
	}
	s->n++;
	return 0;
}

static void
options_for(mnemo_map_options *o, const server *srv, seen *s)
{
	memset(o, 0, sizeof(*o));
	o->turn.provider = "openai";
	o->turn.model = "gpt-4o-mini";
	o->turn.api_key = KEY;
	o->turn.base_url = strcpy(malloc(80), srv->url);
	strcat((char *) o->turn.base_url, "/v1");
	o->backoff_ms = 10;
	o->on_result = collect;
	o->arg = s;
}

static void
options_free(mnemo_map_options *o)
{
	free((char *) o->turn.base_url);
}

/* Create and run a map over items; the run's return code. */
static int
run_map(mnemo_store *st, const char *sid, const char *id, const char *template_text,
		const char *items, mnemo_map_options *o, mnemo_map_run_stats *stats)
{
	char	   *map_id = NULL;
	int			rc;

	o->map_id = id;
	if ((rc = mnemo_map_create(st, sid, template_text, items, o, &map_id)) != MNEMO_OK)
		return rc;
	rc = mnemo_map_run(st, sid, map_id, o, stats);
	free(map_id);
	return rc;
}

/* ---- templates and schemas, before any call -------------------------------- */

static void
test_templates(mnemo_store *st)
{
	char	   *out = NULL;
	char	   *map_id = NULL;

	is_int(mnemo_map_check_template(st, "Summarise {{ item }}."), MNEMO_OK, "{{ item }} is a template");
	is_int(mnemo_map_check_template(st, "{{item.title}} by {{ item.author.name }}"), MNEMO_OK,
		   "{{item.field}} and a nested path are templates");
	is_int(mnemo_map_check_template(st, "Summarise the text."), MNEMO_ERR_INVALID_ARGUMENT,
		   "a template without {{ item }}: INVALID_ARGUMENT");
	ok(strstr(mnemo_errmsg(st), "{{ item }}") != NULL, "the error says what is missing: %s", mnemo_errmsg(st));
	is_int(mnemo_map_check_template(st, "{{ items }} {{ item2 }} {{ other }}"), MNEMO_ERR_INVALID_ARGUMENT,
		   "{{ items }}, {{ item2 }} and other names are not the item");

	is_int(mnemo_map_render(st, "Say {{ item }}!", "\"hi\"", &out), MNEMO_OK, "render a string item");
	is_str(out, "Say hi!", "a string item is its text");
	free(out);
	is_int(mnemo_map_render(st, "{{ item.a }}/{{item.b.c}}/{{ item }}/{{ not a var }}",
							"{\"a\": \"x\", \"b\": {\"c\": 2}}", &out), MNEMO_OK, "render fields");
	is_str(out, "x/2/{\"a\":\"x\",\"b\":{\"c\":2}}/{{ not a var }}",
		   "fields, a nested number, the whole object as JSON; other braces stay");
	free(out);
	out = NULL;
	is_int(mnemo_map_render(st, "{{ item.missing }}", "{\"a\": 1}", &out), MNEMO_ERR_INVALID_ARGUMENT,
		   "a field the item lacks: INVALID_ARGUMENT");
	ok(out == NULL, "and no prompt");

	new_session(st, "mt_tpl");
	is_int(mnemo_map_create(st, "mt_tpl", "no variable here", "[1, 2]", NULL, &map_id),
		   MNEMO_ERR_INVALID_ARGUMENT, "mnemo_map_create refuses a template without the item");
	is_q("0", "nothing was stored", "SELECT count(*) FROM mnemo.maps WHERE session_id = 'mt_tpl'");
	is_int(mnemo_map_create(st, "mt_tpl", "{{ item }}", "{\"a\": 1}", NULL, &map_id),
		   MNEMO_ERR_INVALID_ARGUMENT, "items that are not an array: INVALID_ARGUMENT");
	{
		mnemo_map_options named = MNEMO_MAP_OPTIONS_INIT;
		char	   *sid = NULL;

		named.map_id = "mt_found";
		is_int(mnemo_map_create(st, "mt_tpl", "{{ item }}", "[1]", &named, &map_id), MNEMO_OK,
			   "a map named mt_found");
		free(map_id);
		map_id = NULL;
		is_int(mnemo_map_session(st, "mt_found", &sid), MNEMO_OK, "mnemo_map_session finds it by its id");
		is_str(sid, "mt_tpl", "in its session (through mnemo.find_map: no table read)");
		free(sid);
		sid = NULL;
		is_int(mnemo_map_session(st, "mt_no_such_map", &sid), MNEMO_ERR_NOT_FOUND,
			   "mnemo_map_session of an unknown id: NOT_FOUND");
	}
	is_int(mnemo_map_create(st, "mt_nope", "{{ item }}", "[1]", NULL, &map_id),
		   MNEMO_ERR_SESSION_NOT_FOUND, "a map of a missing session: SESSION_NOT_FOUND");
}

static void
test_schemas(mnemo_store *st)
{
	const char *schema = "{\"type\": \"object\", \"required\": [\"label\", \"score\"],"
		"\"additionalProperties\": false, \"properties\": {"
		"\"label\": {\"enum\": [\"spam\", \"ham\"]}, \"score\": {\"type\": \"integer\"},"
		"\"tags\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"
		"\"note\": {\"type\": [\"string\", \"null\"]}}}";
	mnemo_map_options o = MNEMO_MAP_OPTIONS_INIT;
	char	   *map_id = NULL;

	is_int(mnemo_map_validate(st, schema, "{\"label\": \"ham\", \"score\": 3, \"tags\": [\"a\"], \"note\": null}"),
		   MNEMO_OK, "a matching output validates");
	is_int(mnemo_map_validate(st, schema, "{\"label\": \"ham\"}"), MNEMO_ERR_INVALID_ARGUMENT,
		   "a missing required property fails");
	ok(strstr(mnemo_errmsg(st), "score") != NULL, "naming it: %s", mnemo_errmsg(st));
	is_int(mnemo_map_validate(st, schema, "{\"label\": \"eggs\", \"score\": 1}"), MNEMO_ERR_INVALID_ARGUMENT,
		   "a value outside the enum fails");
	is_int(mnemo_map_validate(st, schema, "{\"label\": \"ham\", \"score\": 1.5}"), MNEMO_ERR_INVALID_ARGUMENT,
		   "a fraction is not an integer");
	is_int(mnemo_map_validate(st, schema, "{\"label\": \"ham\", \"score\": 1, \"tags\": [\"a\", 2]}"),
		   MNEMO_ERR_INVALID_ARGUMENT, "an array item of the wrong type fails");
	ok(strstr(mnemo_errmsg(st), "$.tags[1]") != NULL, "the path names the element: %s", mnemo_errmsg(st));
	is_int(mnemo_map_validate(st, schema, "{\"label\": \"ham\", \"score\": 1, \"extra\": 1}"),
		   MNEMO_ERR_INVALID_ARGUMENT, "additionalProperties false refuses another member");
	is_int(mnemo_map_validate(st, schema, "{\"label\": "), MNEMO_ERR_FORMAT, "an output that is not JSON: FORMAT");
	is_int(mnemo_map_validate(st, "{\"type\": \"string\", \"pattern\": \"^a\"}", "\"abc\""),
		   MNEMO_ERR_INVALID_ARGUMENT, "a keyword outside the subset is refused, not ignored");

	new_session(st, "mt_schema");
	o.schema = "{\"type\": \"object\", \"minProperties\": 1}";
	is_int(mnemo_map_create(st, "mt_schema", "{{ item }}", "[1]", &o, &map_id),
		   MNEMO_ERR_INVALID_ARGUMENT, "mnemo_map_create refuses a schema it cannot fully check");
	is_q("0", "nothing was stored", "SELECT count(*) FROM mnemo.maps WHERE session_id = 'mt_schema'");
}

/* ---- LLMMap against the provider server -------------------------------------- */

static void
test_invalid_then_valid(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	mnemo_map_options o;
	mnemo_map_run_stats stats;
	json_object **lines;
	int			n;
	const char *second;

	server_start(&srv, "model gpt-4o-mini\n"
				 "reply\n  text \"Sure! Here it is: {label: spam\"\n"
				 "reply\n  text \"```json\\n{\\\"label\\\": \\\"spam\\\", \\\"score\\\": 9}\\n```\"\n");
	new_session(st, "mt_llm1");
	options_for(&o, &srv, &s);
	o.schema = "{\"type\": \"object\", \"required\": [\"label\", \"score\"]}";
	o.system_prompt = "You classify e-mail.";
	is_int(run_map(st, "mt_llm1", "m_valid", "Classify: {{ item.subject }}",
				   "[{\"subject\": \"WIN A PRIZE\"}]", &o, &stats), MNEMO_OK,
		   "invalid JSON then valid: the run succeeds");
	is_int(s.n, 1, "one result");
	is_str(s.kinds[0], "ok", "the item succeeded");
	is_int(s.attempts[0], 2, "after two attempts");
	is_str(s.outputs[0], "{\"label\":\"spam\",\"score\":9}", "the markdown fence is stripped, the JSON kept");
	is_int(stats.done, 1, "stats: one done");
	lines = log_read(&srv, &n);
	is_int(n, 2, "two requests");
	is_str(jstr(lines[0], "body.messages.0.content"), "You classify e-mail.", "the system prompt goes first");
	is_str(jstr(lines[0], "body.messages.1.content"), "Classify: WIN A PRIZE", "the rendered prompt");
	second = n > 1 ? jstr(lines[1], "body.messages.1.content") : NULL;
	ok(second && strstr(second, "Reply with only JSON that matches the schema") &&
	   strstr(second, "not JSON"), "the retry appends the guidance and the reason");
	log_free(lines, n);
	is_q("done|2|{\"label\": \"spam\", \"score\": 9}", "the result is in SQL, with its attempts",
		 "SELECT state || '|' || attempts || '|' || result FROM mnemo.map_results('mt_llm1', 'm_valid')");
	server_stop(&srv);
	options_free(&o);
}

static void
test_schema_failures(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	mnemo_map_options o;
	mnemo_map_run_stats stats;
	json_object **lines;
	int			n;
	int			guided = 0;

	server_start(&srv, "model gpt-4o-mini\nreply repeat=3\n  text \"{\\\"label\\\": 7}\"\n");
	new_session(st, "mt_llm2");
	options_for(&o, &srv, &s);
	o.schema = "{\"type\": \"object\", \"properties\": {\"label\": {\"type\": \"string\"}}}";
	o.max_retries = 2;
	o.retry_guidance = "Answer again as JSON.";
	is_int(run_map(st, "mt_llm2", "m_schema", "Label {{ item }}", "[\"x\"]", &o, &stats), MNEMO_OK,
		   "a map whose item fails still runs to its end");
	is_str(s.kinds[0], "schema_error", "JSON that breaks the schema: schema_error");
	is_int(s.attempts[0], 3, "after the first attempt and max_retries = 2 retries");
	ok(strstr(s.outputs[0], "$.label") != NULL, "the error names the path: %s", s.outputs[0]);
	lines = log_read(&srv, &n);
	for (int i = 1; i < n; i++)
	{
		const char *p = jstr(lines[i], "body.messages.0.content");

		guided += p && strstr(p, "Answer again as JSON.") && strstr(p, "$.label");
	}
	is_int(guided, 2, "both retries carry the map's own guidance and the reason");
	log_free(lines, n);
	is_int(stats.failed, 1, "stats: one failed");
	is_q("failed|schema_error|3", "the failure is in SQL with its kind and attempts",
		 "SELECT state || '|' || error_kind || '|' || attempts FROM mnemo.map_items "
		 "WHERE session_id = 'mt_llm2'");
	server_stop(&srv);
	options_free(&o);
}

static void
test_timeout_and_errors(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	mnemo_map_options o;
	int64_t		t0;
	int64_t		took;

	server_start(&srv, "model gpt-4o-mini\n"
				 "reply\n  text \"late\"\n  wait_ms 3000\n"
				 "reply\n  error 400\n");
	new_session(st, "mt_llm3");
	options_for(&o, &srv, &s);
	o.timeout_ms = 300;
	o.max_retries = -1;
	o.concurrency = 1;
	t0 = now_ms();
	is_int(run_map(st, "mt_llm3", "m_slow", "Wait for {{ item }}", "[1, 2]", &o, NULL), MNEMO_OK,
		   "a map with a slow and a refused item runs to its end");
	took = now_ms() - t0;
	is_int(s.n, 2, "two results");
	is_str(s.kinds[0], "timeout", "no reply within timeout_ms: timeout");
	ok(took < 2500, "the timeout came before the reply would have (%lld ms)", (long long) took);
	is_str(s.kinds[1], "llm_error", "a provider error: llm_error");
	ok(strstr(s.outputs[1], "400") != NULL || strlen(s.outputs[1]) > 0, "with its message: %s", s.outputs[1]);
	is_int(s.attempts[0] + s.attempts[1], 2, "max_retries < 0: one attempt each");
	server_stop(&srv);
	options_free(&o);
}

static int	events[MNEMO_EVENT_TYPE_COUNT_];

static int
count_event(mnemo_store *st, const mnemo_event *e, void *arg)
{
	(void) st;
	(void) arg;
	events[e->type]++;
	return 0;
}

static void
test_concurrency_and_order(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	mnemo_map_options o;
	mnemo_map_run_stats stats;
	mnemo_map_status ms;
	mnemo_store *follower = open_store(NULL);
	json_object **lines;
	int			n;
	int			conns[64] = {0};
	int			distinct = 0;
	int			sub;
	int			remote;
	char	   *order;
	char		mine[2048] = "";

	server_start(&srv, "model gpt-4o-mini\nreply repeat=forever\n  text \"fine\"\n  wait_ms 100\n");
	new_session(st, "mt_llm4");
	is_int(mnemo_feed_follow(follower, "mt_llm4", 0), MNEMO_OK, "another handle follows the session");
	memset(events, 0, sizeof(events));
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, count_event, NULL);
	options_for(&o, &srv, &s);
	o.concurrency = 3;
	is_int(run_map(st, "mt_llm4", "m_many", "Item {{ item }}", "[0,1,2,3,4,5,6,7,8,9,10,11]", &o, &stats),
		   MNEMO_OK, "twelve items, three workers");
	is_int(stats.done, 12, "all done");
	is_str(s.outputs[0], "\"fine\"", "without a schema the output is the reply's text, as a JSON string");
	lines = log_read(&srv, &n);
	for (int i = 0; i < n; i++)
	{
		int			c = json_object_get_int(jpath(lines[i], "conn"));

		if (c >= 0 && c < 64 && !conns[c]++)
			distinct++;
	}
	log_free(lines, n);
	is_int(n, 12, "one request per item");
	is_int(distinct, 3, "over as many connections as workers (the concurrency bound)");
	for (int i = 0; i < s.n; i++)
		snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), "%s%d", i ? "," : "", s.ordinals[i]);
	order = q("SELECT string_agg(ordinal::text, ',' ORDER BY completion_seq) FROM mnemo.map_results('mt_llm4', 'm_many')");
	is_str(mine, order, "results came in completion order, as completion_seq numbers them");
	free(order);
	is_int(events[MNEMO_EVENT_MAP_STARTED], 1, "MAP_STARTED in process, once");
	is_int(events[MNEMO_EVENT_MAP_ITEM_COMPLETED], 12, "MAP_ITEM_COMPLETED per item");
	is_int(events[MNEMO_EVENT_MAP_COMPLETED], 1, "MAP_COMPLETED once");
	mnemo_event_unsubscribe(st, sub);
	memset(events, 0, sizeof(events));
	mnemo_event_subscribe(follower, MNEMO_EVENT_ANY, count_event, NULL);
	remote = 0;
	for (int i = 0; i < 20 && events[MNEMO_EVENT_MAP_COMPLETED] == 0; i++)
		remote += mnemo_feed_poll(follower, 200);
	is_int(events[MNEMO_EVENT_MAP_STARTED], 1, "the feed delivers map_started");
	is_int(events[MNEMO_EVENT_MAP_ITEM_COMPLETED], 12, "map_item_completed for every item");
	is_int(events[MNEMO_EVENT_MAP_COMPLETED], 1, "and map_completed");
	is_int(mnemo_map_get_status(st, "mt_llm4", "m_many", &ms), MNEMO_OK, "mnemo_map_get_status");
	ok(ms.items == 12 && ms.done == 12 && ms.failed == 0 && ms.in_flight == 0 && ms.pending == 0 &&
	   ms.completed_at > 0 && !ms.agentic, "12 items, 12 done, completed");
	is_int(mnemo_map_get_status(st, "mt_llm4", "m_none", &ms), MNEMO_ERR_NOT_FOUND,
		   "the status of a map that does not exist: NOT_FOUND");
	is_int(mnemo_map_run(st, "mt_llm4", "m_none", &o, NULL), MNEMO_ERR_NOT_FOUND,
		   "running a map that does not exist: NOT_FOUND");
	mnemo_store_close(follower);
	server_stop(&srv);
	options_free(&o);
}

/* ---- AgenticMap ------------------------------------------------------------------ */

static int
compact_l3(mnemo_store *st, const char *session_id, bool blocking, void *arg)
{
	mnemo_compact_options co = MNEMO_COMPACT_OPTIONS_INIT;

	(void) blocking;
	(void) arg;
	co.first_level = 3;
	co.tail_messages = 2;
	co.l3_tokens = 40;
	return mnemo_compact(st, session_id, &co, NULL) == MNEMO_OK ? 0 : 1;
}

/* The next agentic scenario: the server stopped and started with script,
 * results and options fresh. */
static void
next_agentic(server *srv, const char *script, mnemo_map_options *o, seen *s)
{
	server_stop(srv);
	server_start(srv, script);
	memset(s, 0, sizeof(*s));
	options_free(o);
	options_for(o, srv, s);
	o->agentic = true;
}

static int
lookup_tool(const char *sub, const char *name, const char *input, char **output, void *arg)
{
	(void) arg;
	if (sub == NULL || strcmp(name, "lookup") != 0 || strstr(input, "\"k\"") == NULL)
		return 1;
	*output = strdup("the value of k is 42");
	return 0;
}

static void
test_agentic(mnemo_store *st)
{
	char		script[8192] = "model gpt-4o-mini\n";
	server		srv;
	seen		s = {0};
	mnemo_map_options o;
	mnemo_map_run_stats stats;
	mnemo_session_filter f = MNEMO_SESSION_FILTER_INIT;
	mnemo_sessions *kids = NULL;

	/* each item: eight turns that do not finish, then the answer */
	for (int item = 0; item < 2; item++)
	{
		for (int t = 0; t < 8; t++)
			snprintf(script + strlen(script), sizeof(script) - strlen(script),
					 "reply\n  text_tokens 40\n  finish abort\n");
		snprintf(script + strlen(script), sizeof(script) - strlen(script),
				 "reply\n  text \"final answer %d\"\n", item);
	}
	server_start(&srv, script);
	new_session(st, "mt_agent");
	options_for(&o, &srv, &s);
	o.agentic = true;
	o.concurrency = 1;
	o.continuation_message = "Go on.";
	o.turn.context_limit = 8500;
	o.turn.compact = compact_l3;
	is_int(run_map(st, "mt_agent", "m_agent", "Investigate {{ item.topic }}",
				   "[{\"topic\": \"alpha\"}, {\"topic\": \"beta\"}]", &o, &stats), MNEMO_OK,
		   "an AgenticMap of two items runs");
	is_int(stats.done, 2, "both done");
	is_str(s.outputs[0], "\"final answer 0\"", "only the final answer returns (item 0)");
	is_str(s.outputs[1], "\"final answer 1\"", "only the final answer returns (item 1)");
	is_int(s.attempts[0], 9, "after nine turns");
	f.parent_id = "mt_agent";
	is_int(mnemo_session_list(st, &f, &kids), MNEMO_OK, "list the map session's children");
	is_int(kids ? (int) kids->count : 0, 2, "one sub-session per item, parent set");
	mnemo_sessions_free(kids);
	is_q("9|9", "a real multi-turn session: the prompt and eight continuations, nine replies",
		 "SELECT count(*) FILTER (WHERE role = 'user' AND NOT is_summary) || '|' || "
		 "count(*) FILTER (WHERE role = 'assistant' AND NOT is_summary) FROM mnemo.messages "
		 "WHERE session_id = '%s'", s.subs[0]);
	is_q("Investigate alpha", "the first turn is the rendered template",
		 "SELECT p.content->>'text' FROM mnemo.messages m JOIN mnemo.message_parts p "
		 "ON p.session_id = m.session_id AND p.seq = m.seq "
		 "WHERE m.session_id = '%s' ORDER BY m.seq LIMIT 1", s.subs[0]);
	is_q("t", "the sub-session compacted on its own (a summary node)",
		 "SELECT count(*) > 0 FROM mnemo.summary_nodes('%s', false)", s.subs[0]);
	is_q("0", "the parent's context grew by nothing: no message in the map's session",
		 "SELECT count(*) FROM mnemo.messages WHERE session_id = 'mt_agent'");
	is_q(s.subs[1], "the item's row names its sub-session",
		 "SELECT sub_session_id FROM mnemo.map_items WHERE session_id = 'mt_agent' AND ordinal = %d",
		 s.ordinals[1]);

	/* a conversation that never finishes stops at max_turns */
	next_agentic(&srv, "model gpt-4o-mini\nreply repeat=forever\n  text \"thinking\"\n  finish abort\n",
				 &o, &s);
	o.max_turns = 3;
	o.continuation_message = "Go on.";
	is_int(run_map(st, "mt_agent", "m_turns", "Think about {{ item }}", "[1]", &o, &stats), MNEMO_OK,
		   "an AgenticMap whose item never finishes runs to its end");
	is_str(s.kinds[0], "max_turns", "error kind max_turns");
	is_int(s.attempts[0], 3, "after max_turns turns");

	/* read-only: a tool call gets an error result; the same call again and
	 * again is a doom loop */
	next_agentic(&srv, "model gpt-4o-mini\nreply repeat=forever\n  tool read \"{\\\"path\\\": \\\"/etc\\\"}\"\n",
				 &o, &s);
	o.max_turns = 10;
	is_int(run_map(st, "mt_agent", "m_doom", "Look around {{ item }}", "[1]", &o, &stats), MNEMO_OK,
		   "an AgenticMap whose model repeats a tool call runs to its end");
	is_str(s.kinds[0], "doom_loop", "error kind doom_loop");
	is_int(s.attempts[0], 3, "at the third identical call (the doom-loop threshold)");
	is_q("3|3", "no tool ran: every call got an error result saying the map is read-only",
		 "SELECT count(*) || '|' || count(*) FILTER (WHERE p.tool_state = 'error' AND "
		 "p.content::text LIKE '%%read-only%%') FROM mnemo.message_parts p "
		 "WHERE p.session_id = '%s' AND p.part_type = 'tool'", s.subs[0]);
	{
		json_object **lines;
		int			n;

		lines = log_read(&srv, &n);
		ok(n > 0 && jpath(lines[0], "body.tools") == NULL, "read-only: the requests offer no tools");
		log_free(lines, n);
	}

	/* with run_tool the tools are offered and each call is answered */
	next_agentic(&srv, "model gpt-4o-mini\n"
				 "reply\n  tool lookup \"{\\\"k\\\": 1}\"\n"
				 "reply\n  text \"k is 42\"\n", &o, &s);
	o.run_tool = lookup_tool;
	o.turn.tools = "[{\"name\": \"lookup\", \"description\": \"look a key up\", "
		"\"parameters\": {\"type\": \"object\"}}]";
	is_int(run_map(st, "mt_agent", "m_tools", "Find {{ item }}", "[\"k\"]", &o, &stats), MNEMO_OK,
		   "an AgenticMap with a tool runner");
	is_str(s.outputs[0], "\"k is 42\"", "the answer after the tool's result");
	is_int(s.attempts[0], 2, "two turns");
	is_q("completed|the value of k is 42", "the tool call ran through run_tool, its output stored",
		 "SELECT p.tool_state || '|' || (p.content->>'output') FROM mnemo.message_parts p "
		 "WHERE p.session_id = '%s' AND p.part_type = 'tool'", s.subs[0]);
	{
		json_object **lines;
		int			n;

		lines = log_read(&srv, &n);
		is_str(n > 0 ? jstr(lines[0], "body.tools.0.function.name") : NULL, "lookup",
			   "the tools are offered");
		log_free(lines, n);
	}
	server_stop(&srv);
	options_free(&o);
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);
	if ((db = PQconnectdb("")) == NULL || PQstatus(db) != CONNECTION_OK)
		bail_out("PQconnectdb: %s", db ? PQerrorMessage(db) : "out of memory");
	test_templates(st);
	test_schemas(st);
	test_invalid_then_valid(st);
	test_schema_failures(st);
	test_timeout_and_errors(st);
	test_concurrency_and_order(st);
	test_agentic(st);
	PQfinish(db);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
