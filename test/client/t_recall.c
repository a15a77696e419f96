/*
 * t_recall.c
 *		The recall tools in a chat turn, against the scripted provider server
 *		in both dialects: a fact compacted out of the context (a port number
 *		in a tool output under a summary) comes back to the model through
 *		lcm_grep then lcm_expand, which the turn answers itself; the calls
 *		are stored as tool parts; the tools are offered only when the context
 *		holds a summary (or when asked), never when turned off; a caller's
 *		tool called beside a recall tool goes back to the caller; a bad call
 *		gets its error as its result; the context limit holds with the
 *		results in it.  Also the store calls (grep, expand pages, describe).
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"
#include "send_helpers.h"

#define FACT "48213"

/*
 * A session whose first exchange (a port in a tool's output) is summarised
 * out of the context by summary SID_sum, then a newer exchange in context.
 */
static void
compacted_session(mnemo_store *st, const char *sid, const char *provider)
{
	char		sql[2048];
	char	   *v;

	session(st, sid, provider, "model-x");
	snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM mnemo.append_messages($1, '["
			 "{\"role\":\"user\",\"id\":\"%s_m1\",\"parts\":[{\"type\":\"text\",\"text\":\"start the api server\"}]},"
			 "{\"role\":\"assistant\",\"id\":\"%s_m2\",\"parts\":[{\"type\":\"tool\",\"tool_name\":\"bash\","
			 "\"tool_call_id\":\"c1\",\"tool_state\":\"completed\",\"input\":{\"cmd\":\"serve --port " FACT "\"},"
			 "\"output\":\"listening on 0.0.0.0:" FACT "\"}]},"
			 "{\"role\":\"assistant\",\"id\":\"%s_m3\",\"parts\":[{\"type\":\"text\",\"text\":\"The server is up.\"}]},"
			 "{\"role\":\"user\",\"id\":\"%s_m4\",\"parts\":[{\"type\":\"text\",\"text\":\"thanks, now the docs\"}]},"
			 "{\"role\":\"assistant\",\"id\":\"%s_m5\",\"parts\":[{\"type\":\"text\",\"text\":\"Docs written.\"}]}]')",
			 sid, sid, sid, sid, sid);
	free(sql_value(sql, sid));
	snprintf(sql, sizeof(sql),
			 "SELECT mnemo.commit_summary($1, $1 || '_sum', 'Started the api server.', 6, "
			 "ARRAY[$1 || '_m1', $1 || '_m2', $1 || '_m3'])");
	free(sql_value(sql, sid));
	v = sql_value("SELECT string_agg(content, ' ') FROM mnemo.build_context($1, 100000)", sid);
	ok(strstr(v, FACT) == NULL, "%s: the fact is out of the context", sid);
	free(v);
}

static char *
script_of(const char *sid, const char *last)
{
	char	   *s = malloc(1024);

	snprintf(s, 1024,
			 "reply\n  tool lcm_grep \"{\\\"pattern\\\":\\\"" FACT "\\\"}\" id=call_g\n"
			 "reply\n  tool lcm_expand \"{\\\"summary_id\\\":\\\"%s_sum\\\"}\" id=call_e\n"
			 "reply\n  text \"%s\"\n", sid, last);
	return s;
}

static const char *
body_text(json_object **log, int i, const char *path)
{
	json_object *v = jpath(log[i], path);

	return v != NULL ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_SPACED |
													  JSON_C_TO_STRING_NOSLASHESCAPE) : "";
}

/* the recall tool parts of the session, name:state:output-has-fact */
static char *
stored_calls(const char *sid)
{
	return sql_value("SELECT coalesce(string_agg(p.content->>'tool_name' || ':' || p.tool_state || ':' "
					 "       || ((p.content->>'output') LIKE '%" FACT "%')::text, ',' ORDER BY m.seq), '') "
					 "FROM mnemo.messages m JOIN mnemo.message_parts p "
					 "  ON p.session_id = m.session_id AND p.seq = m.seq "
					 "WHERE m.session_id = $1 AND p.part_type = 'tool' AND p.content->>'tool_name' LIKE 'lcm_%'",
					 sid);
}

static void
test_recall_turn(mnemo_store *st, const char *provider)
{
	char		sid[64];
	char		url[128];
	char	   *script;
	char	   *calls;
	server		srv;
	mnemo_turn_options o;
	mnemo_turn *turn = NULL;
	collected	c = {0};
	json_object **log;
	int			n = 0;
	int			rc;

	snprintf(sid, sizeof(sid), "rc_%s", provider);
	compacted_session(st, sid, provider);
	script = script_of(sid, "The port was " FACT ".");
	server_start(&srv, script);
	options(&o, &srv, provider, url, sizeof(url));
	rc = mnemo_session_send(st, sid, &o, "Which port did the api server use?", NULL, 0,
							on_part, &c, &turn);
	is_code(st, rc, MNEMO_OK, "the turn with two recall rounds");
	ok(turn != NULL && strcmp(turn->text, "The port was " FACT ".") == 0,
	   "%s: the answer is the last round's text (%s)", provider, turn ? turn->text : "-");
	ok(turn != NULL && turn->n_tool_calls == 0, "%s: no tool call is left to the caller", provider);
	log = log_read(&srv, &n);
	is_int(n, 3, "%s: three requests: the question, after lcm_grep, after lcm_expand", provider);
	if (n == 3)
	{
		ok(strstr(body_text(log, 0, "body.tools"), "lcm_grep") != NULL &&
		   strstr(body_text(log, 0, "body.tools"), "lcm_expand") != NULL &&
		   strstr(body_text(log, 0, "body.tools"), "lcm_describe") != NULL,
		   "%s: the first request offers the three recall tools", provider);
		ok(strstr(body_text(log, 0, "body.messages"), FACT) == NULL,
		   "%s: the first request does not hold the fact", provider);
		ok(strstr(body_text(log, 1, "body.messages"), FACT) != NULL &&
		   strstr(body_text(log, 1, "body.messages"), "under summary rc_") != NULL,
		   "%s: the second carries lcm_grep's hit and the summary that covers it", provider);
		ok(strstr(body_text(log, 2, "body.messages"), "serve --port " FACT) != NULL &&
		   strstr(body_text(log, 2, "body.messages"), "listening on 0.0.0.0:" FACT) != NULL,
		   "%s: the third carries the expanded tool call and its output, verbatim", provider);
		ok(strstr(body_text(log, 2, "body.messages"), "Which port") != NULL,
		   "%s: the question is still in the last request", provider);
	}
	log_free(log, n);
	calls = stored_calls(sid);
	is_str(calls, "lcm_grep:completed:true,lcm_expand:completed:true",
		   "%s: both calls are stored as completed tool parts with their results", provider);
	free(calls);
	mnemo_turn_free(turn);
	server_stop(&srv);
	free(script);
}

/* recall off, and a session with no summary: no recall tool in the request */
static void
test_not_offered(mnemo_store *st)
{
	char		url[128];
	server		srv;
	mnemo_turn_options o;
	mnemo_turn *turn = NULL;
	json_object **log;
	int			n = 0;

	compacted_session(st, "rc_off", "openai");
	session(st, "rc_plain", "openai", "model-x");
	server_start(&srv, "reply\n  text \"fine\"\nreply\n  text \"fine\"\nreply\n  text \"fine\"\n");
	options(&o, &srv, "openai", url, sizeof(url));
	o.recall = -1;
	is_code(st, mnemo_session_send(st, "rc_off", &o, "hi", NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"a turn with recall off");
	mnemo_turn_free(turn);
	o.recall = 0;
	is_code(st, mnemo_session_send(st, "rc_plain", &o, "hi", NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"a turn on a session without summaries");
	mnemo_turn_free(turn);
	o.recall = 1;
	is_code(st, mnemo_session_send(st, "rc_plain", &o, "again", NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"a turn with recall forced on");
	mnemo_turn_free(turn);
	log = log_read(&srv, &n);
	is_int(n, 3, "three requests");
	if (n == 3)
	{
		ok(strstr(body_text(log, 0, "body"), "lcm_grep") == NULL, "recall off: no recall tool offered");
		ok(strstr(body_text(log, 1, "body"), "lcm_grep") == NULL,
		   "no summary in context: no recall tool offered");
		ok(strstr(body_text(log, 2, "body.tools"), "lcm_grep") != NULL, "recall on: offered");
	}
	log_free(log, n);
	server_stop(&srv);
}

/* a caller's tool beside a recall call; a recall call with bad arguments */
static void
test_mixed_and_bad(mnemo_store *st)
{
	char		url[128];
	char	   *v;
	server		srv;
	mnemo_turn_options o;
	mnemo_turn *turn = NULL;
	json_object **log;
	int			n = 0;

	compacted_session(st, "rc_mix", "anthropic");
	server_start(&srv,
				 "reply\n  tool lcm_grep \"{\\\"pattern\\\":\\\"" FACT "\\\"}\" id=g1\n"
				 "  tool bash \"{\\\"cmd\\\":\\\"ls\\\"}\" id=b1\n"
				 "reply\n  tool lcm_grep \"{\\\"pattern\\\":\\\"(x\\\",\\\"regex\\\":true}\" id=g2\n"
				 "reply\n  text \"done\"\n");
	options(&o, &srv, "anthropic", url, sizeof(url));
	o.tools = "[{\"name\": \"bash\", \"description\": \"run\", \"parameters\": {\"type\": \"object\"}}]";
	is_code(st, mnemo_session_send(st, "rc_mix", &o, "go", NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"a reply calling lcm_grep and the caller's bash");
	ok(turn != NULL && turn->n_tool_calls == 1 && strcmp(turn->tool_calls[0].name, "bash") == 0,
	   "only the caller's call comes back to the caller");
	v = sql_value("SELECT p.tool_state FROM mnemo.message_parts p WHERE p.session_id = $1 "
				  "AND p.content->>'tool_name' = 'lcm_grep'", "rc_mix");
	is_str(v, "completed", "the recall call beside it is answered already");
	free(v);
	if (turn != NULL && turn->n_tool_calls == 1)
		is_code(st, mnemo_session_tool_result(st, "rc_mix", turn->tool_calls[0].part_id, "a b c", false),
				MNEMO_OK, "the caller answers its call");
	mnemo_turn_free(turn);
	turn = NULL;
	is_code(st, mnemo_session_send(st, "rc_mix", &o, NULL, NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"the next turn: a bad regular expression, then an answer");
	ok(turn != NULL && strcmp(turn->text, "done") == 0, "the turn goes on to the answer");
	v = sql_value("SELECT p.tool_state || ':' || (p.content->>'error_message') FROM mnemo.message_parts p "
				  "WHERE p.session_id = $1 AND p.content->>'input' LIKE '%(x%'", "rc_mix");
	ok(strncmp(v, "error:", 6) == 0 && strstr(v, "regular expression") != NULL,
	   "the bad call's result is its error (%s)", v);
	free(v);
	log = log_read(&srv, &n);
	ok(n == 3 && strstr(body_text(log, 2, "body.messages"), "invalid regular expression") != NULL,
	   "the model is told the error");
	log_free(log, n);
	mnemo_turn_free(turn);
	server_stop(&srv);
}

/* a small context limit: every request, recall results in it, stays under it */
static void
test_limit(mnemo_store *st)
{
	char		url[128];
	char	   *script;
	server		srv;
	mnemo_turn_options o;
	mnemo_turn *turn = NULL;
	json_object **log;
	int			n = 0;
	int			i;

	compacted_session(st, "rc_lim", "openai");
	script = script_of("rc_lim", "ok");
	server_start(&srv, script);
	options(&o, &srv, "openai", url, sizeof(url));
	o.context_limit = 2500;
	o.max_output_tokens = 200;
	o.compaction_output_budget = 200;
	is_code(st, mnemo_session_send(st, "rc_lim", &o, "port?", NULL, 0, NULL, NULL, &turn), MNEMO_OK,
			"a recall turn under a 2,500-token limit");
	log = log_read(&srv, &n);
	is_int(n, 3, "three requests");
	for (i = 0; i < n; i++)
	{
		const char *body = body_text(log, i, "body");

		ok(mnemo_estimate_tokens(body) <= 2500 - 200,
		   "request %d: %d tokens, within the limit less the output", i + 1, mnemo_estimate_tokens(body));
	}
	log_free(log, n);
	mnemo_turn_free(turn);
	server_stop(&srv);
	free(script);
}

/*
 * A session compacted by the engine (Level 3, no model): the summary the
 * next turn's request carries is annotated (its id, kind, depth, span, and
 * the tools and paths it covers), and the model can describe and expand
 * that id.
 */
static void
test_annotated_turn(mnemo_store *st, const char *provider)
{
	char		sid[64];
	char		url[128];
	char		script[1024];
	char		header[MNEMO_ID_MAX + 64];
	char		sql[2048];
	char	   *calls;
	server		srv;
	mnemo_turn_options o;
	mnemo_compact_options co;
	mnemo_compact_result r;
	mnemo_turn *turn = NULL;
	collected	c = {0};
	json_object **log;
	int			n = 0;

	snprintf(sid, sizeof(sid), "ra_%s", provider);
	session(st, sid, provider, "model-x");
	snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM mnemo.append_messages($1, '["
			 "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"start the api server\"}]},"
			 "{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool\",\"tool_name\":\"bash\","
			 "\"tool_call_id\":\"c1\",\"tool_state\":\"completed\","
			 "\"input\":{\"command\":\"serve --config /etc/api/config.yaml --port " FACT "\"},"
			 "\"output\":\"listening on 0.0.0.0:" FACT "\"}]},"
			 "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"The server is up.\"}]},"
			 "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"now the docs\"}]},"
			 "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Docs written.\"}]},"
			 "{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"and the tests\"}]},"
			 "{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"Tests pass.\"}]}]')");
	free(sql_value(sql, sid));
	memset(&co, 0, sizeof(co));
	co.first_level = 3;
	co.no_prune = true;
	co.tail_messages = -1;		/* the two latest user turns only */
	is_code(st, mnemo_compact(st, sid, &co, &r), MNEMO_OK, "annotated: the engine compacts");
	ok(r.summaries == 1, "%s: one summary (%s)", provider, r.summary_id);

	snprintf(script, sizeof(script),
			 "reply\n  tool lcm_describe \"{\\\"id\\\":\\\"%s\\\"}\" id=call_d\n"
			 "reply\n  tool lcm_expand \"{\\\"summary_id\\\":\\\"%s\\\"}\" id=call_e\n"
			 "reply\n  text \"done\"\n", r.summary_id, r.summary_id);
	server_start(&srv, script);
	options(&o, &srv, provider, url, sizeof(url));
	is_code(st, mnemo_session_send(st, sid, &o, "Which config did the server use?", NULL, 0,
								   on_part, &c, &turn), MNEMO_OK, "annotated: the turn");
	log = log_read(&srv, &n);
	is_int(n, 3, "%s: the question, after lcm_describe, after lcm_expand", provider);
	snprintf(header, sizeof(header), "[Summary %s: leaf, depth 0, 3 messages (seq 1-3), ",
			 r.summary_id);
	if (n == 3)
	{
		const char *first = body_text(log, 0, "body.messages");

		/* the body as JSON text: a newline is written \n */
		ok(strstr(first, header) != NULL,
		   "%s: the request carries the summary's header, its id first (%s)", provider, header);
		ok(strstr(first, "]\\n[Expand for details about: paths /etc/api/config.yaml; tools bash]\\n")
		   != NULL, "%s: and the about line: the path and the tool it covers", provider);
		ok(strstr(body_text(log, 1, "body.messages"), "covers messages #1 to #3") != NULL,
		   "%s: lcm_describe of that id answers", provider);
		ok(strstr(body_text(log, 2, "body.messages"), "serve --config /etc/api/config.yaml --port "
				  FACT) != NULL, "%s: lcm_expand of that id gives back the tool call", provider);
	}
	log_free(log, n);
	calls = sql_value("SELECT string_agg(p.content->>'tool_name' || ':' || p.tool_state, ',' ORDER BY m.seq) "
					  "FROM mnemo.messages m JOIN mnemo.message_parts p "
					  "  ON p.session_id = m.session_id AND p.seq = m.seq "
					  "WHERE m.session_id = $1 AND p.content->>'tool_name' LIKE 'lcm_%'", sid);
	is_str(calls, "lcm_describe:completed,lcm_expand:completed",
		   "%s: both calls stored as completed tool parts", provider);
	free(calls);
	mnemo_turn_free(turn);
	server_stop(&srv);
}

/* the store calls a program uses */
static void
test_store_calls(mnemo_store *st)
{
	mnemo_recall_hits *hits = NULL;
	mnemo_recall_page *page = NULL;
	char	   *text = NULL;

	compacted_session(st, "rc_api", "openai");
	is_code(st, mnemo_recall_grep(st, "rc_api", FACT, NULL, false, 0, 0, &hits), MNEMO_OK, "grep");
	ok(hits != NULL && hits->count == 1 && hits->items[0].covered_by != NULL &&
	   strcmp(hits->items[0].covered_by, "rc_api_sum") == 0,
	   "one hit, covered by the summary");
	mnemo_recall_hits_free(hits);
	hits = NULL;
	is_code(st, mnemo_recall_grep(st, "rc_api", "docs", NULL, true, 0, 0, &hits), MNEMO_OK, "a regex");
	ok(hits != NULL && hits->count == 1 && hits->items[0].covered_by == NULL,
	   "the newer message is in context: no covering summary");
	mnemo_recall_hits_free(hits);
	hits = NULL;
	is_err(st, mnemo_recall_grep(st, "rc_api", "(a)\\1", NULL, true, 0, 0, &hits),
		   MNEMO_ERR_SERVER, "54000", "a back-reference is refused as a limit");
	is_code(st, mnemo_recall_expand(st, "rc_api", "rc_api_sum", 0, 100, &page), MNEMO_OK, "expand");
	ok(page != NULL && page->total == 3 && page->count >= 1 && page->items[0].ordinal == 1,
	   "the first page of the three items");
	mnemo_recall_page_free(page);
	page = NULL;
	is_code(st, mnemo_recall_expand(st, "rc_api", "rc_api_sum", 2, 0, &page), MNEMO_OK, "expand at 2");
	ok(page != NULL && page->count == 1 && page->next_offset == -1, "the last page says so");
	mnemo_recall_page_free(page);
	page = NULL;
	is_code(st, mnemo_recall_expand(st, "rc_api", "nosuch", 0, 0, &page),
			MNEMO_ERR_MESSAGE_NOT_FOUND, "expand of no summary");
	is_code(st, mnemo_recall_describe(st, "rc_api", "rc_api_sum", &text), MNEMO_OK, "describe");
	ok(text != NULL && strstr(text, "leaf") != NULL && strstr(text, "covers messages #1 to #3") != NULL &&
	   strstr(text, "Started the api server.") != NULL, "describe: kind, span and text (%s)",
	   text ? text : "-");
	free(text);
	text = NULL;
	is_code(st, mnemo_recall_describe(st, "rc_api", "nosuch", &text), MNEMO_ERR_MESSAGE_NOT_FOUND,
			"describe of neither");
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_recall_turn(st, "openai");
	test_recall_turn(st, "anthropic");
	test_annotated_turn(st, "openai");
	test_annotated_turn(st, "anthropic");
	test_not_offered(st);
	test_mixed_and_bad(st);
	test_limit(st);
	test_store_calls(st);
	mnemo_store_close(st);
	return tap_done();
}
