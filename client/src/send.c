/*
 * send.c
 *		mnemo_session_send(): one chat turn, the seed's send() walkthrough,
 *		and mnemo_session_load(), which finds the turns that died.
 *
 * The steps, as mnemo.h lists them: the user message is committed; the
 * assembled context's size (context_report, so it survives restarts) is
 * checked against the hard threshold and a blocking compaction hook runs
 * before the context is built; build_context gives the context for the
 * seed's budget; the provider's request is made of it (messages with tool
 * calls go in their structured form, read with get_messages_with_parts_by_ids);
 * the assistant row is appended before the provider is called; deltas
 * reach on_part as they stream and the parts are appended as they
 * complete; usage, cost and finish reason are written; the soft threshold
 * and the doom loop are checked.
 *
 * Round trips: a turn's statements are batched (mn_exec_batch, libpq's
 * pipeline mode), because on a local server the waits and the commits, not
 * the statements, are the cost: the session; then the lock, the user
 * message, the context's size and the context in one transaction; the
 * assistant row and COMMIT; the stream; the last part and the usage in one
 * transaction, with the context's size and the unlock behind it.  Four
 * round trips and two WAL flushes, where a statement at a time took eleven
 * and four.
 *
 * Locking: the whole turn holds a session-level advisory lock on
 * (MN_TURN_LOCK_SPACE, hashtext(session id)) on the store's connection.
 * Turns of one session from different handles therefore run one after the
 * other, and mnemo_session_load() can tell a live turn (the lock is held)
 * from a dead one (its connection, and so its lock, is gone): only when it
 * gets the lock does it mark assistant rows without finish reason
 * "interrupted".  A hash collision between two sessions only makes them
 * wait for each other, and makes load leave a dead row for a later load.
 *
 * Errors after the first commit do not undo it (the log is append-only):
 * the user turn stays, and the assistant row gets finish_reason "error" or
 * "cancelled" with what streamed, if anything did.
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "internal.h"
#include "jsonl.h"
#include "stream.h"

/* 'mnem': the first key of mnemo's advisory locks, kept apart from others */
#define MN_TURN_LOCK_SPACE "1835951469"

static const mn_stmt lock_stmt = {
	"mnemo_turn_lock",
	"SELECT pg_advisory_lock($1::int4, hashtext($2::text))", 2
};
static const mn_stmt unlock_stmt = {
	"mnemo_turn_unlock",
	"SELECT pg_advisory_unlock($1::int4, hashtext($2::text))", 2
};
static const mn_stmt try_lock_stmt = {
	"mnemo_turn_try_lock",
	"SELECT pg_try_advisory_lock($1::int4, hashtext($2::text)) AS locked", 2
};

/* Keep the first error across the cleanup calls that clear it. */
typedef struct saved_error
{
	int			code;
	char	   *msg;
	char		sqlstate[6];
} saved_error;

static void
save_error(mnemo_store *st, int code, saved_error *e)
{
	e->code = code;
	e->msg = strdup(mnemo_errmsg(st));
	memcpy(e->sqlstate, st->sqlstate, sizeof(e->sqlstate));
}

static int
restore_error(mnemo_store *st, saved_error *e)
{
	mn_fail(st, e->code, "%s", e->msg ? e->msg : mnemo_strerror(e->code));
	memcpy(st->sqlstate, e->sqlstate, sizeof(st->sqlstate));
	free(e->msg);
	e->msg = NULL;
	return e->code;
}

/* ---- the turn's settings ------------------------------------------------- */

typedef struct turn_cfg
{
	mn_provider provider;
	const char *provider_name;
	char	   *model;
	char	   *url;
	const char *api_key;		/* borrowed: options or environment */
	int			context_limit;
	int			max_output;
	int			compaction_budget;
	double		soft;
	int			connect_ms;
	int			idle_ms;
	int			retries;
	int			doom;
	int			available;		/* the budget given to build_context */
} turn_cfg;

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

static int
resolve(mnemo_store *st, const mnemo_turn_options *o, const mnemo_session *s, turn_cfg *c)
{
	const char *name = o->provider;
	const char *base;
	const char *model;
	size_t		n;
	int			sys;

	if (name == NULL && (strcmp(s->provider_id, "openai") == 0 ||
						 strcmp(s->provider_id, "anthropic") == 0))
		name = s->provider_id;
	if (name == NULL)
		name = env("OPENAI_API_KEY") ? "openai" : env("ANTHROPIC_API_KEY") ? "anthropic" : NULL;
	if (name == NULL)
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER,
					   "no provider: set one in the options or the session, or OPENAI_API_KEY or ANTHROPIC_API_KEY");
	if (strcmp(name, "openai") == 0)
	{
		c->provider = MN_PROVIDER_OPENAI;
		c->provider_name = "openai";
		c->api_key = o->api_key ? o->api_key : env("OPENAI_API_KEY");
		base = o->base_url ? o->base_url : env("OPENAI_BASE_URL");
		if (base == NULL)
			base = "https://api.openai.com/v1";
	}
	else if (strcmp(name, "anthropic") == 0)
	{
		c->provider = MN_PROVIDER_ANTHROPIC;
		c->provider_name = "anthropic";
		c->api_key = o->api_key ? o->api_key : env("ANTHROPIC_API_KEY");
		base = o->base_url ? o->base_url : env("ANTHROPIC_BASE_URL");
		if (base == NULL)
			base = "https://api.anthropic.com";
	}
	else
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER, "unknown provider \"%s\" (openai or anthropic)", name);
	if (c->api_key == NULL || *c->api_key == '\0')
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER, "no API key for %s: set %s or the options' api_key",
					   c->provider_name,
					   c->provider == MN_PROVIDER_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
	model = o->model ? o->model : s->model_id;
	if (model == NULL || *model == '\0')
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "no model: set the options' model or the session's model_id");

	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	if ((c->url = malloc(n + 32)) == NULL || (c->model = strdup(model)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	memcpy(c->url, base, n);
	strcpy(c->url + n, c->provider == MN_PROVIDER_OPENAI ? "/chat/completions" : "/v1/messages");

	c->context_limit = o->context_limit > 0 ? o->context_limit : 128000;
	c->max_output = o->max_output_tokens > 0 ? o->max_output_tokens : 4096;
	c->compaction_budget = o->compaction_output_budget > 0 ? o->compaction_output_budget : 4000;
	c->soft = o->soft_threshold > 0 ? o->soft_threshold : 0.6;
	c->connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	c->idle_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : 60000;
	c->retries = o->max_retries > 0 ? o->max_retries : o->max_retries < 0 ? 0 : 3;
	c->doom = o->doom_loop_threshold > 0 ? o->doom_loop_threshold : 3;
	sys = mnemo_estimate_tokens(s->system_prompt);
	/* the seed's budget: usable = limit - output - compaction; minus the
	 * system prompt */
	c->available = c->context_limit - c->max_output - c->compaction_budget - sys;
	if (c->available <= 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "no room for context: context_limit %d - max_output_tokens %d - compaction_output_budget %d - system prompt %d tokens",
					   c->context_limit, c->max_output, c->compaction_budget, sys);
	return MNEMO_OK;
}

/* ---- the request ----------------------------------------------------------- */

typedef struct req_build
{
	mn_req_message *msgs;
	size_t		n;
	size_t		cap;
	mn_req_tool_call **calls;	/* each assistant message's array */
	size_t		n_calls;
	char	  **strs;			/* strings made here */
	size_t		n_strs;
	size_t		cap_strs;
} req_build;

static mn_req_message *
req_add(req_build *b)
{
	if (b->n == b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 16;
		mn_req_message *m = realloc(b->msgs, cap * sizeof(*m));

		if (m == NULL)
			return NULL;
		b->msgs = m;
		b->cap = cap;
	}
	memset(&b->msgs[b->n], 0, sizeof(b->msgs[0]));
	return &b->msgs[b->n++];
}

/* Keep s to free with the request; NULL (and s freed) when out of memory. */
static char *
req_keep(req_build *b, char *s)
{
	if (s == NULL)
		return NULL;
	if (b->n_strs == b->cap_strs)
	{
		size_t		cap = b->cap_strs ? b->cap_strs * 2 : 16;
		char	  **p = realloc(b->strs, cap * sizeof(*p));

		if (p == NULL)
		{
			free(s);
			return NULL;
		}
		b->strs = p;
		b->cap_strs = cap;
	}
	b->strs[b->n_strs++] = s;
	return s;
}

static void
req_free(req_build *b)
{
	size_t		i;

	for (i = 0; i < b->n_strs; i++)
		free(b->strs[i]);
	for (i = 0; i < b->n_calls; i++)
		free(b->calls[i]);
	free(b->strs);
	free(b->calls);
	free(b->msgs);
}

/* A stored reasoning part's signature (kept in its content), or NULL. */
static char *
part_signature(const mnemo_part *p)
{
	json_object *o = json_tokener_parse(p->content);
	json_object *v;
	char	   *sig = NULL;

	if (o != NULL && json_object_object_get_ex(o, "signature", &v) &&
		json_object_is_type(v, json_type_string))
		sig = strdup(json_object_get_string(v));
	json_object_put(o);
	return sig;
}

/*
 * An assistant message with tool calls, structured: its text, the calls,
 * then one result per call in the provider's shape.  A call that never got
 * a result (the tool did not run, or the turn died) is answered with an
 * error result, since both APIs refuse a call left unanswered.
 */
static bool
add_tool_turn(req_build *b, const mnemo_message *m, bool with_reasoning)
{
	mn_buf		text = {0};
	mn_req_tool_call *calls;
	mn_req_message *rm;
	size_t		i,
				k = 0;
	const char *reasoning = NULL;
	char	   *signature = NULL;
	mn_req_tool_call **grown;

	if ((calls = calloc(m->n_parts, sizeof(*calls))) == NULL)
		return false;
	if ((grown = realloc(b->calls, (b->n_calls + 1) * sizeof(*grown))) == NULL)
	{
		free(calls);
		return false;
	}
	b->calls = grown;
	b->calls[b->n_calls++] = calls;
	for (i = 0; i < m->n_parts; i++)
	{
		const mnemo_part *p = &m->parts[i];

		if (strcmp(p->type, "text") == 0 && p->text != NULL)
		{
			if ((text.len > 0 && !mn_buf_put(&text, "\n", 1)) ||
				!mn_buf_put(&text, p->text, strlen(p->text)))
			{
				free(text.data);
				return false;
			}
		}
		else if (strcmp(p->type, "reasoning") == 0 && with_reasoning && reasoning == NULL)
		{
			reasoning = p->text;
			if ((signature = req_keep(b, part_signature(p))) == NULL)
				reasoning = NULL;
		}
		else if (strcmp(p->type, "tool") == 0)
		{
			calls[k].id = p->tool_call_id;
			calls[k].name = p->tool_name;
			calls[k].input = p->tool_input;
			k++;
		}
	}
	if ((rm = req_add(b)) == NULL || (text.data != NULL && req_keep(b, text.data) == NULL))
	{
		if (rm == NULL)
			free(text.data);
		return false;
	}
	rm->role = MN_REQ_ASSISTANT;
	rm->text = text.data;
	rm->reasoning = reasoning;
	rm->reasoning_signature = signature;
	rm->tool_calls = calls;
	rm->n_tool_calls = k;

	for (i = 0; i < m->n_parts; i++)
	{
		const mnemo_part *p = &m->parts[i];
		char	   *out = NULL;

		if (strcmp(p->type, "tool") != 0)
			continue;
		if ((rm = req_add(b)) == NULL)
			return false;
		rm->role = MN_REQ_TOOL_RESULT;
		rm->tool_call_id = p->tool_call_id;
		if (p->compacted_at != 0)
		{
			size_t		len = strlen(p->tool_name) + 64;

			if ((out = req_keep(b, malloc(len))) == NULL)
				return false;
			snprintf(out, len, "[Tool '%s' output compacted at %lld]", p->tool_name,
					 (long long) p->compacted_at);
			rm->text = out;
		}
		else if (p->tool_state != NULL && strcmp(p->tool_state, "completed") == 0)
			rm->text = p->tool_output ? p->tool_output : "";
		else if (p->tool_state != NULL && strcmp(p->tool_state, "error") == 0)
		{
			rm->text = p->error_message ? p->error_message : p->tool_output ? p->tool_output : "error";
			rm->is_error = true;
		}
		else
		{
			rm->text = "[no result: the tool call did not complete]";
			rm->is_error = true;
		}
	}
	return true;
}

static bool
has_tool_calls(const mnemo_message *m)
{
	size_t		i;
	bool		any = false;

	for (i = 0; i < m->n_parts; i++)
		if (strcmp(m->parts[i].type, "tool") == 0)
		{
			if (m->parts[i].tool_call_id == NULL || m->parts[i].tool_name == NULL)
				return false;	/* imported without ids: sent as text */
			any = true;
		}
	return any;
}

/* The text parts of an assistant message, without the reasoning the
 * rendered content also holds; NULL when it has none. */
static char *
assistant_text(const mnemo_message *m)
{
	mn_buf		b = {0};
	size_t		i;

	for (i = 0; i < m->n_parts; i++)
		if (strcmp(m->parts[i].type, "text") == 0 && m->parts[i].text != NULL &&
			*m->parts[i].text != '\0')
		{
			if ((b.len > 0 && !mn_buf_put(&b, "\n", 1)) ||
				!mn_buf_put(&b, m->parts[i].text, strlen(m->parts[i].text)))
			{
				free(b.data);
				return NULL;
			}
		}
	return b.data;
}

/*
 * The assistant message of context entry e among msgs (the context's
 * assistant messages, in context order, *next the one expected), or NULL
 * when msgs lacks it: a compaction that swapped between the two reads.
 */
static const mnemo_message *
find_message(const mnemo_messages *msgs, const mnemo_context_entry *e, size_t *next)
{
	size_t		i;

	if (msgs == NULL)
		return NULL;
	if (*next < msgs->count && strcmp(msgs->items[*next].id, e->item_id) == 0)
		return &msgs->items[(*next)++];
	for (i = 0; i < msgs->count; i++)
		if (strcmp(msgs->items[i].id, e->item_id) == 0)
			return &msgs->items[i];
	return NULL;
}

/*
 * The provider's messages for the assembled context: summaries as
 * assistant text (the seed's ContextBuilder), user-side messages as their
 * rendered content, assistant messages as their text and, with tool calls,
 * the calls and their results.  Empty messages (a turn that died before
 * its first word, or whose request was refused) are left out: both APIs
 * refuse them.
 */
static int
build_messages(mnemo_store *st, const mnemo_context *ctx, const mnemo_messages *msgs,
			   mn_provider provider, req_build *b)
{
	size_t		i,
				next = 0;

	for (i = 0; i < ctx->count; i++)
	{
		const mnemo_context_entry *e = &ctx->items[i];
		const mnemo_message *m = NULL;
		mn_req_message *rm;

		if (strcmp(e->item_type, "message") == 0 && e->role != NULL &&
			strcmp(e->role, "assistant") == 0)
			m = find_message(msgs, e, &next);
		if (m != NULL && !m->is_summary)
		{
			char	   *text;

			if (has_tool_calls(m))
			{
				if (!add_tool_turn(b, m, provider == MN_PROVIDER_ANTHROPIC))
					return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
				continue;
			}
			if ((text = assistant_text(m)) == NULL)
				continue;
			if (req_keep(b, text) == NULL || (rm = req_add(b)) == NULL)
				return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			rm->role = MN_REQ_ASSISTANT;
			rm->text = text;
			continue;
		}
		if (e->content == NULL || *e->content == '\0')
			continue;
		if ((rm = req_add(b)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		rm->role = e->role != NULL && strcmp(e->role, "assistant") == 0 ? MN_REQ_ASSISTANT : MN_REQ_USER;
		rm->text = e->content;
	}
	return MNEMO_OK;
}

/* ---- the stream's consumer ------------------------------------------------- */

typedef struct turn_state
{
	mnemo_store *st;
	const char *session_id;
	const turn_cfg *cfg;
	mnemo_turn *turn;
	mnemo_part_fn on_part;
	void	   *arg;
	bool		locked;			/* the session's turn lock is held */
	int64_t		row_seq;
	bool		accepted;		/* the provider accepted the request */
	/* the text or reasoning part being streamed */
	bool		open;
	mn_delta_kind open_kind;
	int			open_block;
	mn_buf		part;
	char	   *signature;
	mn_buf		text;			/* the whole reply's text */
	size_t		cap_calls;
} turn_state;

/*
 * The text or reasoning part in progress: appended at once when a later
 * part begins, or, at the end of the stream, made into `into`, a call of
 * the turn's last batch (into->stmt stays NULL when there is none).
 */
static int
flush_part(turn_state *ts, mn_call *into)
{
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	mn_call		now = {0};
	mn_call    *call = into != NULL ? into : &now;
	json_object *o = NULL;
	int			rc;

	if (!ts->open)
		return MNEMO_OK;
	ts->open = false;
	if (ts->part.len == 0)
		return MNEMO_OK;
	if (ts->open_kind == MN_DELTA_REASONING && ts->signature != NULL)
	{
		/* the signature goes back to Anthropic with the thinking block */
		o = json_object_new_object();
		if (o == NULL ||
			json_object_object_add(o, "type", json_object_new_string("reasoning")) != 0 ||
			json_object_object_add(o, "text", json_object_new_string_len(ts->part.data, (int) ts->part.len)) != 0 ||
			json_object_object_add(o, "signature", json_object_new_string(ts->signature)) != 0)
		{
			json_object_put(o);
			return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
		}
		p.content = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	}
	p.type = ts->open_kind == MN_DELTA_REASONING ? "reasoning" : "text";
	p.text = ts->part.data;
	rc = mn_part_append_call(ts->st, ts->session_id, ts->turn->message_id, &p, call);
	json_object_put(o);
	if (rc == MNEMO_OK && into == NULL)
		rc = mn_call_run(ts->st, call);
	mn_call_clear(&now);
	mn_buf_reset(&ts->part);
	free(ts->signature);
	ts->signature = NULL;
	return rc;
}

static int
add_tool_call(turn_state *ts, const mn_delta *d, const char *input)
{
	mnemo_turn *t = ts->turn;
	mnemo_tool_call *c;
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	char		id[MNEMO_ID_MAX + 1];
	int			rc;

	if ((rc = mnemo_new_id(ts->st, "part", id)) != MNEMO_OK)
		return rc;
	p.type = "tool";
	p.id = id;
	p.tool_name = d->name;
	p.tool_call_id = d->id;
	p.tool_state = "pending";
	p.tool_input = input;
	if ((rc = mnemo_part_append(ts->st, ts->session_id, t->message_id, &p, NULL)) != MNEMO_OK)
		return rc;
	if (t->n_tool_calls == ts->cap_calls)
	{
		size_t		cap = ts->cap_calls ? ts->cap_calls * 2 : 4;
		mnemo_tool_call *g = realloc(t->tool_calls, cap * sizeof(*g));

		if (g == NULL)
			return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
		t->tool_calls = g;
		ts->cap_calls = cap;
	}
	c = &t->tool_calls[t->n_tool_calls];
	memset(c, 0, sizeof(*c));
	t->n_tool_calls++;
	if ((c->part_id = strdup(id)) == NULL || (c->call_id = strdup(d->id)) == NULL ||
		(c->name = strdup(d->name)) == NULL || (c->input = strdup(input)) == NULL)
		return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
	if (ts->on_part != NULL)
	{
		mnemo_stream_part sp = {0};

		sp.type = "tool";
		sp.tool_call_id = d->id;
		sp.tool_name = d->name;
		sp.tool_input = input;
		sp.part_id = id;
		if (ts->on_part(ts->st, &sp, ts->arg) != 0)
			return mn_fail(ts->st, MNEMO_ERR_CANCELLED, "the part callback stopped the turn");
	}
	return MNEMO_OK;
}

/*
 * Append a text delta, each NUL byte as U+FFFD: PostgreSQL's text and jsonb
 * cannot hold U+0000, and a C string would end at it with the rest of the
 * reply lost.  on_part still gets the bytes as they came.
 */
static bool
put_text(mn_buf *b, const char *s, size_t n)
{
	const char *nul;

	while ((nul = memchr(s, '\0', n)) != NULL)
	{
		size_t		k = (size_t) (nul - s);

		if (!mn_buf_put(b, s, k) || !mn_buf_put(b, "\xEF\xBF\xBD", 3))
			return false;
		s += k + 1;
		n -= k + 1;
	}
	return mn_buf_put(b, s, n);
}

static int
on_delta(void *arg, const mn_delta *d)
{
	turn_state *ts = arg;
	mn_delta_kind kind = d->kind == MN_DELTA_REFUSAL ? MN_DELTA_TEXT : d->kind;
	int			rc;

	switch (d->kind)
	{
		case MN_DELTA_TEXT:
		case MN_DELTA_REFUSAL:
		case MN_DELTA_REASONING:
			if (ts->open && (ts->open_kind != kind || ts->open_block != d->block) &&
				(rc = flush_part(ts, NULL)) != MNEMO_OK)
				return rc;
			if (!ts->open)
			{
				ts->open = true;
				ts->open_kind = kind;
				ts->open_block = d->block;
			}
			if (!put_text(&ts->part, d->text, d->len) ||
				(kind == MN_DELTA_TEXT && !put_text(&ts->text, d->text, d->len)))
				return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
			if (ts->on_part != NULL)
			{
				mnemo_stream_part sp = {0};

				sp.type = kind == MN_DELTA_TEXT ? "text" : "reasoning";
				sp.delta = d->text;
				sp.len = d->len;
				if (ts->on_part(ts->st, &sp, ts->arg) != 0)
					return mn_fail(ts->st, MNEMO_ERR_CANCELLED, "the part callback stopped the turn");
			}
			return MNEMO_OK;
		case MN_DELTA_REASONING_SIGNATURE:
			free(ts->signature);
			if ((ts->signature = strndup(d->text, d->len)) == NULL)
				return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
			return MNEMO_OK;
		case MN_DELTA_TOOL_START:
			return flush_part(ts, NULL);
		case MN_DELTA_TOOL_END:
			if ((rc = flush_part(ts, NULL)) != MNEMO_OK)
				return rc;
			if (d->input_valid)
				return add_tool_call(ts, d, d->text);
			else
			{
				/* invalid JSON from the model is kept, as a JSON string, for
				 * the caller to answer with an error result */
				json_object *s = json_object_new_string_len(d->text, (int) d->len);

				rc = s ? add_tool_call(ts, d, json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN))
					: mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
				json_object_put(s);
				return rc;
			}
		default:
			return MNEMO_OK;
	}
}

/* ---- after the stream ------------------------------------------------------ */

static double
cost_of(const mnemo_turn_options *o, const char *model, const mnemo_tokens *t)
{
	size_t		i;

	for (i = 0; o->prices != NULL && i < o->n_prices; i++)
		if (o->prices[i].model != NULL && strcmp(o->prices[i].model, model) == 0)
			return ((double) t->input * o->prices[i].input +
					(double) t->output * o->prices[i].output +
					(double) t->cache_read * o->prices[i].cache_read +
					(double) t->cache_write * o->prices[i].cache_write) / 1e6;
	return 0;
}

/* The assembled context's size: what a turn would send, summaries too. */
static int64_t
context_size(const mnemo_context_budget *r)
{
	return r->summary_tokens + r->included_tokens + r->omitted_tokens;
}

/*
 * The same tool call (name and input) doom_loop_threshold times in a row,
 * looking back across the session's stored tool parts, ending with this
 * turn's last call.
 */
static int
check_doom_loop(mnemo_store *st, const char *sid, const turn_cfg *c, turn_state *ts)
{
	mnemo_messages *h = NULL;
	const mnemo_tool_call *last;
	int			count = 0;
	size_t		i,
				j;
	const char *input = NULL;
	int			rc;
	bool		broke = false;

	if (ts->turn->n_tool_calls == 0)
		return MNEMO_OK;
	last = &ts->turn->tool_calls[ts->turn->n_tool_calls - 1];
	if ((rc = mnemo_history(st, sid, c->doom * 4 + 4, &h)) != MNEMO_OK)
		return rc;
	for (i = h->count; i-- > 0 && !broke;)
	{
		const mnemo_message *m = &h->items[i];

		for (j = m->n_parts; j-- > 0;)
		{
			const mnemo_part *p = &m->parts[j];

			if (strcmp(p->type, "tool") != 0)
				continue;
			/* the stored input, as the server prints it, for all of them */
			if (input == NULL)
				input = p->tool_input ? p->tool_input : "";
			if (p->tool_name == NULL || strcmp(p->tool_name, last->name) != 0 ||
				strcmp(p->tool_input ? p->tool_input : "", input) != 0)
			{
				broke = true;
				break;
			}
			count++;
		}
	}
	if (count >= c->doom)
	{
		json_object *o = json_object_new_object();

		ts->turn->doom_loop = true;
		if (o != NULL)
		{
			json_object_object_add(o, "tool", json_object_new_string(last->name));
			json_object_object_add(o, "input", json_object_new_string(last->input));
			json_object_object_add(o, "count", json_object_new_int(count));
		}
		mn_emit(st, MNEMO_EVENT_DOOM_LOOP_DETECTED, sid, ts->turn->message_id, ts->row_seq,
				o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL, false);
		json_object_put(o);
	}
	mnemo_messages_free(h);
	return MNEMO_OK;
}

/* ---- the turn -------------------------------------------------------------- */

static const mn_stmt begin_stmt = {"mnemo_begin", "BEGIN", 0};
static const mn_stmt commit_stmt = {"mnemo_commit", "COMMIT", 0};

static void
lock_call(mn_call *call, const mn_stmt *stmt, const char *sid)
{
	call->stmt = stmt;
	call->params[0] = MN_TURN_LOCK_SPACE;
	call->params[1] = sid;
}

static int
lock_session(mnemo_store *st, const mn_stmt *stmt, const char *sid, bool *got)
{
	mn_call		call = {0};
	int			rc;

	lock_call(&call, stmt, sid);
	if ((rc = mn_call_run(st, &call)) == MNEMO_OK && got != NULL)
		*got = PQntuples(call.res) == 1 && strcmp(PQgetvalue(call.res, 0, 0), "t") == 0;
	mn_call_clear(&call);
	return rc;
}

static void
clear_calls(mn_call *calls, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mn_call_clear(&calls[i]);
}

/* The turn's context: what build_context assembles, and its assistant
 * messages with their parts, to send tool calls structured. */
typedef struct turn_context
{
	mnemo_context *ctx;
	mnemo_messages *msgs;
} turn_context;

static int
context_of(mnemo_store *st, mn_call *build, mn_call *messages, turn_context *tc)
{
	int			rc;

	mnemo_context_free(tc->ctx);
	mnemo_messages_free(tc->msgs);
	tc->ctx = NULL;
	tc->msgs = NULL;
	if ((rc = mn_context_of(st, build, &tc->ctx)) != MNEMO_OK)
		return rc;
	return mn_messages_of(st, messages, &tc->msgs);
}

/*
 * Steps 1 to 3 in two round trips and one commit: the turn lock; then, in
 * one transaction, the user message, the context's size and the context;
 * then the assistant row and the commit, so that the user turn and the row
 * are durable before the provider is called.  Over the hard threshold the
 * user turn is committed alone, the blocking compaction hook runs, and the
 * context is read again before the row is written.
 */
static int
begin_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *o, const turn_cfg *c,
		   const mnemo_new_message *user, turn_state *ts, turn_context *tc)
{
	mn_call		a[6] = {{0}};
	mn_call		b[2] = {{0}};
	mnemo_new_message row = {0};
	mnemo_message_ref user_ref = {0},
				row_ref;
	mnemo_context_budget report;
	size_t		na = 0,
				i_user = 0,
				i_report,
				i_build;
	bool		in_txn = false;
	int64_t		size;
	int			rc;

	lock_call(&a[na++], &lock_stmt, sid);
	a[na++].stmt = &begin_stmt;
	if (user != NULL && (rc = mn_message_append_call(st, sid, user, &a[i_user = na++])) != MNEMO_OK)
		goto done;
	if ((rc = mn_context_report_call(st, sid, c->available, &a[i_report = na++])) != MNEMO_OK ||
		(rc = mn_context_build_call(st, sid, c->available, &a[i_build = na++])) != MNEMO_OK ||
		(rc = mn_context_messages_call(st, sid, c->available, &a[na++])) != MNEMO_OK)
		goto done;
	rc = mn_exec_batch(st, a, na);
	ts->locked = a[0].res != NULL;
	if (rc != MNEMO_OK)
		goto done;
	in_txn = true;
	if ((user != NULL && (rc = mn_message_ref_of(st, &a[i_user], &user_ref)) != MNEMO_OK) ||
		(rc = mn_context_report_of(st, &a[i_report], &report)) != MNEMO_OK ||
		(rc = context_of(st, &a[i_build], &a[i_build + 1], tc)) != MNEMO_OK)
		goto done;
	if (user != NULL)
		memcpy(ts->turn->user_message_id, user_ref.id, sizeof(user_ref.id));
	size = context_size(&report);

	row.role = "assistant";
	row.model_id = c->model;
	row.provider_id = c->provider_name;
	if (size > c->available && o->compact != NULL)
	{
		int			hook;

		b[0].stmt = &commit_stmt;
		rc = mn_call_run(st, &b[0]);
		in_txn = false;
		if (rc != MNEMO_OK)
			goto done;
		if (user != NULL)
			mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, user_ref.id, user_ref.seq, NULL, false);
		user = NULL;
		if ((hook = o->compact(st, sid, true, o->compact_arg)) != 0)
		{
			rc = mn_fail(st, MNEMO_ERR_CANCELLED,
						 "the compaction hook failed (%d) with the context over its budget (%lld of %d tokens)",
						 hook, (long long) size, c->available);
			goto done;
		}
		clear_calls(a, na);
		clear_calls(b, 2);
		if ((rc = mn_context_build_call(st, sid, c->available, &a[0])) != MNEMO_OK ||
			(rc = mn_context_messages_call(st, sid, c->available, &a[1])) != MNEMO_OK ||
			(rc = mn_exec_batch(st, a, 2)) != MNEMO_OK ||
			(rc = context_of(st, &a[0], &a[1], tc)) != MNEMO_OK ||
			(rc = mn_message_append_call(st, sid, &row, &b[0])) != MNEMO_OK ||
			(rc = mn_call_run(st, &b[0])) != MNEMO_OK)
			goto done;
	}
	else
	{
		if ((rc = mn_message_append_call(st, sid, &row, &b[0])) != MNEMO_OK)
			goto done;
		b[1].stmt = &commit_stmt;
		rc = mn_exec_batch(st, b, 2);
		in_txn = false;			/* committed, or rolled back by the batch */
		if (rc != MNEMO_OK)
			goto done;
	}
	if ((rc = mn_message_ref_of(st, &b[0], &row_ref)) != MNEMO_OK)
		goto done;
	if (user != NULL)
		mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, user_ref.id, user_ref.seq, NULL, false);
	memcpy(ts->turn->message_id, row_ref.id, sizeof(row_ref.id));
	ts->row_seq = row_ref.seq;
	mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, row_ref.id, row_ref.seq, NULL, false);

done:
	if (in_txn)
	{
		/* a result could not be read: nothing of the turn is kept */
		saved_error se = {0};

		save_error(st, rc, &se);
		mn_exec_command(st, "ROLLBACK");
		rc = restore_error(st, &se);
	}
	clear_calls(a, na);
	clear_calls(b, 2);
	return rc;
}

/* Steps 4 to 6: the request for the context, and its stream.  Deltas reach
 * on_delta, which calls on_part and appends each part that completes before
 * the last. */
static int
stream_turn(mnemo_store *st, const mnemo_turn_options *o, const turn_cfg *c,
			const mnemo_session *s, const turn_context *tc, turn_state *ts, mn_stream *stream)
{
	req_build	b = {0};
	mn_request	req = {0};
	mn_http_post post = {0};
	char	   *body = NULL;
	char	   *why = NULL;
	size_t		body_len = 0;
	int			rc;

	if ((rc = build_messages(st, tc->ctx, tc->msgs, c->provider, &b)) != MNEMO_OK)
		goto done;
	req.model = c->model;
	req.system = s->system_prompt;
	req.messages = b.msgs;
	req.n_messages = b.n;
	req.tools = o->tools;
	req.max_output_tokens = c->max_output;
	rc = mn_request_body(c->provider, &req, &body, &body_len, &why);
	if (rc != MNEMO_OK)
	{
		rc = rc == MNEMO_ERR_NOMEM ? mn_fail(st, rc, "out of memory")
			: mn_fail(st, rc, "%s", why ? why : "bad request");
		goto done;
	}

	post.provider = c->provider;
	post.url = c->url;
	post.api_key = c->api_key;
	post.body = body;
	post.body_len = body_len;
	post.connect_timeout_ms = c->connect_ms;
	post.idle_timeout_ms = c->idle_ms;
	post.max_retries = c->retries;
	post.stream = stream;
	rc = mn_http_send(st, &post, &ts->accepted);
	if (rc == MNEMO_OK)
	{
		mn_stream_state state = mn_stream_end(stream);
		const mn_stream_error *err = mn_stream_error_of(stream);

		if (state == MN_STREAM_FAILED && err != NULL && err->kind == MN_STREAM_ERR_PROVIDER)
		{
			char	   *m = strstr(err->message, c->api_key) ? NULL : strdup(err->message);

			rc = mn_fail(st, MNEMO_ERR_STREAM, "the provider sent an error mid-stream (%s): %s",
						 mn_errclass_name(err->errclass), m ? m : "(message withheld)");
			free(m);
		}
		else if (state == MN_STREAM_FAILED)
			rc = mn_fail(st, err && err->kind == MN_STREAM_ERR_NOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_STREAM,
						 "the provider's stream could not be read: %s", err ? err->message : "?");
		else if (state == MN_STREAM_INTERRUPTED)
			rc = mn_fail(st, MNEMO_ERR_STREAM, "the stream ended before its last event");
	}

done:
	free(body);
	free(why);
	req_free(&b);
	return rc;
}

/*
 * Step 6's writes in one round trip: the last part, then usage, cost and
 * finish reason, committed together; then, in a second transaction, the
 * context's size for the soft threshold and the unlock.  What streamed is
 * kept whatever ended the stream (rc, the stream's outcome): the finish
 * reason is then "error" or "cancelled".  *size is -1 when unread.
 */
static int
finish_turn(mnemo_store *st, const mnemo_turn_options *o, const turn_cfg *c, turn_state *ts,
			mn_stream *stream, int rc, int64_t *size)
{
	mn_call		d[4] = {{0}};
	saved_error se = {0};
	mnemo_tokens tok = {0};
	mnemo_context_budget report;
	const char *finish;
	const char *raw = NULL;
	size_t		nd = 0,
				i_report;
	int			rc2,
				rc3;

	*size = -1;
	if (rc != MNEMO_OK)
		save_error(st, rc, &se);
	rc2 = flush_part(ts, &d[nd]);
	if (d[nd].stmt != NULL)
		nd++;
	if (stream != NULL)
		mn_stream_usage(stream, &tok);
	ts->turn->tokens = tok;
	ts->turn->cost = cost_of(o, c->model, &tok);
	if (rc == MNEMO_OK)
		finish = mn_finish_name(mn_stream_finish(stream, &raw));
	else
		finish = rc == MNEMO_ERR_CANCELLED ? "cancelled" : "error";
	if (finish == NULL)
		finish = "stop";
	if ((ts->turn->finish_reason = strdup(finish)) == NULL && rc2 == MNEMO_OK)
		rc2 = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (rc2 == MNEMO_OK)
		rc2 = mn_message_update_tokens_call(st, ts->session_id, ts->turn->message_id, &tok,
											ts->turn->cost, finish,
											&d[nd++]);
	if (rc2 != MNEMO_OK)
	{
		/* the row keeps no finish reason: the next load marks it */
		clear_calls(d, nd);
		nd = 0;
	}
	else
		d[nd - 1].sync = true;
	rc3 = mn_context_report_call(st, ts->session_id, c->available, &d[i_report = nd++]);
	lock_call(&d[nd++], &unlock_stmt, ts->session_id);
	if (rc3 == MNEMO_OK)
		rc3 = mn_exec_batch(st, d, nd);
	ts->locked = d[nd - 1].res == NULL;
	if (rc3 == MNEMO_OK)
		rc3 = mn_context_report_of(st, &d[i_report], &report);
	if (rc3 == MNEMO_OK)
		*size = context_size(&report);
	else if (rc2 == MNEMO_OK)
		rc2 = rc3;
	clear_calls(d, nd);
	if (rc != MNEMO_OK)
		return restore_error(st, &se);
	return rc2;
}

static int
run_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *o, const turn_cfg *c,
		 const mnemo_session *s, const char *text, const mnemo_new_part *parts, size_t n_parts,
		 turn_state *ts)
{
	mnemo_new_message user = {0};
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	turn_context tc = {0};
	mn_stream  *stream = NULL;
	int64_t		size;
	int			rc;

	user.role = "user";
	if (text != NULL)
	{
		p.type = "text";
		p.text = text;
		user.parts = &p;
		user.n_parts = 1;
	}
	else
	{
		user.parts = parts;
		user.n_parts = n_parts;
	}

	/* 1 to 3: the user turn, the hard threshold, the context, the row */
	if ((rc = begin_turn(st, sid, o, c, text != NULL || n_parts > 0 ? &user : NULL, ts,
						 &tc)) != MNEMO_OK)
		goto done;

	/* 4 to 6 */
	if ((stream = mn_stream_new(c->provider, NULL, on_delta, ts)) == NULL)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else
		rc = stream_turn(st, o, c, s, &tc, ts, stream);
	if ((rc = finish_turn(st, o, c, ts, stream, rc, &size)) != MNEMO_OK)
		goto done;

	/* 7. over the soft threshold, compaction in the background */
	if ((double) size > c->soft * c->available)
	{
		ts->turn->compaction_triggered = true;
		mn_emit(st, MNEMO_EVENT_COMPACTION_TRIGGERED, sid, NULL, 0, NULL, false);
		if (o->compact != NULL && o->compact(st, sid, false, o->compact_arg) != 0)
			mn_emit(st, MNEMO_EVENT_COMPACTION_FAILED, sid, NULL, 0, NULL, false);
		mn_clear_error(st);
	}

	/* 8. the doom loop */
	rc = check_doom_loop(st, sid, c, ts);

done:
	if (ts->locked)
	{
		saved_error se = {0};
		int			rc2;

		if (rc != MNEMO_OK)
			save_error(st, rc, &se);
		rc2 = lock_session(st, &unlock_stmt, sid, NULL);
		ts->locked = false;
		rc = rc != MNEMO_OK ? restore_error(st, &se) : rc2;
	}
	mn_stream_free(stream);
	mnemo_context_free(tc.ctx);
	mnemo_messages_free(tc.msgs);
	return rc;
}

MNEMO_API int
mnemo_session_send(mnemo_store *st, const char *session_id, const mnemo_turn_options *opts,
				   const char *text, const mnemo_new_part *parts, size_t n_parts,
				   mnemo_part_fn on_part, void *arg, mnemo_turn **turn)
{
	static const mnemo_turn_options defaults = {0};
	const mnemo_turn_options *o = opts ? opts : &defaults;
	mnemo_session *s = NULL;
	turn_cfg	c = {0};
	turn_state	ts = {0};
	int			rc;

	if (turn != NULL)
		*turn = NULL;
	if ((rc = mn_begin(st, session_id != NULL && !(text != NULL && n_parts > 0) &&
					   (n_parts == 0 || parts != NULL),
					   "mnemo_session_send: a session id, and text or parts (not both)")) != MNEMO_OK)
		return rc;
	if ((rc = mnemo_session_get(st, session_id, &s)) != MNEMO_OK)
		return rc;
	if ((rc = resolve(st, o, s, &c)) != MNEMO_OK ||
		(rc = mn_http_begin(st)) != MNEMO_OK)
		goto out;
	if ((ts.turn = calloc(1, sizeof(*ts.turn))) == NULL)
	{
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		goto out;
	}
	ts.st = st;
	ts.session_id = session_id;
	ts.cfg = &c;
	ts.on_part = on_part;
	ts.arg = arg;

	rc = run_turn(st, session_id, o, &c, s, text, parts, n_parts, &ts);
	if ((ts.turn->text = strdup(ts.text.data ? ts.text.data : "")) == NULL && rc == MNEMO_OK)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	/* a turn whose stream began is the caller's, also when it failed */
	if (turn != NULL && ts.accepted && ts.turn->text != NULL)
	{
		*turn = ts.turn;
		ts.turn = NULL;
	}
out:
	mnemo_turn_free(ts.turn);
	mn_buf_free(&ts.part);
	mn_buf_free(&ts.text);
	free(ts.signature);
	free(c.url);
	free(c.model);
	mnemo_session_free(s);
	return rc;
}

MNEMO_API int
mnemo_session_load(mnemo_store *st, const char *id, mnemo_session **out)
{
	mnemo_messages *msgs = NULL;
	bool		got = false;
	int			rc;
	size_t		i;

	if (out != NULL)
		*out = NULL;
	if ((rc = mn_begin(st, id != NULL && out != NULL, "mnemo_session_load: id and out are required")) != MNEMO_OK)
		return rc;
	/* without the lock a turn is streaming on this session somewhere: its
	 * row is alive */
	if ((rc = lock_session(st, &try_lock_stmt, id, &got)) != MNEMO_OK)
		return rc;
	if (got)
	{
		saved_error se = {0};

		rc = mnemo_messages_get(st, id, NULL, false, &msgs);
		for (i = 0; rc == MNEMO_OK && i < msgs->count; i++)
		{
			const mnemo_message *m = &msgs->items[i];

			if (strcmp(m->role, "assistant") == 0 && !m->is_summary && m->finish_reason == NULL)
				rc = mnemo_message_update_tokens(st, id, m->id, NULL, -1, "interrupted");
		}
		mnemo_messages_free(msgs);
		if (rc != MNEMO_OK)
			save_error(st, rc, &se);
		if (lock_session(st, &unlock_stmt, id, NULL) != MNEMO_OK && rc == MNEMO_OK)
			return st->errcode;
		if (rc != MNEMO_OK)
			return restore_error(st, &se);
	}
	return mnemo_session_get(st, id, out);
}
