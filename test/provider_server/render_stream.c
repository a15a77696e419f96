/*
 * render_stream.c: the streamed responses of render.c, as SSE events: an
 * OpenAI Chat Completions stream (chat.completion.chunk objects, tool calls
 * as argument fragments, the usage chunk) and an Anthropic Messages stream
 * (message_start, content blocks and their deltas, message_delta,
 * message_stop).
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"
#include "render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *
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

void
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

buf *
an_event(evlist *l, const char *name)
{
	buf		   *b = ev_new(l, true);

	buf_printf(b, "event: %s\ndata: ", name);
	return b;
}

void
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

void
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
