/*
 * agent.c
 *		The make demo agent: a scripted multi-turn session with tool calls
 *		through mnemo_session_send(), with two toy tools run locally.
 *
 *	agent run SENT_FILE       create a session, run the scripted turns, print
 *	                          them as they stream; write what was sent and
 *	                          received to SENT_FILE (JSON) and the session id
 *	                          as the last line of stdout
 *	agent check SESSION SENT_FILE
 *	                          every message sent and received is in the log,
 *	                          in order, with the same text: exit 0 if so
 *
 * The provider and its key come from the environment (OPENAI_API_KEY,
 * ANTHROPIC_API_KEY and their _BASE_URL), as for any libmnemo program;
 * test/demo.sh points OPENAI_BASE_URL at the bundled test server when no
 * key is set.  MNEMO_DEMO_MODEL overrides the model.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "mnemo.h"

#define MAX_TOOL_ROUNDS 6

static const char *const user_turns[] = {
	"What is in the test/demo directory of this project?",
	"Read mnemo.control: which version of the extension does it install?",
	"Thanks. Sum up what you did in one sentence.",
};

#define N_USER_TURNS (sizeof(user_turns) / sizeof(user_turns[0]))

static const char tools_json[] =
	"[{\"name\":\"list_dir\",\"description\":\"List the entries of a directory of the project "
	"(a relative path).\",\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
	"\"string\"}},\"required\":[\"path\"]}},"
	"{\"name\":\"read_file\",\"description\":\"Read a text file of the project (a relative path; "
	"the first 4 KB).\",\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":"
	"\"string\"}},\"required\":[\"path\"]}}]";

static void
die(mnemo_store *st, const char *what)
{
	fprintf(stderr, "agent: %s: %s\n", what,
			st && *mnemo_errmsg(st) ? mnemo_errmsg(st) : mnemo_strerror(mnemo_errcode(st)));
	exit(1);
}

/* ---- the tools ------------------------------------------------------------ */

/* The toy tools stay inside the project: relative paths without "..". */
static const char *
safe_path(const char *input, char **err)
{
	struct json_object *obj = json_tokener_parse(input),
			   *p;
	static char path[1024];

	*err = NULL;
	if (obj == NULL || !json_object_object_get_ex(obj, "path", &p) ||
		!json_object_is_type(p, json_type_string))
		*err = strdup("the input needs a \"path\" string");
	else if (snprintf(path, sizeof(path), "%s", json_object_get_string(p)) >= (int) sizeof(path) ||
			 path[0] == '/' || strstr(path, "..") != NULL)
		*err = strdup("only relative paths inside the project, without \"..\"");
	json_object_put(obj);
	return *err ? NULL : path;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Runs one tool; returns its output (malloc'd) and sets *is_error. */
static char *
run_tool(const char *name, const char *input, bool *is_error)
{
	char	   *err;
	const char *path = safe_path(input, &err);
	char	   *out = NULL;
	size_t		len = 0;
	FILE	   *f;

	*is_error = true;
	if (path == NULL)
		return err;
	if (strcmp(name, "list_dir") == 0)
	{
		DIR		   *d = opendir(*path ? path : ".");
		struct dirent *e;
		char	   *names[256];
		size_t		n = 0;

		if (d == NULL)
			return strdup("no such directory");
		while ((e = readdir(d)) != NULL && n < 256)
			if (e->d_name[0] != '.')
				names[n++] = strdup(e->d_name);
		closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_str);
		f = open_memstream(&out, &len);
		for (size_t i = 0; i < n; i++)
		{
			fprintf(f, "%s%s", i ? "\n" : "", names[i]);
			free(names[i]);
		}
		fclose(f);
	}
	else if (strcmp(name, "read_file") == 0)
	{
		FILE	   *in = fopen(path, "r");
		size_t		got;

		if (in == NULL)
			return strdup("no such file");
		out = calloc(4097, 1);
		got = fread(out, 1, 4096, in);
		out[got] = '\0';
		fclose(in);
	}
	else
		return strdup("unknown tool");
	*is_error = false;
	return out;
}

/* ---- run: the scripted turns ----------------------------------------------- */

typedef struct streaming
{
	bool		in_text;
} streaming;

static int
on_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	streaming  *s = arg;

	(void) st;
	if (strcmp(p->type, "text") == 0)
	{
		if (!s->in_text)
			fputs("assistant> ", stdout);
		s->in_text = true;
		fwrite(p->delta, 1, p->len, stdout);
	}
	else if (strcmp(p->type, "tool") == 0)
	{
		if (s->in_text)
			fputc('\n', stdout);
		s->in_text = false;
		printf("assistant> [tool call %s %s]\n", p->tool_name, p->tool_input);
	}
	fflush(stdout);
	return 0;
}

/* Append {"role": R, "text": T, ...} to the record of what was sent. */
static void
record(struct json_object *sent, const char *role, const char *text, const char *tool,
	   const char *input)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "role", json_object_new_string(role));
	json_object_object_add(o, "text", json_object_new_string(text));
	if (tool != NULL)
	{
		json_object_object_add(o, "tool", json_object_new_string(tool));
		json_object_object_add(o, "input", json_object_new_string(input));
	}
	json_object_array_add(sent, o);
}

static int
cmd_run(mnemo_store *st, const char *sent_file)
{
	const char *provider = getenv("OPENAI_API_KEY") && *getenv("OPENAI_API_KEY") ? "openai" : "anthropic";
	const char *model = getenv("MNEMO_DEMO_MODEL");
	mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;
	mnemo_session *s = NULL;
	mnemo_turn_options opts = MNEMO_TURN_OPTIONS_INIT;
	struct json_object *sent = json_object_new_array();
	char		sid[MNEMO_ID_MAX + 1];

	if (model == NULL || *model == '\0')
		model = strcmp(provider, "openai") == 0 ? "gpt-4o-mini" : "claude-sonnet-4-5";
	spec.provider_id = provider;
	spec.model_id = model;
	spec.agent = "demo-agent";
	spec.title = "make demo";
	spec.system_prompt = "You are a careful coding agent working in the mnemo project. Use the "
		"list_dir and read_file tools to answer; keep answers short.";
	if (mnemo_session_create(st, &spec, &s) != MNEMO_OK)
		die(st, "creating the session");
	snprintf(sid, sizeof(sid), "%s", s->id);
	printf("session %s (provider %s, model %s)\nsystem> %s\n", sid, provider, model,
		   s->system_prompt);
	mnemo_session_free(s);
	opts.tools = tools_json;
	opts.max_output_tokens = 1024;

	for (size_t t = 0; t < N_USER_TURNS; t++)
	{
		const char *text = user_turns[t];

		printf("\nuser> %s\n", text);
		record(sent, "user", text, NULL, NULL);
		for (int round = 0; round < MAX_TOOL_ROUNDS; round++)
		{
			streaming	ss = {0};
			mnemo_turn *turn = NULL;

			if (mnemo_session_send(st, sid, &opts, text, NULL, 0, on_part, &ss, &turn) != MNEMO_OK)
				die(st, "the turn failed");
			if (ss.in_text)
				fputc('\n', stdout);
			printf("           (%s; %lld tokens in, %lld out)\n", turn->finish_reason,
				   (long long) turn->tokens.input, (long long) turn->tokens.output);
			record(sent, "assistant", turn->text, NULL, NULL);
			for (size_t i = 0; i < turn->n_tool_calls; i++)
			{
				const mnemo_tool_call *c = &turn->tool_calls[i];
				bool		is_error;
				char	   *out;

				record(sent, "tool", "", c->name, c->input);
				if (mnemo_session_tool_start(st, sid, c->part_id) != MNEMO_OK)
					die(st, "starting the tool");
				out = run_tool(c->name, c->input, &is_error);
				printf("tool>      %s %s: %s%zu bytes\n", c->name, c->input,
					   is_error ? "error, " : "", strlen(out));
				if (mnemo_session_tool_result(st, sid, c->part_id, out, is_error) != MNEMO_OK)
					die(st, "recording the tool's result");
				record(sent, "tool_output", out, NULL, NULL);
				free(out);
			}
			/* a reply that called tools gets their results in a next send
			 * without a user message */
			text = NULL;
			if (turn->n_tool_calls == 0)
			{
				mnemo_turn_free(turn);
				break;
			}
			mnemo_turn_free(turn);
		}
	}
	if (json_object_to_file_ext(sent_file, sent, JSON_C_TO_STRING_PRETTY) != 0)
	{
		fprintf(stderr, "agent: writing %s failed\n", sent_file);
		exit(1);
	}
	json_object_put(sent);
	printf("\n%s\n", sid);
	return 0;
}

/* ---- check: everything sent is in the log ---------------------------------- */

static int failures;

static void
expect(bool cond, const char *fmt,...)
{
	va_list		ap;

	if (cond)
		return;
	failures++;
	fputs("MISMATCH: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

static const char *
field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static int
cmd_check(mnemo_store *st, const char *sid, const char *sent_file)
{
	struct json_object *sent = json_object_from_file(sent_file);
	mnemo_messages *msgs = NULL;
	size_t		n_sent,
				k = 0,
				users = 0,
				assistants = 0,
				tools = 0,
				summaries = 0,
				tombstoned = 0;

	if (sent == NULL)
	{
		fprintf(stderr, "agent: cannot read %s\n", sent_file);
		return 1;
	}
	if (mnemo_messages_get(st, sid, NULL, true, &msgs) != MNEMO_OK)
		die(st, "get_messages");
	n_sent = json_object_array_length(sent);
	for (size_t i = 0; i < msgs->count; i++)
	{
		const mnemo_message *m = &msgs->items[i];
		char	   *text = NULL;
		size_t		tlen = 0;
		FILE	   *f;
		struct json_object *r;

		if (m->is_summary)
		{
			summaries++;
			continue;
		}
		expect(k < n_sent, "message #%lld (%s) was never sent", (long long) m->seq, m->role);
		if (k >= n_sent)
			continue;
		r = json_object_array_get_idx(sent, k++);
		expect(strcmp(m->role, field(r, "role")) == 0, "message #%lld is %s, sent as %s",
			   (long long) m->seq, m->role, field(r, "role"));
		f = open_memstream(&text, &tlen);
		for (size_t p = 0; p < m->n_parts; p++)
			if (strcmp(m->parts[p].type, "text") == 0 && m->parts[p].text != NULL)
				fputs(m->parts[p].text, f);
		fclose(f);
		expect(strcmp(text, field(r, "text")) == 0, "message #%lld's text differs:\n  log:  %s\n  sent: %s",
			   (long long) m->seq, text, field(r, "text"));
		free(text);
		users += strcmp(m->role, "user") == 0;
		assistants += strcmp(m->role, "assistant") == 0;
		for (size_t p = 0; p < m->n_parts; p++)
		{
			const mnemo_part *pt = &m->parts[p];
			struct json_object *call,
					   *out;
			const char *stored;

			if (strcmp(pt->type, "tool") != 0)
				continue;
			tools++;
			tombstoned += pt->compacted_at != 0;
			call = k < n_sent ? json_object_array_get_idx(sent, k++) : NULL;
			out = k < n_sent ? json_object_array_get_idx(sent, k++) : NULL;
			expect(call != NULL && strcmp(field(call, "tool"), pt->tool_name) == 0,
				   "tool call %s of message #%lld was not made", pt->tool_name, (long long) m->seq);
			/* an error result is stored as the part's error message */
			stored = pt->tool_output != NULL ? pt->tool_output : pt->error_message;
			expect(out != NULL && stored != NULL && strcmp(field(out, "text"), stored) == 0,
				   "the output of %s (message #%lld) differs from what the tool returned",
				   pt->tool_name, (long long) m->seq);
		}
	}
	expect(k == n_sent, "%zu of the %zu records sent are not in the log", n_sent - k, n_sent);
	printf("log: %zu messages (%zu user, %zu assistant, %zu summary), %zu tool calls with their "
		   "outputs (%zu tombstoned, still stored)\n", msgs->count, users, assistants, summaries,
		   tools, tombstoned);
	if (failures == 0)
		printf("OK: every message sent is in the log (%zu records compared, texts identical)\n", n_sent);
	else
		printf("FAILED: %d mismatches between what was sent and the log\n", failures);
	mnemo_messages_free(msgs);
	json_object_put(sent);
	return failures == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	mnemo_store *st;
	int			rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || (strcmp(argv[1], "check") == 0 && argc < 4))
	{
		fputs("usage: agent run SENT_FILE | check SESSION SENT_FILE\n", stderr);
		return 2;
	}
	if (mnemo_global_init() != MNEMO_OK)
		return 1;
	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
		die(st, "connecting");
	if (strcmp(argv[1], "run") == 0)
		rc = cmd_run(st, argv[2]);
	else if (strcmp(argv[1], "check") == 0)
		rc = cmd_check(st, argv[2], argv[3]);
	else
	{
		fprintf(stderr, "agent: unknown command %s\n", argv[1]);
		rc = 2;
	}
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return rc;
}
