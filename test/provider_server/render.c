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
 * or drop "after K events".  The two streams' events are render_stream.c's;
 * the non-streaming bodies, the error event and the assembling are here.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

buf *
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

size_t
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
const char *
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
