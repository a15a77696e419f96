/*
 * render.c: a reply turned into the bytes a provider would send.
 *
 * The field order, spacing and framing follow the examples in
 * shared/PROVIDERS.md byte for byte (test.sh diffs them); the options of a
 * reply add the fields and deviations seen in recorded streams
 * (reference/provider-streaming.md): system_fingerprint, logprobs, usage
 * null, whole tool calls, and so on.
 *
 * A stream is built as a list of events (each one SSE event, ending in a
 * blank line), then pings and inserts are put in, then the list is cut for
 * mid_error/truncate, and only then serialized with the line ending asked
 * for.  The start offset of every event is kept so that the writer can stall
 * or drop "after K events".
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct event
{
	buf			b;
	bool		content;		/* generated: gets the line-ending conversion */
} event;

typedef struct evlist
{
	event	   *ev;
	size_t		n;
	size_t		cap;
} evlist;

/* what every event of one response shares */
typedef struct ctx
{
	const reply *r;
	const request_info *ri;
	char	   *id;
	const char *model;			/* NULL = omitted */
	long long	created;
	bool		has_tools;
	long long	usage[6];
	bool		show_cache;
	bool		show_reasoning;
} ctx;

static buf *
ev_new(evlist *l, bool content)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 64;
		l->ev = xrealloc(l->ev, l->cap * sizeof(event));
	}
	memset(&l->ev[l->n], 0, sizeof(event));
	l->ev[l->n].content = content;
	return &l->ev[l->n++].b;
}

static void
evlist_free(evlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		buf_free(&l->ev[i].b);
	free(l->ev);
	memset(l, 0, sizeof(*l));
}

static size_t
tool_count(const reply *r)
{
	size_t		n = 0;

	for (size_t i = 0; i < r->nitems; i++)
		if (r->items[i].kind == ITEM_TOOL)
			n++;
	return n;
}

size_t
reply_tool_count(const reply *r)
{
	return tool_count(r);
}

static const char *
map_finish(const char *f, dialect d)
{
	static const char *const pairs[][2] = {
		{"stop", "end_turn"}, {"length", "max_tokens"}, {"tool_calls", "tool_use"}
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
	{
		if (d == DIALECT_ANTHROPIC && strcmp(f, pairs[i][0]) == 0)
			return pairs[i][1];
		if (d != DIALECT_ANTHROPIC && strcmp(f, pairs[i][1]) == 0)
			return pairs[i][0];
	}
	return f;
}

/* the finish reason to send, or NULL for `finish none` */
static const char *
finish_reason(const ctx *c)
{
	const char *f = c->r->finish;

	if (f == NULL)
		f = c->has_tools ? "tool_calls" : "stop";
	if (strcmp(f, "none") == 0)
		return NULL;
	return map_finish(f, c->ri->dialect);
}

static void
ctx_init(ctx *c, const reply *r, const request_info *ri)
{
	size_t		pieces = 0;
	buf			id = {0};

	memset(c, 0, sizeof(*c));
	c->r = r;
	c->ri = ri;
	if (r->id)
		buf_puts(&id, r->id);
	else
		buf_printf(&id, ri->dialect == DIALECT_ANTHROPIC ? "msg_%ld" : "chatcmpl-%ld", ri->number);
	c->id = id.p;
	if (r->model_none)
		c->model = NULL;
	else if (r->model)
		c->model = r->model;
	else if (ri->model)
		c->model = ri->model;	/* the APIs echo the requested model */
	else
		c->model = ri->dialect == DIALECT_ANTHROPIC ? "claude-sonnet-4-5" : "gpt-4o-mini";
	c->created = r->created_set ? r->created : (long long) time(NULL);
	c->has_tools = tool_count(r) > 0;
	for (size_t i = 0; i < r->nitems; i++)
		pieces += r->items[i].npieces;

	/* defaults: input ~ a token per 4 request bytes, output = deltas sent */
	c->usage[0] = ri->body_len / 4 ? (long long) (ri->body_len / 4) : 1;
	c->usage[1] = pieces ? (long long) pieces : 1;
	c->usage[5] = 1;
	for (int i = 0; i < 6; i++)
		if (r->usage_given & (1u << i))
			c->usage[i] = r->usage[i];
	c->show_cache = !r->usage_directive || (r->usage_given & (U_CACHE_READ | U_CACHE_WRITE));
	c->show_reasoning = !r->usage_directive || (r->usage_given & U_REASONING);
}

/* ---- OpenAI ------------------------------------------------------------ */

static void
oa_open(buf *b, const ctx *c)
{
	const reply *r = c->r;

	buf_puts(b, "data: {\"id\":");
	buf_json_cstr(b, c->id);
	buf_puts(b, ",\"object\":\"chat.completion.chunk\"");
	if (!r->created_none)
		buf_printf(b, ",\"created\":%lld", c->created);
	if (c->model)
	{
		buf_puts(b, ",\"model\":");
		buf_json_cstr(b, c->model);
	}
	if (r->service_tier)
	{
		buf_puts(b, ",\"service_tier\":");
		buf_json_cstr(b, r->service_tier);
	}
	if (r->fingerprint)
	{
		buf_puts(b, ",\"system_fingerprint\":");
		buf_json_cstr(b, r->fingerprint);
	}
	buf_puts(b, ",\"choices\":[");
}

static void
oa_close(buf *b, const ctx *c, bool usage_chunk)
{
	buf_puts(b, "]");
	if (usage_chunk)
	{
		buf_printf(b, ",\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld",
				   c->usage[0], c->usage[1], c->usage[0] + c->usage[1]);
		if (c->show_cache)
			buf_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%lld}", c->usage[2]);
		if (c->show_reasoning)
			buf_printf(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":%lld}", c->usage[4]);
		buf_puts(b, "}");
	}
	else if (c->r->usage_null)
		buf_puts(b, ",\"usage\":null");
	for (size_t i = 0; i < c->r->nextras; i++)
		buf_printf(b, ",\"%s\":%s", c->r->extras[i].name, c->r->extras[i].json);
	buf_puts(b, "}\n\n");
}

/* one chunk with one choice whose delta is `delta` (a JSON object) */
static void
oa_chunk(evlist *l, const ctx *c, const char *delta, const char *finish)
{
	buf		   *b = ev_new(l, true);

	oa_open(b, c);
	buf_puts(b, "{\"index\":0,\"delta\":");
	buf_puts(b, delta);
	if (c->r->logprobs)
		buf_puts(b, ",\"logprobs\":null");
	buf_puts(b, ",\"finish_reason\":");
	if (finish)
		buf_json_cstr(b, finish);
	else
		buf_puts(b, "null");
	buf_puts(b, "}");
	oa_close(b, c, false);
}

typedef struct frag
{
	char	   *json;			/* one element of delta.tool_calls */
} frag;

typedef struct tool_frags
{
	frag	   *f;
	size_t		n;
} tool_frags;

static char *
tool_id(const ctx *c, const item *it, size_t k, const char *prefix)
{
	buf			b = {0};

	if (it->id)
		buf_puts(&b, it->id);
	else
		buf_printf(&b, "%s%ld", prefix, c->ri->first_tool_id + (long) k);
	return b.p;
}

/* the tool_calls elements of one call: header then argument pieces */
static void
oa_tool_frags(const ctx *c, const item *it, size_t k, tool_frags *tf)
{
	long		index = it->index >= 0 ? it->index : c->r->tool_index_base + (long) k;
	char	   *id = tool_id(c, it, k, "call_");
	buf			b = {0};

	tf->n = 0;
	tf->f = xmalloc((it->npieces + 1) * sizeof(frag));
	if (c->r->whole_tools)
	{
		/* Ollama: the whole call in one chunk, id first */
		buf_puts(&b, "{\"id\":");
		buf_json_cstr(&b, id);
		buf_printf(&b, ",\"index\":%ld,\"type\":\"function\",\"function\":{\"name\":", index);
		buf_json_cstr(&b, it->name);
		buf_puts(&b, ",\"arguments\":");
		buf_json_str(&b, it->text, it->len);
		buf_puts(&b, "}}");
		tf->f[tf->n++].json = b.p;
		free(id);
		return;
	}
	buf_printf(&b, "{\"index\":%ld,\"id\":", index);
	buf_json_cstr(&b, id);
	buf_puts(&b, ",\"type\":\"function\",\"function\":{\"name\":");
	buf_json_cstr(&b, it->name);
	buf_puts(&b, ",\"arguments\":\"\"}}");
	tf->f[tf->n++].json = b.p;
	for (size_t p = 0; p < it->npieces; p++)
	{
		buf			a = {0};

		buf_printf(&a, "{\"index\":%ld,\"function\":{\"arguments\":", index);
		buf_json_str(&a, it->text + it->cuts[p], it->cuts[p + 1] - it->cuts[p]);
		buf_puts(&a, "}}");
		tf->f[tf->n++].json = a.p;
	}
	free(id);
}

static void
oa_tool_delta(evlist *l, const ctx *c, const char *fragment, bool with_role)
{
	buf			d = {0};

	if (with_role)
		buf_printf(&d, "{\"role\":\"assistant\",\"content\":%s,", c->r->whole_tools ? "\"\"" : "null");
	else
		buf_puts(&d, "{");
	buf_puts(&d, "\"tool_calls\":[");
	buf_puts(&d, fragment);
	buf_puts(&d, "]");
	if (with_role && c->r->refusal)
		buf_puts(&d, ",\"refusal\":null");
	buf_puts(&d, "}");
	oa_chunk(l, c, d.p, NULL);
	buf_free(&d);
}

static void
oa_stream(evlist *l, const ctx *c)
{
	const reply *r = c->r;
	bool		role_sent = false;
	bool		tools_done = false;
	bool		usage;
	const char *finish = finish_reason(c);

	if (r->nitems == 0 || r->items[0].kind != ITEM_TOOL)
	{
		oa_chunk(l, c, r->refusal ? "{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}"
				 : "{\"role\":\"assistant\",\"content\":\"\"}", NULL);
		role_sent = true;
	}
	for (size_t i = 0; i < r->nitems; i++)
	{
		const item *it = &r->items[i];

		if (it->kind != ITEM_TOOL)
		{
			const char *field = it->kind == ITEM_TEXT ? "content"
				: (r->reasoning_field ? r->reasoning_field : "reasoning_content");

			for (size_t p = 0; p < it->npieces; p++)
			{
				buf			d = {0};

				buf_printf(&d, "{\"%s\":", field);
				buf_json_str(&d, it->text + it->cuts[p], it->cuts[p + 1] - it->cuts[p]);
				buf_puts(&d, "}");
				oa_chunk(l, c, d.p, NULL);
				buf_free(&d);
			}
			continue;
		}
		if (tools_done)
			continue;

		/*
		 * Tool calls: in order, or (interleave_tools) all calls' fragments
		 * round-robin, each call's own fragments still in order.
		 */
		{
			size_t		ntools = r->interleave_tools ? tool_count(r) : 1;
			tool_frags *tf = xmalloc(ntools * sizeof(tool_frags));
			size_t		k0 = 0,
						t = 0,
						left = 0;

			for (size_t j = 0; j < i; j++)
				if (r->items[j].kind == ITEM_TOOL)
					k0++;
			for (size_t j = i; t < ntools; j++)
				if (r->items[j].kind == ITEM_TOOL)
				{
					oa_tool_frags(c, &r->items[j], k0 + t, &tf[t]);
					left += tf[t].n;
					t++;
				}
			for (size_t round = 0; left > 0; round++)
				for (t = 0; t < ntools; t++)
					if (round < tf[t].n)
					{
						oa_tool_delta(l, c, tf[t].f[round].json, !role_sent);
						role_sent = true;
						left--;
					}
			for (t = 0; t < ntools; t++)
			{
				for (size_t f = 0; f < tf[t].n; f++)
					free(tf[t].f[f].json);
				free(tf[t].f);
			}
			free(tf);
			if (r->interleave_tools)
				tools_done = true;
		}
	}
	if (finish)
		oa_chunk(l, c, "{}", finish);
	usage = !r->usage_none &&
		(r->include_usage == INCLUDE_USAGE_ALWAYS ||
		 (r->include_usage == INCLUDE_USAGE_REQUEST && c->ri->include_usage));
	if (usage)
	{
		buf		   *b = ev_new(l, true);

		oa_open(b, c);
		oa_close(b, c, true);
	}
	if (!r->no_done)
		buf_puts(ev_new(l, true), "data: [DONE]\n\n");
}

/* ---- Anthropic --------------------------------------------------------- */

static buf *
an_event(evlist *l, const char *name)
{
	buf		   *b = ev_new(l, true);

	buf_printf(b, "event: %s\ndata: ", name);
	return b;
}

static void
an_usage(buf *b, const ctx *c, bool input, long long output)
{
	buf_puts(b, "\"usage\":{");
	if (input)
	{
		buf_printf(b, "\"input_tokens\":%lld,", c->usage[0]);
		if (c->show_cache)
			buf_printf(b, "\"cache_creation_input_tokens\":%lld,\"cache_read_input_tokens\":%lld,",
					   c->usage[3], c->usage[2]);
	}
	buf_printf(b, "\"output_tokens\":%lld}", output);
}

static void
an_stream(evlist *l, const ctx *c)
{
	const reply *r = c->r;
	const char *finish = finish_reason(c);
	size_t		k = 0;
	buf		   *b;

	b = an_event(l, "message_start");
	buf_puts(b, "{\"type\":\"message_start\",\"message\":{\"id\":");
	buf_json_cstr(b, c->id);
	buf_puts(b, ",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]");
	if (c->model)
	{
		buf_puts(b, ",\"model\":");
		buf_json_cstr(b, c->model);
	}
	buf_puts(b, ",\"stop_reason\":null,\"stop_sequence\":null");
	if (!r->usage_none)
	{
		buf_puts(b, ",");
		an_usage(b, c, true, c->usage[5]);
	}
	buf_puts(b, "}}\n\n");

	for (size_t i = 0; i < r->nitems; i++)
	{
		const item *it = &r->items[i];
		const char *dtype,
				   *dfield;

		b = an_event(l, "content_block_start");
		buf_printf(b, "{\"type\":\"content_block_start\",\"index\":%zu,\"content_block\":", i);
		switch (it->kind)
		{
			case ITEM_TEXT:
				buf_puts(b, "{\"type\":\"text\",\"text\":\"\"}");
				dtype = "text_delta";
				dfield = "text";
				break;
			case ITEM_THINKING:
				buf_puts(b, "{\"type\":\"thinking\",\"thinking\":\"\"}");
				dtype = "thinking_delta";
				dfield = "thinking";
				break;
			default:
				{
					char	   *id = tool_id(c, it, k++, "toolu_");

					buf_puts(b, "{\"type\":\"tool_use\",\"id\":");
					buf_json_cstr(b, id);
					buf_puts(b, ",\"name\":");
					buf_json_cstr(b, it->name);
					buf_puts(b, ",\"input\":{}}");
					free(id);
					dtype = "input_json_delta";
					dfield = "partial_json";
				}
		}
		buf_puts(b, "}\n\n");
		for (size_t p = 0; p < it->npieces; p++)
		{
			b = an_event(l, "content_block_delta");
			buf_printf(b, "{\"type\":\"content_block_delta\",\"index\":%zu,\"delta\":{\"type\":\"%s\",\"%s\":",
					   i, dtype, dfield);
			buf_json_str(b, it->text + it->cuts[p], it->cuts[p + 1] - it->cuts[p]);
			buf_puts(b, "}}\n\n");
		}
		if (it->kind == ITEM_THINKING && it->signature)
		{
			b = an_event(l, "content_block_delta");
			buf_printf(b, "{\"type\":\"content_block_delta\",\"index\":%zu,\"delta\":{\"type\":\"signature_delta\",\"signature\":", i);
			buf_json_cstr(b, it->signature);
			buf_puts(b, "}}\n\n");
		}
		b = an_event(l, "content_block_stop");
		buf_printf(b, "{\"type\":\"content_block_stop\",\"index\":%zu}\n\n", i);
	}

	b = an_event(l, "message_delta");
	buf_puts(b, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
	if (finish)
		buf_json_cstr(b, finish);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"stop_sequence\":");
	if (r->stop_sequence)
		buf_json_cstr(b, r->stop_sequence);
	else
		buf_puts(b, "null");
	buf_puts(b, "}");
	if (!r->usage_none)
	{
		buf_puts(b, ",");
		an_usage(b, c, r->delta_usage_full, c->usage[1]);
	}
	buf_puts(b, "}\n\n");
	buf_puts(an_event(l, "message_stop"), "{\"type\":\"message_stop\"}\n\n");
}

/* ---- non-streaming ----------------------------------------------------- */

static void
message_json(buf *b, const ctx *c)
{
	const reply *r = c->r;
	const char *finish = finish_reason(c);
	size_t		k = 0;

	if (c->ri->dialect == DIALECT_ANTHROPIC)
	{
		buf_puts(b, "{\"id\":");
		buf_json_cstr(b, c->id);
		buf_puts(b, ",\"type\":\"message\",\"role\":\"assistant\"");
		if (c->model)
		{
			buf_puts(b, ",\"model\":");
			buf_json_cstr(b, c->model);
		}
		buf_puts(b, ",\"content\":[");
		for (size_t i = 0; i < r->nitems; i++)
		{
			const item *it = &r->items[i];

			if (i)
				buf_puts(b, ",");
			if (it->kind == ITEM_TEXT)
			{
				buf_puts(b, "{\"type\":\"text\",\"text\":");
				buf_json_str(b, it->text, it->len);
			}
			else if (it->kind == ITEM_THINKING)
			{
				buf_puts(b, "{\"type\":\"thinking\",\"thinking\":");
				buf_json_str(b, it->text, it->len);
				buf_puts(b, ",\"signature\":");
				buf_json_cstr(b, it->signature ? it->signature : "");
			}
			else
			{
				char	   *id = tool_id(c, it, k++, "toolu_");

				buf_puts(b, "{\"type\":\"tool_use\",\"id\":");
				buf_json_cstr(b, id);
				buf_puts(b, ",\"name\":");
				buf_json_cstr(b, it->name);
				buf_puts(b, ",\"input\":");
				if (it->len && json_valid(it->text, it->len))
					json_minify(b, it->text, it->len);
				else
					buf_puts(b, "{}");
				free(id);
			}
			buf_puts(b, "}");
		}
		buf_puts(b, "],\"stop_reason\":");
		if (finish)
			buf_json_cstr(b, finish);
		else
			buf_puts(b, "null");
		buf_puts(b, ",\"stop_sequence\":");
		if (r->stop_sequence)
			buf_json_cstr(b, r->stop_sequence);
		else
			buf_puts(b, "null");
		if (!r->usage_none)
		{
			buf_puts(b, ",");
			an_usage(b, c, true, c->usage[1]);
		}
		buf_puts(b, "}");
		return;
	}

	{
		buf			text = {0};
		bool		any_text = false;

		buf_puts(b, "{\"id\":");
		buf_json_cstr(b, c->id);
		buf_puts(b, ",\"object\":\"chat.completion\"");
		if (!r->created_none)
			buf_printf(b, ",\"created\":%lld", c->created);
		if (c->model)
		{
			buf_puts(b, ",\"model\":");
			buf_json_cstr(b, c->model);
		}
		buf_puts(b, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
		for (size_t i = 0; i < r->nitems; i++)
			if (r->items[i].kind == ITEM_TEXT)
			{
				buf_put(&text, r->items[i].text, r->items[i].len);
				any_text = true;
			}
		if (any_text)
			buf_json_str(b, text.p, text.len);
		else
			buf_puts(b, "null");
		buf_free(&text);
		buf_puts(b, ",\"refusal\":null");
		if (c->has_tools)
		{
			buf_puts(b, ",\"tool_calls\":[");
			for (size_t i = 0; i < r->nitems; i++)
			{
				const item *it = &r->items[i];
				char	   *id;

				if (it->kind != ITEM_TOOL)
					continue;
				id = tool_id(c, it, k, "call_");
				buf_puts(b, k ? ",{\"id\":" : "{\"id\":");
				buf_json_cstr(b, id);
				buf_puts(b, ",\"type\":\"function\",\"function\":{\"name\":");
				buf_json_cstr(b, it->name);
				buf_puts(b, ",\"arguments\":");
				buf_json_str(b, it->text, it->len);
				buf_puts(b, "}}");
				free(id);
				k++;
			}
			buf_puts(b, "]");
		}
		buf_puts(b, "},\"logprobs\":null,\"finish_reason\":");
		if (finish)
			buf_json_cstr(b, finish);
		else
			buf_puts(b, "null");
		buf_puts(b, "}]");
		if (!r->usage_none)
		{
			buf_printf(b, ",\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld",
					   c->usage[0], c->usage[1], c->usage[0] + c->usage[1]);
			if (c->show_cache)
				buf_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%lld}", c->usage[2]);
			if (c->show_reasoning)
				buf_printf(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":%lld}", c->usage[4]);
			buf_puts(b, "}");
		}
		if (r->service_tier)
		{
			buf_puts(b, ",\"service_tier\":");
			buf_json_cstr(b, r->service_tier);
		}
		if (r->fingerprint)
		{
			buf_puts(b, ",\"system_fingerprint\":");
			buf_json_cstr(b, r->fingerprint);
		}
		buf_puts(b, "}");
	}
}

/* the error event a stream ends with after mid_error */
static void
mid_error_event(evlist *l, const ctx *c)
{
	const reply *r = c->r;
	buf		   *b;

	if (c->ri->dialect == DIALECT_ANTHROPIC)
	{
		b = an_event(l, "error");
		buf_puts(b, "{\"type\":\"error\",\"error\":{\"type\":");
		buf_json_cstr(b, r->mid_type ? r->mid_type : "overloaded_error");
		buf_puts(b, ",\"message\":");
		buf_json_cstr(b, r->mid_message ? r->mid_message : "Overloaded");
		buf_puts(b, "}}\n\n");
		return;
	}
	b = ev_new(l, true);
	buf_puts(b, "data: {\"error\":{\"message\":");
	buf_json_cstr(b, r->mid_message ? r->mid_message
				  : "The server had an error while processing your request. Sorry about that!");
	buf_puts(b, ",\"type\":");
	buf_json_cstr(b, r->mid_type ? r->mid_type : "server_error");
	buf_printf(b, ",\"param\":null,\"code\":%s}}\n\n", r->mid_code ? r->mid_code : "null");
	if (r->mid_done)
		buf_puts(ev_new(l, true), "data: [DONE]\n\n");
}

void
render_keepalive(const request_info *ri, buf *out)
{
	if (ri->dialect == DIALECT_ANTHROPIC)
		buf_puts(out, "event: ping\ndata: {\"type\":\"ping\"}\n\n");
	else
		buf_puts(out, ": keep-alive\n\n");
}

/* ---- assembling -------------------------------------------------------- */

typedef struct ordered_insert
{
	const insert *in;
	size_t		order;			/* script order, to keep the sort stable */
} ordered_insert;

static int
insert_cmp(const void *a, const void *b)
{
	const ordered_insert *x = a;
	const ordered_insert *y = b;

	if (x->in->at != y->in->at)
		return x->in->at < y->in->at ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* put pings, keep-alives and inserts before the content events they name */
static void
apply_inserts(evlist *l, const ctx *c)
{
	const reply *r = c->r;
	insert		def_ping = {.kind = INSERT_PING, .at = 2};
	size_t		n = r->ninserts;
	ordered_insert *ins = xmalloc((n + 1) * sizeof(ordered_insert));
	evlist		out = {0};
	size_t		k = 0;

	for (size_t i = 0; i < r->ninserts; i++)
		ins[i] = (ordered_insert) {&r->inserts[i], i};
	/* the real API pings once, right after the first content block starts */
	if (c->ri->dialect == DIALECT_ANTHROPIC && !r->pings_set && r->nraws == 0)
	{
		ins[n] = (ordered_insert) {&def_ping, n};
		n++;
	}
	if (n == 0)
	{
		free(ins);
		return;
	}
	qsort(ins, n, sizeof(ordered_insert), insert_cmp);
	for (size_t i = 0; i <= l->n; i++)
	{
		for (; k < n && (ins[k].in->at == (long) i || (i == l->n && ins[k].in->at > (long) i)); k++)
		{
			const insert *in = ins[k].in;
			buf		   *b;

			switch (in->kind)
			{
				case INSERT_PING:
					b = ev_new(&out, true);
					if (c->ri->dialect == DIALECT_ANTHROPIC)
						buf_puts(b, "event: ping\ndata: {\"type\":\"ping\"}\n\n");
					else
						buf_puts(b, ": ping\n\n");
					break;
				case INSERT_KEEPALIVE:
					buf_puts(ev_new(&out, true), ": keep-alive\n\n");
					break;
				case INSERT_RAW:
					b = ev_new(&out, false);
					buf_put(b, in->bytes, in->len);
					break;
			}
		}
		if (i < l->n)
		{
			if (out.n == out.cap)
			{
				out.cap = out.cap ? out.cap * 2 : 64;
				out.ev = xrealloc(out.ev, out.cap * sizeof(event));
			}
			out.ev[out.n++] = l->ev[i];
		}
	}
	free(l->ev);
	*l = out;
	free(ins);
}

static void
cut(evlist *l, size_t at)
{
	while (l->n > at)
		buf_free(&l->ev[--l->n].b);
}

static void
serialize(const evlist *l, int line_ending, rendered *out)
{
	out->nevents = l->n;
	out->event_offsets = xmalloc((l->n + 1) * sizeof(size_t));
	for (size_t i = 0; i < l->n; i++)
	{
		const buf  *b = &l->ev[i].b;

		out->event_offsets[i] = out->body.len;
		if (!l->ev[i].content || line_ending == 0)
		{
			buf_put(&out->body, b->p, b->len);
			continue;
		}
		for (size_t j = 0; j < b->len; j++)
		{
			if (b->p[j] != '\n')
				buf_put(&out->body, &b->p[j], 1);
			else if (line_ending == 1)
				buf_put(&out->body, "\r\n", 2);
			else
				buf_put(&out->body, "\r", 1);
		}
	}
	out->event_offsets[l->n] = out->body.len;
}

void
render_reply(const reply *r, const request_info *ri, rendered *out)
{
	ctx			c;
	evlist		l = {0};

	memset(out, 0, sizeof(*out));
	ctx_init(&c, r, ri);
	out->content_type = "text/event-stream; charset=utf-8";
	if (r->nraws)
	{
		for (size_t i = 0; i < r->nraws; i++)
			buf_put(ev_new(&l, false), r->raws[i].p, r->raws[i].len);
	}
	else if (!ri->stream)
	{
		out->content_type = ri->dialect == DIALECT_ANTHROPIC ? "application/json"
			: "application/json; charset=utf-8";
		message_json(ev_new(&l, false), &c);
		serialize(&l, 0, out);
		evlist_free(&l);
		free(c.id);
		return;
	}
	else if (ri->dialect == DIALECT_ANTHROPIC)
		an_stream(&l, &c);
	else
		oa_stream(&l, &c);

	apply_inserts(&l, &c);
	if (r->mid_error)
	{
		cut(&l, (size_t) r->mid_error_at);
		mid_error_event(&l, &c);
	}
	else if (r->truncate_at >= 0)
		cut(&l, (size_t) r->truncate_at);
	serialize(&l, r->line_ending, out);
	evlist_free(&l);
	free(c.id);
}

void
rendered_free(rendered *rd)
{
	buf_free(&rd->body);
	free(rd->event_offsets);
	rd->event_offsets = NULL;
}
