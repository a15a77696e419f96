/*
 * map.c
 *		mnemo map: run a prompt template over the items of a JSONL file as a
 *		durable map (LLMMap, or AgenticMap with --agentic); mnemo map status
 *		and mnemo map resume.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_map = {
	"map",
	"run a prompt over every line of a JSONL file (LLMMap, AgenticMap); status, resume",
	"Usage: mnemo map --template FILE --items FILE.jsonl [--schema FILE] [--agentic]\n"
	"                 [--session SESSION] [--id MAP] [OPTIONS]\n"
	"       mnemo map status MAP [--session SESSION]\n"
	"       mnemo map resume MAP [--session SESSION] [OPTIONS]\n"
	"\n"
	"Stores a durable map owned by the session (a new one when none is named):\n"
	"the template, which must reference {{ item }} (or {{ item.field }}), the\n"
	"output schema, and one item per non-empty line of the JSONL file.  Then\n"
	"works it: each item's prompt goes to the model (LLMMap), or becomes the\n"
	"first turn of a sub-session of its own (--agentic).  Prints\n"
	"  map MAP (session SESSION): N items\n"
	"on stderr, one JSON line per item this process finished on stdout, in\n"
	"completion order:\n"
	"  {\"ordinal\": I, \"success\": B, \"output\": ..., \"error_kind\": K, \"error\": E,\n"
	"   \"attempts\": N, \"sub_session_id\": S}\n"
	"a progress bar on stderr when it is a terminal (plain progress lines\n"
	"otherwise), and at the end\n"
	"  map MAP: D done, F failed\n"
	"Any number of processes may work one map: `mnemo map resume MAP` joins\n"
	"or restarts it, and takes over the items of a worker that died once their\n"
	"lease expires.  `mnemo map status MAP` prints\n"
	"  map MAP (session SESSION, llm|agentic): N items, D done, F failed,\n"
	"  I in flight, P pending[, completed TIME]\n"
	"\n"
	"Options:\n"
	"  --template FILE      the prompt template\n"
	"  --items FILE         JSONL: one item (any JSON value) per line\n"
	"  --schema FILE        a JSON Schema every output must match (the subset\n"
	"                       of doc/maps.md)\n"
	"  --agentic            AgenticMap: one sub-session per item\n"
	"  --session SESSION    the map's session (status, resume: found from the\n"
	"                       map id when not given)\n"
	"  --id MAP             the new map's id (default: a map_ id)\n"
	"  --system PROMPT      LLMMap's system prompt\n"
	"  --continuation TEXT  AgenticMap: the message of later turns (default:\n"
	"                       one turn)\n"
	"  --max-turns N        AgenticMap: turns per item (default 20)\n"
	"  --max-retries N      LLMMap: attempts after the first (default 3)\n"
	"  --timeout-ms N       one attempt or turn (default 60000)\n"
	"  --concurrency N      workers in this process (default 16, --agentic 4)\n"
	"  --lease-ms N         an item's lease (default from the timeout)\n"
	"  --max-items N        stop after claiming N items (the rest stay pending)\n"
	"  --provider NAME, --model NAME, --base-url URL, --api-key KEY\n"
	"                       the model (default: the session's, then the\n"
	"                       environment's, as mnemo chat)\n"
	"  --context-limit N    AgenticMap: the sub-sessions' window (compaction)\n"
	"\n"
	"Exit status 1 when an item failed or the run stopped on an error, 3 when\n"
	"the session or map does not exist.\n",
	run
};

typedef struct progress
{
	bool		tty;
	int			items;
	int			done;			/* finished when the run started, then here */
	int			failed;
	int			last_tenth;
} progress;

static void
show_progress(progress *p, bool final)
{
	int			finished = p->done + p->failed;
	int			width = 30;
	int			filled = p->items > 0 ? finished * width / p->items : width;

	if (p->tty)
	{
		fprintf(stderr, "\r[%.*s%.*s] %d/%d (%d failed)", filled,
				"##############################", width - filled,
				"..............................", finished, p->items, p->failed);
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
		return;
	}
	/* plain lines: one per tenth of the map, and the end */
	if (final || (p->items > 0 && finished * 10 / p->items > p->last_tenth))
	{
		p->last_tenth = p->items > 0 ? finished * 10 / p->items : 10;
		if (!final)
			fprintf(stderr, "progress: %d/%d (%d failed)\n", finished, p->items, p->failed);
	}
}

static int
on_result(const mnemo_map_result *r, void *arg)
{
	progress   *p = arg;

	printf("{\"ordinal\": %d, \"success\": %s, \"output\": %s, \"error_kind\": ", r->ordinal,
		   r->success ? "true" : "false", r->output ? r->output : "null");
	cli_json_string(stdout, r->error_kind);
	fputs(", \"error\": ", stdout);
	cli_json_string(stdout, r->error);
	printf(", \"attempts\": %d, \"sub_session_id\": ", r->attempts);
	cli_json_string(stdout, r->sub_session_id);
	fputs("}\n", stdout);
	fflush(stdout);
	if (r->success)
		p->done++;
	else
		p->failed++;
	show_progress(p, false);
	return 0;
}

static char *
slurp(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf = NULL;
	size_t		len = 0;
	size_t		cap = 0;
	size_t		n;

	if (f == NULL)
		return NULL;
	do
	{
		if (len + 4096 + 1 > cap)
		{
			char	   *grown = realloc(buf, cap = cap * 2 + 8192);

			if (grown == NULL)
			{
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* The JSONL file as one JSON array, each line checked; NULL after a message. */
static char *
items_array(const char *path, int *count)
{
	char	   *text = slurp(path);
	struct json_object *arr;
	struct json_tokener *tok;
	char	   *line;
	char	   *save = NULL;
	char	   *out;
	int			lineno = 0;

	*count = 0;
	if (text == NULL)
	{
		fprintf(stderr, "mnemo map: cannot read %s\n", path);
		return NULL;
	}
	arr = json_object_new_array();
	if ((tok = json_tokener_new()) == NULL)
	{
		fprintf(stderr, "mnemo map: out of memory\n");
		json_object_put(arr);
		free(text);
		return NULL;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
	{
		enum json_tokener_error jerr;
		const char *why;
		struct json_object *v;
		const char *p = line;

		lineno++;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\0')
			continue;
		v = json_tokener_parse_ex(tok, line, (int) strlen(line));
		jerr = json_tokener_get_error(tok);
		why = jerr == json_tokener_success ? NULL
			: jerr == json_tokener_continue ? "unexpected end of input"
			: json_tokener_error_desc(jerr);
		if (why == NULL)
		{
			/* json-c stops after the first value: only blanks may follow it */
			for (p = line + json_tokener_get_parse_end(tok); *p == ' ' || *p == '\t' || *p == '\r'; p++)
				;
			if (*p != '\0')
			{
				json_object_put(v);
				why = "text after the value";
			}
		}
		json_tokener_reset(tok);
		if (why != NULL)
		{
			fprintf(stderr, "mnemo map: %s:%d: not JSON (%s)\n", path, lineno, why);
			json_tokener_free(tok);
			json_object_put(arr);
			free(text);
			return NULL;
		}
		json_object_array_add(arr, v);
		(*count)++;
	}
	json_tokener_free(tok);
	free(text);
	out = *count > 0 ? strdup(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN)) : NULL;
	if (*count == 0)
		fprintf(stderr, "mnemo map: %s has no items\n", path);
	json_object_put(arr);
	return out;
}

static int
print_status(mnemo_store *st, const char *session, const char *map_id)
{
	mnemo_map_status s;
	char		when[64];

	if (mnemo_map_get_status(st, session, map_id, &s) != MNEMO_OK)
		return cli_fail(st);
	printf("map %s (session %s, %s): %d items, %d done, %d failed, %d in flight, %d pending",
		   map_id, session, s.agentic ? "agentic" : "llm", s.items, s.done, s.failed,
		   s.in_flight, s.pending);
	if (s.completed_at > 0)
		printf(", completed %s", cli_time(when, s.completed_at));
	putchar('\n');
	return CLI_OK;
}

static int
work(mnemo_store *st, const char *session, const char *map_id, mnemo_map_options *o)
{
	mnemo_map_status s;
	mnemo_map_run_stats stats;
	progress	p;
	int			rc = CLI_OK;

	if (mnemo_map_get_status(st, session, map_id, &s) != MNEMO_OK)
		return cli_fail(st);
	memset(&p, 0, sizeof(p));
	p.tty = isatty(STDERR_FILENO);
	p.items = s.items;
	p.done = s.done;
	p.failed = s.failed;
	p.last_tenth = s.items > 0 ? (s.done + s.failed) * 10 / s.items : 0;
	fprintf(stderr, "map %s (session %s): %d items\n", map_id, session, s.items);
	o->on_result = on_result;
	o->arg = &p;
	if (mnemo_map_run(st, session, map_id, o, &stats) != MNEMO_OK)
		rc = cli_fail(st);
	show_progress(&p, true);
	fprintf(stderr, "map %s: %d done, %d failed\n", map_id, stats.done, stats.failed);
	if (rc == CLI_OK && stats.failed > 0)
		rc = CLI_ERROR;
	return rc;
}

static bool
count_option(const char *name, const char *text, int64_t min, int *out)
{
	int64_t		v;

	if (text == NULL)
		return true;
	if (!cli_parse_count(&cli_map, name, text, min, INT32_MAX, &v))
		return false;
	*out = (int) v;
	return true;
}

static int
run(const char *db, int argc, char **argv)
{
	const char *template_path = NULL, *items_path = NULL, *schema_path = NULL, *session = NULL,
			   *map_id = NULL, *system = NULL, *continuation = NULL, *max_turns = NULL,
			   *max_retries = NULL, *timeout = NULL, *concurrency = NULL, *lease = NULL,
			   *max_items = NULL, *provider = NULL, *model = NULL, *base_url = NULL,
			   *api_key = NULL, *limit = NULL;
	bool		agentic = false;
	cli_option	opts[] = {
		{"template", &template_path, NULL}, {"items", &items_path, NULL},
		{"schema", &schema_path, NULL}, {"agentic", NULL, &agentic},
		{"session", &session, NULL}, {"id", &map_id, NULL}, {"system", &system, NULL},
		{"continuation", &continuation, NULL}, {"max-turns", &max_turns, NULL},
		{"max-retries", &max_retries, NULL}, {"timeout-ms", &timeout, NULL},
		{"concurrency", &concurrency, NULL}, {"lease-ms", &lease, NULL},
		{"max-items", &max_items, NULL}, {"provider", &provider, NULL},
		{"model", &model, NULL}, {"base-url", &base_url, NULL}, {"api-key", &api_key, NULL},
		{"context-limit", &limit, NULL}
	};
	const char *pos[2];
	size_t		n_pos = 0;
	mnemo_map_options o = MNEMO_MAP_OPTIONS_INIT;
	mnemo_store *st;
	char	   *owner = NULL;
	char	   *new_id = NULL;
	char	   *template_text = NULL;
	char	   *schema = NULL;
	char	   *items = NULL;
	int			rc;

	if ((rc = cli_parse(&cli_map, argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
						pos, 0, 2, &n_pos)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (n_pos > 0 && strcmp(pos[0], "status") != 0 && strcmp(pos[0], "resume") != 0)
		return cli_usage_error(&cli_map, "unknown subcommand '%s' (status, resume)", pos[0]);
	if (n_pos == 1)
		return cli_usage_error(&cli_map, "%s needs a map id", pos[0]);
	if (n_pos == 0 && (template_path == NULL || items_path == NULL))
		return cli_usage_error(&cli_map, "a new map needs --template and --items");
	if (!count_option("--max-turns", max_turns, 1, &o.max_turns) ||
		!count_option("--max-retries", max_retries, 0, &o.max_retries) ||
		!count_option("--timeout-ms", timeout, 1, &o.timeout_ms) ||
		!count_option("--concurrency", concurrency, 1, &o.concurrency) ||
		!count_option("--lease-ms", lease, 1, &o.lease_ms) ||
		!count_option("--max-items", max_items, 1, &o.max_items) ||
		!count_option("--context-limit", limit, 1, &o.turn.context_limit))
		return CLI_USAGE;
	if (max_retries != NULL && o.max_retries == 0)
		o.max_retries = -1;		/* 0 given: none (0 in the options is the default) */
	if (o.concurrency > 128)
		return cli_usage_error(&cli_map, "--concurrency is at most 128");
	o.map_id = map_id;
	o.agentic = agentic;
	o.system_prompt = system;
	o.continuation_message = continuation;
	o.turn.provider = provider;
	o.turn.model = model;
	o.turn.base_url = base_url;
	o.turn.api_key = api_key;

	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (n_pos == 2)
	{
		if (session == NULL && mnemo_map_session(st, pos[1], &owner) != MNEMO_OK)
			rc = cli_fail(st);
		else if (strcmp(pos[0], "status") == 0)
			rc = print_status(st, session ? session : owner, pos[1]);
		else
			rc = work(st, session ? session : owner, pos[1], &o);
		goto done;
	}
	{
		int			count;

		if ((items = items_array(items_path, &count)) == NULL)
		{
			rc = CLI_ERROR;
			goto done;
		}
	}
	if ((template_text = slurp(template_path)) == NULL ||
		(schema_path != NULL && (schema = slurp(schema_path)) == NULL))
	{
		fprintf(stderr, "mnemo map: cannot read %s\n", template_text ? schema_path : template_path);
		rc = CLI_ERROR;
		goto done;
	}
	o.schema = schema;
	if (session == NULL)
	{
		mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;
		mnemo_session *s = NULL;

		spec.title = "map";
		spec.provider_id = provider;
		spec.model_id = model;
		if (mnemo_session_create(st, &spec, &s) != MNEMO_OK)
		{
			rc = cli_fail(st);
			goto done;
		}
		owner = strdup(s->id);
		mnemo_session_free(s);
		session = owner;
	}
	if (mnemo_map_create(st, session, template_text, items, &o, &new_id) != MNEMO_OK)
		rc = cli_fail(st);
	else
		rc = work(st, session, new_id, &o);
done:
	free(owner);
	free(new_id);
	free(template_text);
	free(schema);
	free(items);
	mnemo_store_close(st);
	return rc;
}
