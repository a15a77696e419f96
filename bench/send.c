/*
 * send.c
 *		bench/send: the engine's overhead on a chat turn.  For replies of
 *		50, 500 and 5,000 tokens from the local provider server, the median
 *		time of mnemo_session_send() against a plain libcurl download of the
 *		same byte stream (same server, same script, same request, one
 *		connection kept alive on each side), printed as ratios.
 *
 *	bench/send --server PATH [--tokens 50,500,5000] [--calls N] [--warmup N]
 *	           [--chunks event|all]
 *
 * What the ratio measures: SSE parsing, the provider decoder, the part
 * callbacks, and the persistence and accounting of a turn (user message,
 * context report and build, assistant row, parts, usage, the soft-threshold
 * check, the session lock): everything send() does beyond receiving bytes.
 * Each send goes to a new session (made outside the timed region), so every
 * request has the same body as the download's.  Calls alternate between the
 * two, so drift on the host hits both alike.
 *
 * A third column, "floor", is what a turn's durability costs whatever the
 * client: the same server functions a turn calls to write (the user message
 * and the assistant row committed before the call, the reply's part and
 * usage committed after it), sent by hand with plain libpq as two
 * transactions of one round trip each.  send's overhead over the download
 * is that floor plus what the library itself adds; the last column gives
 * send against download + floor.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "common.h"
#include "mnemo.h"
#include "provider.h"

const char *bench_name = "bench/send";

#define SYSTEM_PROMPT "You are a benchmark."
#define USER_TEXT "Tell me about the store."
#define KEY "bench-key"

/* ---- the baseline: the same request, the bytes counted and dropped --------- */

static size_t
sink(char *data, size_t size, size_t n, void *arg)
{
	(void) data;
	*(size_t *) arg += size * n;
	return size * n;
}

static double
download(CURL *curl, size_t *bytes)
{
	double		t0 = now_s();
	CURLcode	rc;
	long		status = 0;

	*bytes = 0;
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, bytes);
	if ((rc = curl_easy_perform(curl)) != CURLE_OK)
		die("download: %s", curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		die("download: HTTP %ld", status);
	return now_s() - t0;
}

/* The body send() makes for a new session's first turn (the server's
 * request log shows it), so that both sides ask for the same thing. */
static const char request_body[] =
	"{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"system\",\"content\":\"" SYSTEM_PROMPT
	"\"},{\"role\":\"user\",\"content\":\"" USER_TEXT "\"}],\"max_completion_tokens\":4096,"
	"\"stream\":true,\"stream_options\":{\"include_usage\":true}}";

/* ---- send ------------------------------------------------------------------ */

typedef struct counts
{
	size_t		deltas;
	size_t		bytes;
} counts;

static int
on_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	counts	   *c = arg;

	(void) st;
	c->deltas++;
	c->bytes += p->len;
	return 0;
}

static double
send_one(mnemo_store *st, const mnemo_turn_options *opts, counts *c, char **reply)
{
	mnemo_new_session spec = {.provider_id = "openai", .model_id = "gpt-4o-mini",
	.system_prompt = SYSTEM_PROMPT, .agent = "bench"};
	mnemo_session *s = NULL;
	mnemo_turn *turn = NULL;
	double		t0,
				t;

	if (mnemo_session_create(st, &spec, &s) != MNEMO_OK)
		die("session_create: %s", mnemo_errmsg(st));
	t0 = now_s();
	if (mnemo_session_send(st, s->id, opts, USER_TEXT, NULL, 0, on_part, c, &turn) != MNEMO_OK)
		die("send: %s", mnemo_errmsg(st));
	t = now_s() - t0;
	if (strcmp(turn->finish_reason, "stop") != 0)
		die("send: finish reason %s", turn->finish_reason);
	if (reply != NULL && *reply == NULL && (*reply = strdup(turn->text)) == NULL)
		die("out of memory");
	mnemo_turn_free(turn);
	mnemo_session_free(s);
	return t;
}

/* ---- the floor: a turn's durable writes by hand ---------------------------- */

static char *
literal(PGconn *conn, const char *s)
{
	char	   *l = PQescapeLiteral(conn, s, strlen(s));

	if (l == NULL)
		die("escaping: %s", PQerrorMessage(conn));
	return l;
}

static double
floor_one(PGconn *conn, mnemo_store *st, const char *reply)
{
	mnemo_new_session spec = {.provider_id = "openai", .model_id = "gpt-4o-mini",
	.system_prompt = SYSTEM_PROMPT, .agent = "bench"};
	mnemo_session *s = NULL;
	json_object *part = json_object_new_object();
	char	   *sid,
			   *text,
			   *before,
			   *after;
	size_t		n;
	double		t0,
				t;

	if (mnemo_session_create(st, &spec, &s) != MNEMO_OK)
		die("session_create: %s", mnemo_errmsg(st));
	json_object_object_add(part, "type", json_object_new_string("text"));
	json_object_object_add(part, "text", json_object_new_string(reply));
	sid = literal(conn, s->id);
	text = literal(conn, json_object_to_json_string_ext(part, JSON_C_TO_STRING_PLAIN));
	n = strlen(text) + 1024;
	before = malloc(n);
	after = malloc(n);
	if (before == NULL || after == NULL)
		die("out of memory");
	snprintf(before, n,
			 "BEGIN; SELECT mnemo.append_message(%s, 'user', '[{\"type\":\"text\",\"text\":\"" USER_TEXT "\"}]'); "
			 "SELECT mnemo.append_message(%s, 'assistant', '[]'); COMMIT", sid, sid);
	snprintf(after, n,
			 "BEGIN; SELECT mnemo.append_part(%s, (SELECT id FROM mnemo.messages WHERE session_id = %s AND role = 'assistant'), %s); "
			 "SELECT mnemo.update_message_tokens(%s, (SELECT id FROM mnemo.messages WHERE session_id = %s AND role = 'assistant'), "
			 "'{\"input\":20,\"output\":500}', 0, 'stop'); COMMIT", sid, sid, text, sid, sid);
	t0 = now_s();
	PQclear(exec_ok(conn, before));
	PQclear(exec_ok(conn, after));
	t = now_s() - t0;
	PQfreemem(sid);
	PQfreemem(text);
	free(before);
	free(after);
	json_object_put(part);
	mnemo_session_free(s);
	return t;
}

int
main(int argc, char **argv)
{
	const char *server_path = NULL,
			   *tokens_list = "50,500,5000",
			   *chunks = "event";
	int			calls = 200,
				warmup = 10;
	mnemo_store *st;
	PGconn	   *conn;
	char	   *list,
			   *tok,
			   *save = NULL;
	bool		target_met = true;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--server") == 0 && i + 1 < argc)
			server_path = argv[++i];
		else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
			tokens_list = argv[++i];
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (strcmp(argv[i], "--chunks") == 0 && i + 1 < argc)
			chunks = argv[++i];
		else
			die("usage: bench/send --server PATH [--tokens 50,500,5000] [--calls N] [--warmup N] "
				"[--chunks event|all]");
	}
	if (server_path == NULL || calls < 1 || warmup < 0 ||
		(strcmp(chunks, "event") != 0 && strcmp(chunks, "all") != 0))
		die("--server PATH is required; --calls >= 1; --chunks event or all");
	if (mnemo_global_init() != MNEMO_OK)
		die("libcurl initialisation failed");
	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
		die("connecting: %s", st ? mnemo_errmsg(st) : "out of memory");
	conn = connect_db();

	printf("bench/send: %d calls a size (median), %d untimed first, server writes: %s\n",
		   calls, warmup, strcmp(chunks, "all") == 0 ? "the whole stream at once"
		   : "one per event, as providers flush");
	printf("%8s %10s %8s %10s %10s %10s %8s %14s\n", "tokens", "bytes", "deltas", "curl ms",
		   "floor ms", "send ms", "ratio", "vs curl+floor");
	list = strdup(tokens_list);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		int			tokens = atoi(tok);
		bench_server srv;
		char		script[128];
		CURL	   *curl = curl_easy_init();
		struct curl_slist *headers = NULL;
		char		url[160];
		mnemo_turn_options opts = MNEMO_TURN_OPTIONS_INIT;
		double	   *t_curl = calloc(calls, sizeof(double)),
				   *t_send = calloc(calls, sizeof(double)),
				   *t_floor = calloc(calls, sizeof(double));
		char	   *reply = NULL;
		size_t		bytes = 0;
		counts		c = {0};
		double		mc,
					ms,
					mf;

		if (tokens < 1 || curl == NULL || t_curl == NULL || t_send == NULL || t_floor == NULL)
			die("bad --tokens value %s, or out of memory", tok);
		snprintf(script, sizeof(script), "reply\n  text_tokens %d\n  chunks %s\n  repeat forever\n",
				 tokens, chunks);
		bench_server_start(&srv, server_path, script, false);
		snprintf(url, sizeof(url), "%s/chat/completions", srv.url);
		headers = curl_slist_append(headers, "content-type: application/json");
		headers = curl_slist_append(headers, "authorization: Bearer " KEY);
		curl_easy_setopt(curl, CURLOPT_URL, url);
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request_body);
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink);
		curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
		opts.provider = "openai";
		opts.model = "gpt-4o-mini";
		opts.base_url = srv.url;
		opts.api_key = KEY;

		for (int i = 0; i < warmup; i++)
		{
			download(curl, &bytes);
			send_one(st, &opts, &c, &reply);
			floor_one(conn, st, reply);
		}
		for (int i = 0; i < calls; i++)
		{
			t_curl[i] = download(curl, &bytes);
			c.deltas = c.bytes = 0;
			t_send[i] = send_one(st, &opts, &c, &reply);
			t_floor[i] = floor_one(conn, st, reply);
		}
		mc = median(t_curl, calls) * 1e3;
		ms = median(t_send, calls) * 1e3;
		mf = median(t_floor, calls) * 1e3;
		printf("%8d %10zu %8zu %10.3f %10.3f %10.3f %7.2fx %13.2fx\n", tokens, bytes, c.deltas, mc,
			   mf, ms, ms / mc, ms / (mc + mf));
		if (tokens >= 500 && ms / mc > 1.2)
			target_met = false;
		fflush(stdout);
		curl_slist_free_all(headers);
		curl_easy_cleanup(curl);
		bench_server_stop(&srv);
		free(t_curl);
		free(t_send);
		free(t_floor);
		free(reply);
	}
	printf("target <= 1.2x at 500 tokens and above: %s\n", target_met ? "met" : "NOT met");
	free(list);
	PQfinish(conn);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return 0;
}
