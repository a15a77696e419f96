/*
 * t_claude_code.c
 *		mnemo_import_jsonl of Claude Code logs.
 *
 *	- real Claude Code logs (a small and a large one in detail, kept in
 *	  test/data/claude-code; all 22 when ../shared/data is there) are
 *	  imported, and every user and assistant text, tool
 *	  input and tool output is compared with the log parsed here
 *	  independently, byte for byte;
 *	- the odd corners of the Claude Code reader (results that arrive late or
 *	  for no known call, sidechains, images, redacted thinking);
 *	- a record whose uuid came before (a log with lines written twice, as
 *	  Claude Code's resume and hooks have done) is one record, as Claude
 *	  Code reads it: left out and reported, its message not stored twice.
 *
 * Runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <glob.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "transcript_helpers.h"

/* two logs kept in the repository; the whole data set where it is present */
#define CLAUDE_DIR_DEFAULT "test/data/claude-code"
#define SHARED_CLAUDE_DIR_DEFAULT "../shared/data/transcripts/kimi-cli-claude-code"
#define SMALL_LOG "bf/3a8bd70c3e/1/full.jsonl"
#define LARGE_LOG "29/77bc73228c/1/full.jsonl"

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

/* Claude Code keys its records by uuid: a uuid seen before is the same
 * record written again, not a second message. */
static void
test_claude_duplicates(mnemo_store *st)
{
	static const char log[] =
		"{\"type\": \"user\", \"uuid\": \"u1\", \"sessionId\": \"dup-log\", \"timestamp\": \"2026-03-01T10:00:00Z\", "
		"\"message\": {\"role\": \"user\", \"content\": \"go\"}}\n"
		"{\"type\": \"assistant\", \"uuid\": \"a1\", \"sessionId\": \"dup-log\", \"message\": {\"id\": \"m1\", "
		"\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"Read\", "
		"\"input\": {}}]}}\n"
		"{\"type\": \"user\", \"uuid\": \"r1\", \"sessionId\": \"dup-log\", \"message\": {\"role\": \"user\", "
		"\"content\": [{\"type\": \"tool_result\", \"tool_use_id\": \"t1\", \"content\": \"ok\"}]}}\n"
		/* the three again, as a resumed log repeats them */
		"{\"type\": \"user\", \"uuid\": \"u1\", \"sessionId\": \"dup-log\", \"timestamp\": \"2026-03-01T10:00:00Z\", "
		"\"message\": {\"role\": \"user\", \"content\": \"go\"}}\n"
		"{\"type\": \"assistant\", \"uuid\": \"a1\", \"sessionId\": \"dup-log\", \"message\": {\"id\": \"m1\", "
		"\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"Read\", "
		"\"input\": {}}]}}\n"
		"{\"type\": \"user\", \"uuid\": \"r1\", \"sessionId\": \"dup-log\", \"message\": {\"role\": \"user\", "
		"\"content\": [{\"type\": \"tool_result\", \"tool_use_id\": \"t1\", \"content\": \"ok\"}]}}\n"
		"{\"type\": \"user\", \"uuid\": \"u2\", \"sessionId\": \"dup-log\", "
		"\"message\": {\"role\": \"user\", \"content\": \"thanks\"}}\n";
	skip_log	skips = {0};
	mnemo_import_options opts = {.skipped = on_skip,.kept = on_kept,.progress_arg = &skips};
	mnemo_messages *list = NULL;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		n = 0;
	int			rc;

	rc = import_text(st, log, &opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "a log with records written twice imports");
	is_int(n, 3, "each record once: the user turn, the assistant turn, the last user turn");
	is_int(skips.count, 3, "the three repeated records left out and reported");
	is_int(skips.last_line, 6, "by their lines");
	if (mnemo_messages_get(st, sid, NULL, true, &list) == MNEMO_OK && list->count == 3)
		ok(list->items[1].n_parts == 1 && strcmp(list->items[1].parts[0].tool_state, "completed") == 0 &&
		   strcmp(list->items[1].parts[0].tool_output, "ok") == 0,
		   "the call completed once by its result");
	else
		ok(0, "read the session back: %s", mnemo_errmsg(st));
	mnemo_messages_free(list);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_claude_code(st);
	test_claude_corners(st);
	test_claude_duplicates(st);
	mnemo_store_close(st);
	return tap_done();
}
