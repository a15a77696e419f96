/*
 * compact.c
 *		bench/compact: what compaction in the turn costs.  A transcript of
 *		--messages messages (half of them user turns) is replayed through
 *		mnemo_session_send() against the local provider server, which
 *		answers every request after a fixed delay, twice: with the default
 *		engine (compaction on: the soft threshold compacts in the background,
 *		the hard one blocks) and with a hook that does nothing (off: the
 *		context is only cut to the budget by build_context).
 *
 *	bench/compact --server PATH [--messages 2000] [--budget 8000]
 *	              [--delay-ms 20] [--json FILE] [--sessions FILE,FILE...]
 *
 * Reports:
 *   turn ms      mean time of a turn with compaction on / off (target
 *                <= 1.1): the background compaction runs on its own
 *                connection and thread while the turns go on;
 *   context      the largest context a turn sent (its messages but the
 *                system prompt, estimated as the client does) against the
 *                turn's budget (the limit less the outputs, the system
 *                prompt and the tools), from the provider server's request
 *                log;
 *   CPU          the client's CPU time (getrusage) of each replay, and
 *                the engine's own per compacted message: the session
 *                replayed without compaction compacted afterwards by
 *                mnemo_compact down to the soft threshold, on this thread
 *                (RUSAGE_THREAD), divided by the messages it put under a
 *                summary.  The model's wait is not CPU.
 * With --sessions, first each transcript is imported and compacted by
 * mnemo_compact at Level 3 to 1/2, 1/4 and 1/10 of its context, a fresh
 * import each time: rounds, summaries per level, wall time, the client's
 * CPU (this thread) and the server's (its backend, /proc) per compacted
 * message, tokens before and after, and the user messages still verbatim
 * in context.
 * The user turns are texts of 50 to 1,500 characters from a fixed seed; the
 * replies 100 tokens.  The compaction model is the turn's (the same server,
 * the same delay), as the default engine does.
 */
#define _GNU_SOURCE				/* RUSAGE_THREAD */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common.h"
#include "mnemo.h"
#include "provider.h"

const char *bench_name = "bench/compact";

#define KEY "bench-key"
#define SYSTEM_PROMPT "You are a benchmark replaying a long session."

/* Every request answered with 100 tokens after delay_ms. */
static void
reply_script(char *script, size_t size, int delay_ms)
{
	snprintf(script, size, "reply\n  wait_ms %d\n  text_tokens 100\n  repeat forever\n", delay_ms);
}

/* The user turns: deterministic texts of 50 to 1,500 characters. */
static char **
user_turns(int n)
{
	char	  **t = calloc((size_t) n, sizeof(char *));
	unsigned	seed = 42;

	if (t == NULL)
		die("out of memory");
	for (int i = 0; i < n; i++)
	{
		int			len;

		seed = seed * 1103515245u + 12345u;
		len = 50 + (int) ((seed >> 8) % 1451);
		if ((t[i] = malloc((size_t) len + 1)) == NULL)
			die("out of memory");
		snprintf(t[i], (size_t) len + 1, "Turn %d. ", i);
		for (int j = (int) strlen(t[i]); j < len; j++)
			t[i][j] = "abcdefgh ijklmnop qrstuvw xyz "[(j * 7 + i) % 30];
		t[i][len] = '\0';
	}
	return t;
}

static int
no_compaction(mnemo_store *st, const char *sid, bool blocking, void *arg)
{
	(void) st;
	(void) sid;
	(void) blocking;
	(void) arg;
	return 0;
}

static double
cpu_s(int who)
{
	struct rusage u;

	getrusage(who, &u);
	return (double) u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 +
		(double) u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

typedef struct run_result
{
	double		turn_ms;		/* mean */
	double		cpu_s;
	int			max_context;	/* tokens of the largest turn request */
	int			turn_requests;
	int			compaction_requests;
	long		compacted;		/* messages under a summary */
	int			summaries;
	char		session_id[MNEMO_ID_MAX + 1];
} run_result;

/* Messages of session sid under a summary, and its summary nodes. */
static void
compacted(PGconn *conn, const char *sid, long *messages, int *summaries)
{
	char		sql[320];
	PGresult   *res;

	snprintf(sql, sizeof(sql),
			 "SELECT (SELECT count(*) FROM mnemo.summary_edges WHERE session_id = '%s' "
			 "AND item_type = 'message'), (SELECT count(*) FROM mnemo.summary_nodes('%s', true))",
			 sid, sid);
	res = exec_ok(conn, sql);
	*messages = atol(PQgetvalue(res, 0, 0));
	*summaries = atoi(PQgetvalue(res, 0, 1));
	PQclear(res);
}

/* The largest turn request in the server's log, as the client estimates. */
static void
read_log(const char *path, run_result *r)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;

	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	while (getline(&line, &cap, f) > 0)
	{
		json_object *o = json_tokener_parse(line);
		json_object *body,
				   *msgs;
		int			tokens = 0;
		bool		turn;

		if (o == NULL)
			continue;
		turn = json_object_object_get_ex(o, "body", &body) &&
			json_object_object_get_ex(body, "messages", &msgs) &&
			json_object_object_get_ex(body, "tools", NULL);
		if (turn)
		{
			for (size_t i = 0; i < json_object_array_length(msgs); i++)
			{
				json_object *m = json_object_array_get_idx(msgs, i);
				json_object *role,
						   *c;

				/* the system prompt is outside the context's budget */
				if (json_object_object_get_ex(m, "role", &role) &&
					strcmp(json_object_get_string(role), "system") == 0)
					continue;
				if (json_object_object_get_ex(m, "content", &c))
					tokens += mnemo_estimate_tokens(json_object_get_string(c));
			}
			r->turn_requests++;
			if (tokens > r->max_context)
				r->max_context = tokens;
		}
		else
			r->compaction_requests++;
		json_object_put(o);
	}
	free(line);
	fclose(f);
}

static const char tools[] =
	"[{\"name\": \"read_file\", \"description\": \"Read a file of the project.\", "
	"\"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}}}]";

static void
replay(mnemo_store *st, PGconn *conn, const char *server_path, int delay_ms, bool on,
	   char **turns, int n, int budget, run_result *r)
{
	bench_server srv;
	mnemo_turn_options o = MNEMO_TURN_OPTIONS_INIT;
	mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;
	mnemo_session *s = NULL;
	double		total = 0,
				cpu0;
	char		script[96];

	memset(r, 0, sizeof(*r));
	reply_script(script, sizeof(script), delay_ms);
	bench_server_start(&srv, server_path, script, true);
	spec.provider_id = "openai";
	spec.model_id = "gpt-4o-mini";
	spec.system_prompt = SYSTEM_PROMPT;
	if (mnemo_session_create(st, &spec, &s) != MNEMO_OK)
		die("session: %s", mnemo_errmsg(st));
	o.provider = "openai";
	o.base_url = srv.url;
	o.api_key = KEY;
	o.tools = tools;
	o.max_output_tokens = 1000;
	o.compaction_output_budget = 1000;
	/* the budget: context_limit less the outputs, the system prompt, tools */
	o.context_limit = budget + 2000 + mnemo_estimate_tokens(SYSTEM_PROMPT) +
		mnemo_estimate_tokens(tools);
	if (!on)
		o.compact = no_compaction;
	cpu0 = cpu_s(RUSAGE_SELF);
	for (int i = 0; i < n; i++)
	{
		mnemo_turn *t = NULL;
		double		t0 = now_s();

		if (mnemo_session_send(st, s->id, &o, turns[i], NULL, 0, NULL, NULL, &t) != MNEMO_OK)
			die("turn %d (%s): %s", i, on ? "on" : "off", mnemo_errmsg(st));
		total += now_s() - t0;
		mnemo_turn_free(t);
	}
	/* the last background compaction, if one still runs, belongs to the run */
	mnemo_store_close(st);
	r->cpu_s = cpu_s(RUSAGE_SELF) - cpu0;
	r->turn_ms = total / n * 1e3;
	read_log(srv.log, r);
	compacted(conn, s->id, &r->compacted, &r->summaries);
	snprintf(r->session_id, sizeof(r->session_id), "%s", s->id);
	mnemo_session_free(s);
	bench_server_stop(&srv);
}

/*
 * The engine alone on the session replayed without compaction: client CPU
 * (this thread) per message put under a summary, down to the soft
 * threshold.  *requests gets the model calls.
 */
static double
engine_cpu(PGconn *conn, const char *server_path, int delay_ms, const char *sid, int budget,
		   long *messages, int *requests)
{
	bench_server srv;
	run_result	r = {0};
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result res;
	mnemo_store *st = mnemo_store_open(NULL);
	double		cpu0;
	char		script[96];
	int			summaries;

	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
		die("connecting: %s", st ? mnemo_errmsg(st) : "out of memory");
	reply_script(script, sizeof(script), delay_ms);
	bench_server_start(&srv, server_path, script, true);
	o.provider = "openai";
	o.model = "gpt-4o-mini";
	o.base_url = srv.url;
	o.api_key = KEY;
	o.budget_tokens = budget * 6 / 10;
	o.max_rounds = 100000;
	cpu0 = cpu_s(RUSAGE_THREAD);
	if (mnemo_compact(st, sid, &o, &res) != MNEMO_OK)
		die("mnemo_compact: %s", mnemo_errmsg(st));
	cpu0 = cpu_s(RUSAGE_THREAD) - cpu0;
	mnemo_store_close(st);
	read_log(srv.log, &r);
	*requests = r.compaction_requests;
	bench_server_stop(&srv);
	compacted(conn, sid, messages, &summaries);
	return *messages > 0 ? cpu0 / *messages * 1e3 : 0;
}

/* CPU seconds of the backends of this database other than conn's */
static double
backend_cpu(PGconn *conn)
{
	PGresult   *res = exec_ok(conn, "SELECT pid FROM pg_stat_activity WHERE datname = "
								"current_database() AND pid <> pg_backend_pid() AND "
								"backend_type = 'client backend'");
	double		s = 0;

	for (int i = 0; i < PQntuples(res); i++)
	{
		char		path[64];
		char		buf[1024];
		FILE	   *f;
		unsigned long ut = 0,
					st = 0;
		char	   *p;

		snprintf(path, sizeof(path), "/proc/%s/stat", PQgetvalue(res, i, 0));
		if ((f = fopen(path, "r")) == NULL)
			continue;
		/* fields 14 and 15, after the command's closing parenthesis */
		if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL)
			sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
		fclose(f);
		s += (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
	}
	PQclear(res);
	return s;
}

static double
thread_cpu(void)
{
	struct rusage u;

	getrusage(RUSAGE_THREAD, &u);
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
		(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* One integer of a query on conn. */
static long long
one_int(PGconn *conn, const char *sql)
{
	PGresult   *res = exec_ok(conn, sql);
	long long	v = PQntuples(res) == 1 ? atoll(PQgetvalue(res, 0, 0)) : -1;

	PQclear(res);
	return v;
}

/*
 * Each transcript of the comma-separated list at 1/2, 1/4 and 1/10 of its
 * context, Level 3, a fresh import each time.
 */
static void
real_sessions(PGconn *conn, const char *list, FILE *json)
{
	char	   *files = strdup(list);
	char	   *save = NULL;

	printf("%-28s %4s %7s %7s %7s %6s %6s %12s %8s %9s %9s %9s\n", "session", "of",
		   "tokens", "budget", "after", "ratio", "rounds", "L1/L2/L3", "wall ms",
		   "cli us/m", "srv us/m", "users");
	for (char *f = strtok_r(files, ",", &save); f != NULL; f = strtok_r(NULL, ",", &save))
	{
		static const int fractions[] = {2, 4, 10};
		/* the path's end: Claude Code's logs are all full.jsonl */
		const char *name = strlen(f) > 28 ? f + strlen(f) - 28 : f;
		for (int k = 0; k < 3; k++)
		{
			mnemo_import_options io = MNEMO_IMPORT_OPTIONS_INIT;
			mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
			mnemo_compact_result r;
			mnemo_store *st = mnemo_store_open(NULL);
			char		sid[MNEMO_ID_MAX + 1];
			char		sql[1024];
			int64_t		n;
			long long	users,
						kept,
						covered;
			double		t0,
						c0,
						s0,
						wall,
						cpu,
						srv;
			FILE	   *in = fopen(f, "r");
			int			rc;

			if (st == NULL || mnemo_errcode(st) != MNEMO_OK || in == NULL)
				die("%s: cannot open it or the store", f);
			io.new_ids = true;
			if (mnemo_import_jsonl(st, in, &io, sid, &n) != MNEMO_OK)
				die("%s: import: %s", f, mnemo_errmsg(st));
			fclose(in);
			snprintf(sql, sizeof(sql), "SELECT included_tokens + omitted_tokens FROM "
					 "mnemo.context_report('%s', 2147483647)", sid);
			o.budget_tokens = (int) (one_int(conn, sql) / fractions[k]);
			o.first_level = 3;
			s0 = backend_cpu(conn);
			c0 = thread_cpu();
			t0 = now_s();
			rc = mnemo_compact(st, sid, &o, &r);
			wall = now_s() - t0;
			cpu = thread_cpu() - c0;
			srv = backend_cpu(conn) - s0;
			if (rc != MNEMO_OK && rc != MNEMO_ERR_OVER_BUDGET)
				die("%s: compact: %s", f, mnemo_errmsg(st));
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM mnemo.messages WHERE session_id = "
					 "'%s' AND role = 'user' AND NOT is_summary", sid);
			users = one_int(conn, sql);
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM mnemo.get_context_items('%s') c "
					 "JOIN mnemo.messages m ON m.session_id = '%s' AND m.id = c.item_id "
					 "WHERE m.role = 'user' AND NOT m.is_summary", sid, sid);
			kept = one_int(conn, sql);
			snprintf(sql, sizeof(sql), "SELECT count(DISTINCT item_id) FROM mnemo.summary_edges "
					 "WHERE session_id = '%s' AND item_id LIKE 'msg%%'", sid);
			covered = one_int(conn, sql);
			printf("%-28.28s 1/%-2d %7lld %7d %7lld %5.1fx %6d %4d/%d/%-4d %8.0f %9.1f %9.1f "
				   "%5lld/%lld%s\n", name, fractions[k], (long long) r.tokens_before,
				   o.budget_tokens, (long long) r.tokens_after,
				   (double) r.tokens_before / (double) (r.tokens_after > 0 ? r.tokens_after : 1),
				   r.rounds, r.levels[1], r.levels[2], r.levels[3], wall * 1000,
				   covered > 0 ? cpu * 1e6 / covered : 0, covered > 0 ? srv * 1e6 / covered : 0,
				   kept, users, rc == MNEMO_ERR_OVER_BUDGET ? " (floor)" : "");
			if (json != NULL)
				fprintf(json, "{\"measure\": \"real_session\", \"session\": \"%s\", "
						"\"fraction\": %d, \"tokens_before\": %lld, \"budget\": %d, "
						"\"tokens_after\": %lld, \"rounds\": %d, \"l3\": %d, \"wall_ms\": %.1f, "
						"\"client_cpu_us_per_message\": %.2f, \"server_cpu_us_per_message\": %.2f, "
						"\"users_kept\": %lld, \"users\": %lld, \"over_budget\": %s}\n",
						name, fractions[k], (long long) r.tokens_before, o.budget_tokens,
						(long long) r.tokens_after, r.rounds, r.levels[3], wall * 1000,
						covered > 0 ? cpu * 1e6 / covered : 0,
						covered > 0 ? srv * 1e6 / covered : 0, kept, users,
						rc == MNEMO_ERR_OVER_BUDGET ? "true" : "false");
			(void) mnemo_session_purge(st, sid, NULL);
			mnemo_store_close(st);
		}
	}
	free(files);
}

int
main(int argc, char **argv)
{
	const char *server_path = NULL;
	const char *json_path = NULL;
	const char *sessions = NULL;
	int			messages = 2000;
	int			budget = 8000;
	int			delay_ms = 20;
	run_result	on,
				off;
	char	  **turns;
	mnemo_store *st;
	PGconn	   *conn;
	double		cpu_per;
	long		engine_messages;
	int			engine_requests;
	FILE	   *json;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--server") == 0 && i + 1 < argc)
			server_path = argv[++i];
		else if (strcmp(argv[i], "--messages") == 0 && i + 1 < argc)
			messages = atoi(argv[++i]);
		else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
			budget = atoi(argv[++i]);
		else if (strcmp(argv[i], "--delay-ms") == 0 && i + 1 < argc)
			delay_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			json_path = argv[++i];
		else if (strcmp(argv[i], "--sessions") == 0 && i + 1 < argc)
			sessions = argv[++i];
		else
			die("usage: bench/compact --server PATH [--messages 2000] [--budget 8000] "
				"[--delay-ms 20] [--json FILE] [--sessions FILE,FILE...]");
	}
	if (server_path == NULL || messages < 4 || budget < 1000 || delay_ms < 0)
		die("--server PATH is required; --messages >= 4; --budget >= 1000; --delay-ms >= 0");
	if (mnemo_global_init() != MNEMO_OK)
		die("libcurl initialisation failed");
	conn = connect_db();
	turns = user_turns(messages / 2);
	json = NULL;
	if (json_path != NULL && (json = fopen(json_path, "w")) == NULL)
		die("%s: %s", json_path, strerror(errno));
	if (sessions != NULL)
	{
		printf("bench/compact: real sessions, Level 3, a fresh import each\n");
		real_sessions(conn, sessions, json);
		printf("\n");
	}

	printf("bench/compact: %d messages (%d turns), budget %d tokens, replies of 100 tokens "
		   "after %d ms\n", messages, messages / 2, budget, delay_ms);
	/* off, then on: each run is hundreds of turns of the same delay */
	for (int pass = 0; pass < 2; pass++)
	{
		if ((st = mnemo_store_open(NULL)) == NULL || mnemo_errcode(st) != MNEMO_OK)
			die("connecting: %s", st ? mnemo_errmsg(st) : "out of memory");
		replay(st, conn, server_path, delay_ms, pass == 1, turns, messages / 2, budget,
			   pass == 1 ? &on : &off);
	}
	cpu_per = engine_cpu(conn, server_path, delay_ms, off.session_id, budget, &engine_messages,
						 &engine_requests);
	printf("%-16s %10s %10s %12s %12s %10s %10s\n", "compaction", "turn ms", "CPU s",
		   "max context", "of budget", "summaries", "compacted");
	printf("%-16s %10.2f %10.3f %12d %11.2fx %10d %10ld\n", "off (no-op hook)", off.turn_ms,
		   off.cpu_s, off.max_context, (double) off.max_context / budget, off.summaries,
		   off.compacted);
	printf("%-16s %10.2f %10.3f %12d %11.2fx %10d %10ld\n", "on (default)", on.turn_ms,
		   on.cpu_s, on.max_context, (double) on.max_context / budget, on.summaries, on.compacted);
	printf("turn time on / off: %.3fx (target <= 1.1: %s)\n", on.turn_ms / off.turn_ms,
		   on.turn_ms / off.turn_ms <= 1.1 ? "met" : "NOT met");
	printf("context sent, max / budget: %d / %d = %.3f (%s)\n", on.max_context, budget,
		   (double) on.max_context / budget, on.max_context <= budget ? "under" : "OVER");
	printf("compaction CPU on the client: %.3f ms per compacted message (the engine alone: %ld "
		   "messages, %d requests to the model)\n", cpu_per, engine_messages, engine_requests);
	if (json != NULL)
	{
		fprintf(json, "{\"measure\": \"turn_ms\", \"unit\": \"ms\", \"on\": %.3f, \"off\": %.3f, "
				"\"ratio\": %.4f, \"messages\": %d, \"delay_ms\": %d}\n",
				on.turn_ms, off.turn_ms, on.turn_ms / off.turn_ms, messages, delay_ms);
		fprintf(json, "{\"measure\": \"max_context\", \"unit\": \"tokens\", \"on\": %d, \"off\": %d, "
				"\"budget\": %d, \"ratio\": %.4f}\n",
				on.max_context, off.max_context, budget, (double) on.max_context / budget);
		fprintf(json, "{\"measure\": \"compaction_cpu\", \"unit\": \"ms/message\", \"value\": %.4f, "
				"\"messages\": %ld, \"requests\": %d, \"cpu_on_s\": %.3f, \"cpu_off_s\": %.3f, "
				"\"compacted_in_replay\": %ld, \"summaries_in_replay\": %d}\n",
				cpu_per, engine_messages, engine_requests, on.cpu_s, off.cpu_s, on.compacted,
				on.summaries);
		fclose(json);
	}
	for (int i = 0; i < messages / 2; i++)
		free(turns[i]);
	free(turns);
	PQfinish(conn);
	mnemo_global_cleanup();
	return 0;
}
