/*
 * stream.c
 *		The stream of deltas: server-sent events in, through a provider
 *		decoder, normalized deltas out.
 *
 * The stream (mn_stream) owns an SSE parser (sse.c) and a provider decoder
 * (openai_stream.c, anthropic_stream.c) and keeps what is common to both
 * providers: the tool calls being assembled, usage, the finish reason, the
 * error, and the rule that once the turn is over (complete, failed,
 * stopped, interrupted) nothing more is delivered.  The JSON reading
 * helpers and the error classes the decoders share live here too.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"
#include "stream/stream.h"

/* ========================================================================
 * The stream
 * ======================================================================== */

struct mn_tool
{
	int			ordinal;		/* -1 until TOOL_START */
	int64_t		pindex;
	char	   *id;
	char	   *name;
	mn_buf		input;
	char	   *def_input;		/* JSON text, or NULL */
	size_t		def_len;
	bool		started;		/* TOOL_START delivered */
	bool		open;			/* TOOL_END not delivered yet */
};

struct mn_stream
{
	const mn_decoder *dec;
	void	   *dstate;
	mn_sse	   *sse;
	mn_delta_fn cb;
	void	   *arg;
	size_t		max_event;
	size_t		max_tool_input;
	size_t		max_tool_calls;

	mn_stream_state state;
	bool		ended;
	int			stop_value;
	json_tokener *tok;

	mn_tool   **tools;			/* in order of first appearance */
	size_t		ntools;
	size_t		cap_tools;
	int			nstarted;		/* TOOL_STARTs delivered: the next number */

	bool		json_only;		/* no text-chunk path */
	mn_buf		scratch;		/* its unescaped text */
	size_t		chunks;			/* events it read */

	bool		started;		/* START was delivered, or can no longer be */
	bool		delivered;		/* a delta was */
	bool		has_usage;
	mnemo_tokens usage;
	mn_finish	finish;
	char	   *raw_finish;

	mn_stream_error err;
	char	   *err_message;
	char	   *err_type;
	char	   *err_code;
};

#define DEFAULT_MAX_TOOL_INPUT ((size_t) 16 * 1024 * 1024)
#define DEFAULT_MAX_TOOL_CALLS ((size_t) 1024)

static int
stream_on_event(void *arg, const mn_sse_event *ev)
{
	mn_stream  *s = arg;
	int			rc;

	if (s->state != MN_STREAM_OPEN)
		return 1;
	rc = s->dec->event(s, s->dstate, ev);
	if (s->state != MN_STREAM_OPEN)
		return 1;
	return rc;
}

mn_stream *
mn_stream_new(mn_provider provider, const mn_stream_limits *limits,
			  mn_delta_fn cb, void *arg)
{
	mn_stream  *s;
	const mn_decoder *dec;

	switch (provider)
	{
		case MN_PROVIDER_OPENAI:
			dec = &mn_openai_decoder;
			break;
		case MN_PROVIDER_ANTHROPIC:
			dec = &mn_anthropic_decoder;
			break;
		default:
			return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->dec = dec;
	s->cb = cb;
	s->arg = arg;
	s->max_event = limits && limits->max_event ? limits->max_event : MN_SSE_DEFAULT_MAX_EVENT;
	s->max_tool_input = limits && limits->max_tool_input ? limits->max_tool_input
		: DEFAULT_MAX_TOOL_INPUT;
	s->max_tool_calls = limits && limits->max_tool_calls ? limits->max_tool_calls
		: DEFAULT_MAX_TOOL_CALLS;
	s->json_only = limits && limits->json_only;
	s->sse = mn_sse_new(s->max_event, stream_on_event, s);
	s->tok = json_tokener_new_ex(64);
	s->dstate = dec->create();
	if (s->sse == NULL || s->tok == NULL || s->dstate == NULL)
	{
		mn_stream_free(s);
		return NULL;
	}
	return s;
}

void
mn_stream_free(mn_stream *s)
{
	if (s == NULL)
		return;
	if (s->dstate != NULL)
		s->dec->destroy(s->dstate);
	mn_sse_free(s->sse);
	if (s->tok != NULL)
		json_tokener_free(s->tok);
	for (size_t i = 0; i < s->ntools; i++)
	{
		mn_tool    *t = s->tools[i];

		free(t->id);
		free(t->name);
		mn_buf_free(&t->input);
		free(t->def_input);
		free(t);
	}
	free(s->tools);
	mn_buf_free(&s->scratch);
	free(s->raw_finish);
	free(s->err_message);
	free(s->err_type);
	free(s->err_code);
	free(s);
}

mn_stream_state
mn_stream_feed(mn_stream *s, const char *bytes, size_t len)
{
	int			rc;

	if (s->state != MN_STREAM_OPEN || s->ended)
		return s->state;
	rc = mn_sse_feed(s->sse, bytes, len);
	if (s->state == MN_STREAM_OPEN && rc == MN_SSE_TOO_LARGE)
		mn_stream_fail(s, MN_STREAM_ERR_TOO_LARGE, MN_ERRCLASS_OTHER, NULL, NULL,
					   "an event of the stream is larger than %zu bytes", s->max_event);
	else if (s->state == MN_STREAM_OPEN && rc == MN_SSE_NOMEM)
		mn_stream_fail(s, MN_STREAM_ERR_NOMEM, MN_ERRCLASS_OTHER, NULL, NULL,
					   "out of memory reading the stream");
	else if (s->state == MN_STREAM_OPEN && rc != 0)
		mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
					   "the %s decoder stopped without saying why", s->dec->name);
	return s->state;
}

mn_stream_state
mn_stream_end(mn_stream *s)
{
	if (!s->ended)
	{
		s->ended = true;
		if (s->state == MN_STREAM_OPEN)
			s->state = MN_STREAM_INTERRUPTED;
	}
	return s->state;
}

mn_stream_state
mn_stream_state_of(const mn_stream *s)
{
	return s->state;
}

int
mn_stream_stop_value(const mn_stream *s)
{
	return s->stop_value;
}

bool
mn_stream_usage(const mn_stream *s, mnemo_tokens *out)
{
	if (!s->has_usage)
	{
		memset(out, 0, sizeof(*out));
		return false;
	}
	*out = s->usage;
	return true;
}

mn_finish
mn_stream_finish(const mn_stream *s, const char **raw)
{
	if (raw != NULL)
		*raw = s->raw_finish;
	return s->finish;
}

const mn_stream_error *
mn_stream_error_of(const mn_stream *s)
{
	return s->state == MN_STREAM_FAILED ? &s->err : NULL;
}

size_t
mn_stream_tool_calls(const mn_stream *s)
{
	return (size_t) s->nstarted;
}

int64_t
mn_stream_retry(const mn_stream *s)
{
	return mn_sse_retry(s->sse);
}

struct json_object *
mn_stream_parse_json(mn_stream *s, const char *text, size_t len, bool strict)
{
	struct json_object *obj;
	size_t		end;

	/* json-c reads a NUL as the end; JSON text has none */
	if (len >= INT_MAX || memchr(text, '\0', len) != NULL)
		return NULL;
	json_tokener_reset(s->tok);
	json_tokener_set_flags(s->tok, strict ? JSON_TOKENER_STRICT : 0);
	/* the terminating NUL goes in too, so that a number at the very end is
	 * known to be complete */
	obj = json_tokener_parse_ex(s->tok, text, (int) len + 1);
	if (obj == NULL)
		return NULL;
	if (json_tokener_get_error(s->tok) != json_tokener_success)
	{
		json_object_put(obj);
		return NULL;
	}
	for (end = json_tokener_get_parse_end(s->tok); end < len; end++)
		if (text[end] != ' ' && text[end] != '\t' && text[end] != '\n' && text[end] != '\r')
		{
			json_object_put(obj);
			return NULL;
		}
	return obj;
}

mn_buf *
mn_stream_text_scratch(mn_stream *s)
{
	return s->json_only ? NULL : &s->scratch;
}

bool
mn_stream_started(const mn_stream *s)
{
	return s->started;
}

int
mn_stream_chunk_text(mn_stream *s, int block, const char *text, size_t len)
{
	s->chunks++;
	return mn_stream_text(s, MN_DELTA_TEXT, block, text, len);
}

size_t
mn_stream_chunk_count(const mn_stream *s)
{
	return s->chunks;
}

/* Hand a delta to the callback; a non-zero answer stops the stream. */
static int
deliver(mn_stream *s, const mn_delta *d)
{
	int			rc;

	s->delivered = true;
	if (s->cb == NULL)
		return 0;
	rc = s->cb(s->arg, d);
	if (rc != 0)
	{
		if (s->state == MN_STREAM_OPEN)
			s->state = MN_STREAM_STOPPED;
		if (s->stop_value == 0)
			s->stop_value = rc;
	}
	return rc;
}

int
mn_stream_emit(mn_stream *s, const mn_delta *d)
{
	if (s->state != MN_STREAM_OPEN)
		return 1;
	return deliver(s, d);
}

int
mn_stream_start(mn_stream *s, const char *id, const char *model)
{
	mn_delta	d = {.kind = MN_DELTA_START};

	/* START is first or not at all (Anthropic's message_start could come
	 * after a block from a broken server) */
	if (s->started || s->delivered)
	{
		s->started = true;
		return 0;
	}
	s->started = true;
	d.id = id;
	d.model = model;
	return mn_stream_emit(s, &d);
}

int
mn_stream_text(mn_stream *s, mn_delta_kind kind, int block, const char *text, size_t len)
{
	mn_delta	d = {.kind = kind};

	if (len == 0)
		return 0;
	d.block = block;
	d.text = text;
	d.len = len;
	return mn_stream_emit(s, &d);
}

int
mn_stream_set_usage(mn_stream *s, const mnemo_tokens *u)
{
	mn_delta	d = {.kind = MN_DELTA_USAGE};

	if (u->input >= 0)
		s->usage.input = u->input;
	if (u->output >= 0)
		s->usage.output = u->output;
	if (u->cache_read >= 0)
		s->usage.cache_read = u->cache_read;
	if (u->cache_write >= 0)
		s->usage.cache_write = u->cache_write;
	if (u->reasoning >= 0)
		s->usage.reasoning = u->reasoning;
	s->has_usage = true;
	d.usage = &s->usage;
	return mn_stream_emit(s, &d);
}

int
mn_stream_set_finish(mn_stream *s, mn_finish f, const char *raw)
{
	mn_delta	d = {.kind = MN_DELTA_FINISH};

	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (s->finish != MN_FINISH_NONE || f == MN_FINISH_NONE)
		return 0;
	if (f == MN_FINISH_STOP && s->ntools > 0)
		f = MN_FINISH_TOOL_CALLS;
	s->raw_finish = mn_strndup(raw ? raw : "", raw ? strlen(raw) : 0);
	if (s->raw_finish == NULL)
		return mn_stream_fail(s, MN_STREAM_ERR_NOMEM, MN_ERRCLASS_OTHER, NULL, NULL,
							  "out of memory");
	s->finish = f;
	d.finish = f;
	d.raw_finish = s->raw_finish;
	return mn_stream_emit(s, &d);
}

int
mn_stream_terminal(mn_stream *s)
{
	mn_delta	d = {.kind = MN_DELTA_DONE};
	int			rc;

	if (s->state != MN_STREAM_OPEN)
		return 1;
	if ((rc = mn_stream_tools_end_all(s)) != 0)
		return rc;
	if (s->finish == MN_FINISH_NONE)
	{
		s->state = MN_STREAM_INTERRUPTED;
		return 1;
	}
	s->state = MN_STREAM_COMPLETE;
	deliver(s, &d);
	return 1;
}

int
mn_stream_fail(mn_stream *s, mn_stream_err kind, mn_errclass errclass,
			   const char *type, const char *code, const char *fmt,...)
{
	mn_delta	d = {.kind = MN_DELTA_ERROR};
	va_list		ap;
	int			n;

	if (s->state != MN_STREAM_OPEN)
		return 1;
	s->state = MN_STREAM_FAILED;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0 && (s->err_message = malloc((size_t) n + 1)) != NULL)
	{
		va_start(ap, fmt);
		vsnprintf(s->err_message, (size_t) n + 1, fmt, ap);
		va_end(ap);
	}
	if (type != NULL)
		s->err_type = mn_strndup(type, strlen(type));
	if (code != NULL)
		s->err_code = mn_strndup(code, strlen(code));
	s->err.kind = kind;
	s->err.errclass = errclass;
	/* out of memory for the text: the error still gets through */
	s->err.message = s->err_message ? s->err_message : "out of memory";
	s->err.type = s->err_type;
	s->err.code = s->err_code;
	d.error = &s->err;
	deliver(s, &d);
	return 1;
}

/* ---- tool calls ---- */

static int
nomem(mn_stream *s)
{
	return mn_stream_fail(s, MN_STREAM_ERR_NOMEM, MN_ERRCLASS_OTHER, NULL, NULL,
						  "out of memory");
}

static void
tool_delta(const mn_tool *t, mn_delta *d)
{
	d->tool = t->ordinal;
	d->provider_index = t->pindex;
	d->id = t->id;
	d->name = t->name;
}

static int
tool_start(mn_stream *s, mn_tool *t)
{
	mn_delta	d = {.kind = MN_DELTA_TOOL_START};
	int			rc;

	/* numbered as they start, so that the caller sees 0, 1, ... in order
	 * even when a later call's name comes first */
	t->ordinal = s->nstarted++;
	if (t->id[0] == '\0')
	{
		char		id[32];

		snprintf(id, sizeof(id), "call_%d", t->ordinal);
		free(t->id);
		if ((t->id = mn_strndup(id, strlen(id))) == NULL)
			return nomem(s);
	}
	/* the ids answer the calls in the next request, and Anthropic refuses a
	 * tool_use id that is not unique: a reply that repeats one is broken */
	for (size_t i = 0; i < s->ntools; i++)
		if (s->tools[i] != t && s->tools[i]->started && strcmp(s->tools[i]->id, t->id) == 0)
			return mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
								  "two tool calls with the id \"%s\"", t->id);
	t->started = true;
	tool_delta(t, &d);
	if ((rc = mn_stream_emit(s, &d)) != 0)
		return rc;
	if (t->input.len > 0)
	{
		/* what came before the name, at once */
		d.kind = MN_DELTA_TOOL_INPUT;
		d.text = t->input.data;
		d.len = t->input.len;
		return mn_stream_emit(s, &d);
	}
	return 0;
}

mn_tool *
mn_stream_tool_find(mn_stream *s, int64_t provider_index)
{
	for (size_t i = s->ntools; i > 0; i--)
		if (s->tools[i - 1]->open && s->tools[i - 1]->pindex == provider_index)
			return s->tools[i - 1];
	return NULL;
}

const char *
mn_stream_tool_id(const mn_tool *t)
{
	return t->id;
}

int
mn_stream_tool_open(mn_stream *s, int64_t provider_index, const char *id,
					const char *name, mn_tool **out)
{
	mn_tool    *t;

	*out = NULL;
	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (s->ntools >= s->max_tool_calls)
		return mn_stream_fail(s, MN_STREAM_ERR_TOO_LARGE, MN_ERRCLASS_OTHER, NULL, NULL,
							  "more than %zu tool calls in one reply", s->max_tool_calls);
	if (s->ntools == s->cap_tools)
	{
		size_t		cap = s->cap_tools ? s->cap_tools * 2 : 8;
		mn_tool   **grown = realloc(s->tools, cap * sizeof(*grown));

		if (grown == NULL)
			return nomem(s);
		s->tools = grown;
		s->cap_tools = cap;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return nomem(s);
	t->ordinal = -1;
	t->pindex = provider_index;
	t->open = true;
	t->id = mn_strndup("", 0);
	t->name = mn_strndup("", 0);
	if (t->id == NULL || t->name == NULL)
	{
		free(t->id);
		free(t->name);
		free(t);
		return nomem(s);
	}
	s->tools[s->ntools++] = t;
	*out = t;
	return mn_stream_tool_set(s, t, id, name);
}

int
mn_stream_tool_set(mn_stream *s, mn_tool *t, const char *id, const char *name)
{
	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (id != NULL && id[0] != '\0' && t->id[0] == '\0' && !t->started)
	{
		char	   *d = mn_strndup(id, strlen(id));

		if (d == NULL)
			return nomem(s);
		free(t->id);
		t->id = d;
	}
	if (name != NULL && name[0] != '\0' && t->name[0] == '\0' && !t->started)
	{
		char	   *d = mn_strndup(name, strlen(name));

		if (d == NULL)
			return nomem(s);
		free(t->name);
		t->name = d;
		return tool_start(s, t);
	}
	return 0;
}

int
mn_stream_tool_default_input(mn_stream *s, mn_tool *t, const char *json, size_t len)
{
	char	   *d;

	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (len > s->max_tool_input)
		return mn_stream_fail(s, MN_STREAM_ERR_TOO_LARGE, MN_ERRCLASS_OTHER, NULL, NULL,
							  "a tool call's input is larger than %zu bytes",
							  s->max_tool_input);
	if ((d = mn_strndup(json, len)) == NULL)
		return nomem(s);
	free(t->def_input);
	t->def_input = d;
	t->def_len = len;
	return 0;
}

int
mn_stream_tool_input(mn_stream *s, mn_tool *t, const char *frag, size_t len)
{
	mn_delta	d = {.kind = MN_DELTA_TOOL_INPUT};

	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (len == 0 || !t->open)
		return 0;
	if (len > s->max_tool_input || t->input.len > s->max_tool_input - len)
		return mn_stream_fail(s, MN_STREAM_ERR_TOO_LARGE, MN_ERRCLASS_OTHER, NULL, NULL,
							  "a tool call's input is larger than %zu bytes",
							  s->max_tool_input);
	if (!mn_buf_put(&t->input, frag, len))
		return nomem(s);
	if (!t->started)
		return 0;
	tool_delta(t, &d);
	d.text = frag;
	d.len = len;
	return mn_stream_emit(s, &d);
}

static bool
blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

int
mn_stream_tool_end(mn_stream *s, mn_tool *t)
{
	mn_delta	d = {.kind = MN_DELTA_TOOL_END};
	struct json_object *obj;
	const char *text;
	size_t		len;
	int			rc;

	if (s->state != MN_STREAM_OPEN)
		return 1;
	if (!t->open)
		return 0;
	/* a call with no name cannot be run, nor sent back to the provider */
	if (t->name[0] == '\0')
		return mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
							  "a tool call without a name");
	if (!t->started && (rc = tool_start(s, t)) != 0)
		return rc;
	t->open = false;
	if (!blank(t->input.data, t->input.len))
	{
		text = t->input.data;
		len = t->input.len;
	}
	else if (t->def_input != NULL && !blank(t->def_input, t->def_len))
	{
		text = t->def_input;
		len = t->def_len;
	}
	else
	{
		/* no input at all: a tool without parameters */
		text = "{}";
		len = 2;
	}
	/* json-c's strict mode takes NaN, 'keys' and such, which jsonb refuses */
	obj = mn_json_well_formed((mn_span) {text, len}) ? mn_stream_parse_json(s, text, len, true) : NULL;
	tool_delta(t, &d);
	d.text = text;
	d.len = len;
	d.input_valid = obj != NULL && json_object_is_type(obj, json_type_object);
	d.input = d.input_valid ? obj : NULL;
	rc = mn_stream_emit(s, &d);
	json_object_put(obj);
	/* a finished call keeps only its id and name */
	mn_buf_free(&t->input);
	free(t->def_input);
	t->def_input = NULL;
	return rc;
}

int
mn_stream_tools_end_all(mn_stream *s)
{
	int			rc;

	for (size_t i = 0; i < s->ntools; i++)
		if (s->tools[i]->open && (rc = mn_stream_tool_end(s, s->tools[i])) != 0)
			return rc;
	return 0;
}
