/*
 * script.c: reading a provider-server script.
 *
 * A script is a text file of directives, one per line; `reply` starts the
 * next reply and the directives after it describe that reply.  Directives
 * before the first `reply` are defaults: they are replayed at the start of
 * every reply, so a reply can still override them.  Tokens are bare words,
 * JSON string literals ("a\"b\n") or key=value pairs whose value is a bare
 * word or a JSON string literal.  `#` outside a string starts a comment.
 * The format is documented with examples in doc/wire-formats.md ("The local provider server").
 *
 * A line's tokens and typed arguments are script_line.c's.
 *
 * Everything is checked here, at load time, so that a typo in a test's
 * script fails the test at once with file:line instead of producing a
 * plausible but wrong stream.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
is_utf8_cont(const char *s, size_t len, size_t i)
{
	return i < len && ((unsigned char) s[i] & 0xC0) == 0x80;
}

/* move a cut forward out of the middle of a UTF-8 sequence */
static size_t
char_boundary(const char *s, size_t len, size_t i)
{
	if (i > len)
		return len;
	while (is_utf8_cont(s, len, i))
		i++;
	return i;
}

/*
 * The pieces of an item: the positional strings as given (several strings =
 * several deltas), or one string cut by pieces=N or split=a,b,... .  Deltas
 * are cut only between characters: the APIs never split a character across
 * two JSON strings (the wire chunking does split inside them).
 */
static void
take_pieces(line_ctx *lc, item *it, size_t first_pos, const char *what)
{
	size_t		nstr = line_npos(lc) - (first_pos - 1);
	const token *pieces = line_kv(lc, "pieces");
	const token *split = line_kv(lc, "split");
	buf			all = {0};
	size_t	   *cuts;
	size_t		n = 0;

	if (nstr == 0)
		line_fail(lc, "%s: missing its text (a \"string\")", what);
	cuts = xmalloc((nstr + 1) * sizeof(size_t));
	cuts[n++] = 0;
	for (size_t i = 0; i < nstr; i++)
	{
		const token *t = line_pos(lc, first_pos + i);

		if (!t->quoted)
			line_fail(lc, "%s: text must be a \"quoted string\", got '%s'", what, t->val);
		buf_put(&all, t->val, t->len);
		cuts[n++] = all.len;
	}
	if ((pieces || split) && nstr > 1)
		line_fail(lc, "%s: pieces= and split= cut one string; give one string or several, not both", what);
	if (pieces && split)
		line_fail(lc, "%s: pieces= and split= together", what);
	if (pieces)
	{
		long long	k = line_to_ll(lc, pieces, "pieces", 1, 100000000);
		size_t		chars = 0;

		for (size_t i = 0; i < all.len; i++)
			if (!is_utf8_cont(all.p, all.len, i))
				chars++;
		if ((size_t) k > chars && chars > 0)
			k = (long long) chars;
		free(cuts);
		cuts = xmalloc(((size_t) k + 1) * sizeof(size_t));
		n = 0;
		cuts[n++] = 0;
		for (long long i = 1; i < k; i++)
		{
			size_t		c = char_boundary(all.p, all.len, (size_t) ((double) all.len * (double) i / (double) k));

			if (c > cuts[n - 1] && c < all.len)
				cuts[n++] = c;
		}
		cuts[n++] = all.len;
	}
	else if (split)
	{
		size_t		nsizes;
		long	   *sizes = line_to_list(lc, split, "split", 0, &nsizes);
		size_t		at = 0;

		free(cuts);
		cuts = xmalloc((nsizes + 2) * sizeof(size_t));
		n = 0;
		cuts[n++] = 0;
		for (size_t i = 0; i < nsizes; i++)
		{
			/* sizes past the end of the text add no empty pieces */
			if (i > 0 && at == all.len)
				break;
			at = char_boundary(all.p, all.len, at + (size_t) sizes[i]);
			cuts[n++] = at;
		}
		if (at < all.len)
			cuts[n++] = all.len;
		free(sizes);
	}
	it->text = all.p ? all.p : xstrdup("");
	it->len = all.len;
	it->cuts = cuts;
	it->npieces = n - 1;
}

static const char *const default_words[] = {
	"the", "store", "keeps", "every", "message", "of", "an", "agent",
	"session", "in", "order", "and", "streams", "each", "reply", "as",
	"it", "arrives", "from", "a", "model", "so", "nothing", "is", "lost"
};

static item *
new_item(reply *r, item_kind kind)
{
	item	   *it;

	r->items = xrealloc(r->items, (r->nitems + 1) * sizeof(item));
	it = &r->items[r->nitems++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->index = -1;
	return it;
}

static void
add_inserts(line_ctx *lc, reply *r, insert_kind kind, const token *list)
{
	size_t		n;
	long	   *at = line_to_list(lc, list, lc->tok[0].val, 0, &n);

	r->inserts = xrealloc(r->inserts, (r->ninserts + n) * sizeof(insert));
	for (size_t i = 0; i < n; i++)
	{
		insert	   *in = &r->inserts[r->ninserts++];

		memset(in, 0, sizeof(*in));
		in->kind = kind;
		in->at = at[i];
	}
	free(at);
}

static void
add_header(reply *r, const char *line)
{
	r->headers = xrealloc(r->headers, (r->nheaders + 1) * sizeof(header));
	r->headers[r->nheaders++].line = xstrdup(line);
}

static void
take_cutpoint(line_ctx *lc, cutpoint *c)
{
	const token *at = line_kv(lc, "at");
	const token *byte = line_kv(lc, "byte");

	if ((at == NULL) == (byte == NULL))
		line_fail(lc, "%s: give exactly one of at=EVENTS or byte=BYTES", lc->tok[0].val);
	c->set = true;
	c->at = at ? (long) line_to_ll(lc, at, "at", 0, LONG_MAX) : -1;
	c->byte = byte ? (long) line_to_ll(lc, byte, "byte", 0, LONG_MAX) : -1;
}

static void
set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

static bool
is_word(const line_ctx *lc, size_t i, const char *w)
{
	return i < lc->ntok && lc->tok[i].kind == TOK_WORD && strcmp(lc->tok[i].val, w) == 0;
}

/* ---- directives -------------------------------------------------------- */

static bool
is_content_directive(const char *d)
{
	return strcmp(d, "text") == 0 || strcmp(d, "thinking") == 0 ||
		strcmp(d, "tool") == 0 || strcmp(d, "text_tokens") == 0 ||
		strcmp(d, "raw") == 0;
}

static void
directive(line_ctx *lc, reply *r)
{
	const char *d = lc->tok[0].val;
	const token *t;

	lc->used[0] = true;
	if (lc->tok[0].kind != TOK_WORD)
		line_fail(lc, "a line must start with a directive name");

	/* content */
	if (strcmp(d, "text") == 0)
		take_pieces(lc, new_item(r, ITEM_TEXT), 1, "text");
	else if (strcmp(d, "thinking") == 0)
	{
		item	   *it = new_item(r, ITEM_THINKING);
		const token *sig = line_kv(lc, "signature");

		take_pieces(lc, it, 1, "thinking");
		if (sig == NULL)
			it->signature = xstrdup("EqQBCkYIARgCIkBmYWtlIHNpZ25hdHVyZSBmcm9tIHByb3ZpZGVyLXNlcnZlcg==");
		else if (!(sig->quoted == false && strcmp(sig->val, "none") == 0))
			it->signature = xstrdup(sig->val);
	}
	else if (strcmp(d, "tool") == 0)
	{
		item	   *it = new_item(r, ITEM_TOOL);
		const token *name = line_need_pos(lc, 1, "tool name");
		const token *id = line_kv(lc, "id");
		const token *index = line_kv(lc, "index");

		it->name = xstrdup(name->val);
		if (line_npos(lc) != 2)
			line_fail(lc, "tool: expected a name and one \"arguments\" string");
		take_pieces(lc, it, 2, "tool");
		if (id)
			it->id = xstrdup(id->val);
		if (index)
			it->index = (long) line_to_ll(lc, index, "index", 0, 1000000);
	}
	else if (strcmp(d, "text_tokens") == 0)
	{
		long long	n = line_to_ll(lc, line_need_pos(lc, 1, "a token count"), "text_tokens", 1, 10000000);
		item	   *it = new_item(r, ITEM_TEXT);
		buf			b = {0};
		const size_t nwords = sizeof(default_words) / sizeof(default_words[0]);

		/* one word per delta, as a model emits one token per chunk */
		it->cuts = xmalloc(((size_t) n + 1) * sizeof(size_t));
		it->cuts[0] = 0;
		for (long long i = 0; i < n; i++)
		{
			if (i > 0)
				buf_put(&b, " ", 1);
			buf_puts(&b, default_words[(size_t) i % nwords]);
			it->cuts[i + 1] = b.len;
		}
		it->text = b.p;
		it->len = b.len;
		it->npieces = (size_t) n;
	}
	else if (strcmp(d, "raw") == 0)
	{
		t = line_need_pos(lc, 1, "its bytes (a \"string\")");
		if (!t->quoted)
			line_fail(lc, "raw: the bytes must be a \"quoted string\"");
		r->raws = xrealloc(r->raws, (r->nraws + 1) * sizeof(buf));
		memset(&r->raws[r->nraws], 0, sizeof(buf));
		buf_put(&r->raws[r->nraws++], t->val, t->len);
	}

	/* metadata */
	else if (strcmp(d, "id") == 0)
		set_str(&r->id, line_need_pos(lc, 1, "an id")->val);
	else if (strcmp(d, "model") == 0)
	{
		t = line_need_pos(lc, 1, "a model name (or none)");
		r->model_none = !t->quoted && strcmp(t->val, "none") == 0;
		if (!r->model_none)
			set_str(&r->model, t->val);
	}
	else if (strcmp(d, "created") == 0)
	{
		t = line_need_pos(lc, 1, "Unix seconds (or none)");
		r->created_none = !t->quoted && strcmp(t->val, "none") == 0;
		if (!r->created_none)
		{
			r->created = line_to_ll(lc, t, "created", 0, LLONG_MAX);
			r->created_set = true;
		}
	}
	else if (strcmp(d, "fingerprint") == 0)
		set_str(&r->fingerprint, line_need_pos(lc, 1, "a system_fingerprint")->val);
	else if (strcmp(d, "service_tier") == 0)
		set_str(&r->service_tier, line_need_pos(lc, 1, "a service tier")->val);
	else if (strcmp(d, "logprobs") == 0)
		r->logprobs = true;
	else if (strcmp(d, "refusal") == 0)
		r->refusal = true;
	else if (strcmp(d, "usage_null") == 0)
		r->usage_null = true;
	else if (strcmp(d, "field") == 0)
	{
		const token *name = line_need_pos(lc, 1, "a field name");
		const token *val = line_need_pos(lc, 2, "a JSON value");

		if (!json_valid(val->val, val->len))
			line_fail(lc, "field: '%s' is not a JSON value (quote JSON text: \"\\\"str\\\"\")", val->val);
		r->extras = xrealloc(r->extras, (r->nextras + 1) * sizeof(extra_field));
		r->extras[r->nextras].name = xstrdup(name->val);
		r->extras[r->nextras].json = xstrdup(val->val);
		r->nextras++;
	}
	else if (strcmp(d, "usage") == 0)
	{
		static const char *const keys[] = {"input", "output", "cache_read",
		"cache_write", "reasoning", "start_output"};

		if (is_word(lc, 1, "none"))
		{
			lc->used[1] = true;
			r->usage_none = true;
		}
		else
		{
			r->usage_directive = true;
			r->usage_none = false;
			for (size_t i = 0; i < 6; i++)
				if ((t = line_kv(lc, keys[i])) != NULL)
				{
					r->usage[i] = line_to_ll(lc, t, keys[i], 0, LLONG_MAX / 4);
					r->usage_given |= 1u << i;
				}
		}
	}
	else if (strcmp(d, "delta_usage") == 0)
	{
		t = line_need_pos(lc, 1, "full or output");
		if (strcmp(t->val, "full") == 0)
			r->delta_usage_full = true;
		else if (strcmp(t->val, "output") == 0)
			r->delta_usage_full = false;
		else
			line_fail(lc, "delta_usage: full or output");
	}
	else if (strcmp(d, "finish") == 0)
		set_str(&r->finish, line_need_pos(lc, 1, "a finish reason")->val);
	else if (strcmp(d, "stop_sequence") == 0)
		set_str(&r->stop_sequence, line_need_pos(lc, 1, "the stop sequence")->val);
	else if (strcmp(d, "reasoning_field") == 0)
		set_str(&r->reasoning_field, line_need_pos(lc, 1, "a delta field name")->val);

	/* deviations */
	else if (strcmp(d, "no_done") == 0)
		r->no_done = true;
	else if (strcmp(d, "whole_tools") == 0)
		r->whole_tools = true;
	else if (strcmp(d, "interleave_tools") == 0)
		r->interleave_tools = true;
	else if (strcmp(d, "tool_index_base") == 0)
		r->tool_index_base = (long) line_to_ll(lc, line_need_pos(lc, 1, "a number"), "tool_index_base", 0, 1000000);
	else if (strcmp(d, "include_usage") == 0)
	{
		t = line_need_pos(lc, 1, "request, always or never");
		if (strcmp(t->val, "request") == 0)
			r->include_usage = INCLUDE_USAGE_REQUEST;
		else if (strcmp(t->val, "always") == 0)
			r->include_usage = INCLUDE_USAGE_ALWAYS;
		else if (strcmp(t->val, "never") == 0)
			r->include_usage = INCLUDE_USAGE_NEVER;
		else
			line_fail(lc, "include_usage: request, always or never");
	}
	else if (strcmp(d, "ping") == 0)
	{
		/* replaces the default (and any earlier) ping positions */
		size_t		k = 0;

		for (size_t i = 0; i < r->ninserts; i++)
			if (r->inserts[i].kind != INSERT_PING)
				r->inserts[k++] = r->inserts[i];
		r->ninserts = k;
		r->pings_set = true;
		t = line_need_pos(lc, 1, "none or event positions K,K,...");
		if (!(strcmp(t->val, "none") == 0 && !t->quoted))
			add_inserts(lc, r, INSERT_PING, t);
	}
	else if (strcmp(d, "keepalive") == 0)
		add_inserts(lc, r, INSERT_KEEPALIVE, line_need_pos(lc, 1, "event positions K,K,..."));
	else if (strcmp(d, "insert") == 0)
	{
		const token *at = line_kv(lc, "at");
		insert	   *in;

		t = line_need_pos(lc, 1, "its bytes (a \"string\")");
		if (at == NULL || !t->quoted)
			line_fail(lc, "insert: at=K \"bytes\"");
		r->inserts = xrealloc(r->inserts, (r->ninserts + 1) * sizeof(insert));
		in = &r->inserts[r->ninserts++];
		in->kind = INSERT_RAW;
		in->at = (long) line_to_ll(lc, at, "at", 0, LONG_MAX);
		in->bytes = xmemdup(t->val, t->len);
		in->len = t->len;
	}
	else if (strcmp(d, "line_ending") == 0)
	{
		t = line_need_pos(lc, 1, "lf, crlf or cr");
		if (strcmp(t->val, "lf") == 0)
			r->line_ending = 0;
		else if (strcmp(t->val, "crlf") == 0)
			r->line_ending = 1;
		else if (strcmp(t->val, "cr") == 0)
			r->line_ending = 2;
		else
			line_fail(lc, "line_ending: lf, crlf or cr");
	}

	/* failures */
	else if (strcmp(d, "error") == 0)
	{
		const token *st = line_need_pos(lc, 1, "an HTTP status");

		r->status = (int) line_to_ll(lc, st, "status", 200, 599);
		if ((t = line_kv(lc, "type")))
			set_str(&r->err_type, t->val);
		if ((t = line_kv(lc, "message")))
			set_str(&r->err_message, t->val);
		if ((t = line_kv(lc, "code")))
		{
			free(r->err_code);
			r->err_code = line_to_json_value(t);
		}
		if ((t = line_kv(lc, "param")))
		{
			free(r->err_param);
			r->err_param = line_to_json_value(t);
		}
		if ((t = line_kv(lc, "body")))
			set_str(&r->err_body, t->val);
		if ((t = line_kv(lc, "retry_after")))
		{
			buf			h = {0};

			buf_printf(&h, "retry-after: %s", t->val);
			add_header(r, h.p);
			buf_free(&h);
		}
		if ((t = line_kv(lc, "retry_after_ms")))
		{
			buf			h = {0};

			buf_printf(&h, "retry-after-ms: %s", t->val);
			add_header(r, h.p);
			buf_free(&h);
		}
	}
	else if (strcmp(d, "header") == 0)
	{
		t = line_need_pos(lc, 1, "\"name: value\"");
		if (strchr(t->val, ':') == NULL || strpbrk(t->val, "\r\n") != NULL)
			line_fail(lc, "header: \"name: value\" on one line");
		add_header(r, t->val);
	}
	else if (strcmp(d, "retry_after") == 0 || strcmp(d, "retry_after_ms") == 0)
	{
		buf			h = {0};

		t = line_need_pos(lc, 1, "a value");
		buf_printf(&h, "%s: %s", strcmp(d, "retry_after") == 0 ? "retry-after" : "retry-after-ms", t->val);
		add_header(r, h.p);
		buf_free(&h);
	}
	else if (strcmp(d, "should_retry") == 0)
	{
		t = line_need_pos(lc, 1, "true or false");
		if (strcmp(t->val, "true") != 0 && strcmp(t->val, "false") != 0)
			line_fail(lc, "should_retry: true or false");
		add_header(r, strcmp(t->val, "true") == 0 ? "x-should-retry: true" : "x-should-retry: false");
	}
	else if (strcmp(d, "mid_error") == 0)
	{
		const token *at = line_kv(lc, "at");

		if (at == NULL)
			line_fail(lc, "mid_error: at=K (events sent before the error)");
		r->mid_error = true;
		r->mid_error_at = (long) line_to_ll(lc, at, "at", 0, LONG_MAX);
		if ((t = line_kv(lc, "type")))
			set_str(&r->mid_type, t->val);
		if ((t = line_kv(lc, "message")))
			set_str(&r->mid_message, t->val);
		if ((t = line_kv(lc, "code")))
		{
			free(r->mid_code);
			r->mid_code = line_to_json_value(t);
		}
		if ((t = line_pos(lc, 1)) != NULL)
		{
			if (t->quoted || strcmp(t->val, "done") != 0)
				line_fail(lc, "mid_error: the only word it takes is done (a [DONE] after the error)");
			r->mid_done = true;
		}
	}
	else if (strcmp(d, "truncate") == 0)
	{
		const token *at = line_kv(lc, "at");

		if (at == NULL)
			line_fail(lc, "truncate: at=K (events sent before the clean end)");
		r->truncate_at = (long) line_to_ll(lc, at, "at", 0, LONG_MAX);
	}
	else if (strcmp(d, "drop") == 0)
	{
		take_cutpoint(lc, &r->drop);
		if ((t = line_pos(lc, 1)) != NULL)
		{
			if (t->quoted || strcmp(t->val, "rst") != 0)
				line_fail(lc, "drop: the only word it takes is rst (reset instead of close)");
			r->drop_rst = true;
		}
	}
	else if (strcmp(d, "stall") == 0)
	{
		const token *sec = line_kv(lc, "seconds");
		const token *then = line_kv(lc, "then");
		const token *ka = line_kv(lc, "keepalive_ms");

		take_cutpoint(lc, &r->stall);
		if (sec == NULL)
			line_fail(lc, "stall: seconds=S");
		r->stall_seconds = line_to_double(lc, sec, "seconds");
		r->stall_close = false;
		if (then)
		{
			if (strcmp(then->val, "close") == 0)
				r->stall_close = true;
			else if (strcmp(then->val, "continue") != 0)
				line_fail(lc, "stall: then=continue or then=close");
		}
		r->stall_keepalive_ms = ka ? (long) line_to_ll(lc, ka, "keepalive_ms", 1, LONG_MAX) : 0;
	}
	else if (strcmp(d, "wait_ms") == 0)
		r->wait_ms = (long) line_to_ll(lc, line_need_pos(lc, 1, "milliseconds"), "wait_ms", 0, LONG_MAX);

	/* wire */
	else if (strcmp(d, "chunks") == 0)
	{
		const token *seed = line_kv(lc, "seed");
		const token *max = line_kv(lc, "max");

		t = line_need_pos(lc, 1, "event, all, random or sizes N,N,...");
		free(r->chunk_sizes);
		r->chunk_sizes = NULL;
		r->nchunk_sizes = 0;
		if (strcmp(t->val, "event") == 0)
			r->chunk_mode = CHUNK_EVENT;
		else if (strcmp(t->val, "all") == 0)
			r->chunk_mode = CHUNK_ALL;
		else if (strcmp(t->val, "random") == 0)
		{
			r->chunk_mode = CHUNK_RANDOM;
			r->chunk_seed = seed ? (uint64_t) line_to_ll(lc, seed, "seed", 0, LLONG_MAX) : 1;
			r->chunk_max = max ? (long) line_to_ll(lc, max, "max", 1, 1 << 20) : 16;
		}
		else
		{
			r->chunk_mode = CHUNK_SIZES;
			r->chunk_sizes = line_to_list(lc, t, "chunks", 1, &r->nchunk_sizes);
		}
		if ((seed || max) && r->chunk_mode != CHUNK_RANDOM)
			line_fail(lc, "chunks: seed= and max= go with random");
	}
	else if (strcmp(d, "delay_ms") == 0)
		r->delay_ms = (long) line_to_ll(lc, line_need_pos(lc, 1, "milliseconds"), "delay_ms", 0, LONG_MAX);
	else if (strcmp(d, "framing") == 0)
	{
		t = line_need_pos(lc, 1, "chunked or close");
		if (strcmp(t->val, "chunked") == 0)
			r->framing_close = false;
		else if (strcmp(t->val, "close") == 0)
			r->framing_close = true;
		else
			line_fail(lc, "framing: chunked or close");
	}
	else if (strcmp(d, "repeat") == 0)
	{
		t = line_need_pos(lc, 1, "a count or forever");
		r->repeat = strcmp(t->val, "forever") == 0 ? 0 : (long) line_to_ll(lc, t, "repeat", 1, LONG_MAX);
	}
	else
		line_fail(lc, "unknown directive '%s'", d);
	line_all_used(lc);
}

static void reply_free(reply *r);

static void
reply_init(reply *r, int line)
{
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->repeat = 1;
	r->truncate_at = -1;
	r->drop.at = r->drop.byte = -1;
	r->stall.at = r->stall.byte = -1;
}

static void
reply_check(const char *path, const reply *r)
{
	line_ctx	lc = {.path = path, .lineno = r->line};

	if (r->status && (r->nitems || r->nraws))
		line_fail(&lc, "this reply is an HTTP error (error %d) and has content too", r->status);
	if (r->nraws && r->nitems)
		line_fail(&lc, "raw replaces the generated stream: no text, thinking or tool with it");
	if (r->mid_error && r->truncate_at >= 0)
		line_fail(&lc, "mid_error and truncate both end the stream: pick one");
	if (r->status && (r->mid_error || r->truncate_at >= 0))
		line_fail(&lc, "an HTTP error reply has no stream to cut");
}

void
script_load(script *s, const char *path)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n;
	int			lineno = 0;
	char	  **pre = NULL;		/* preamble lines, replayed per reply */
	int		   *pre_lineno = NULL;
	size_t		npre = 0;

	memset(s, 0, sizeof(*s));
	if (f == NULL)
		die("cannot open script %s: %s", path, strerror(errno));
	while ((n = getline(&line, &cap, f)) != -1)
	{
		line_ctx	lc = {.path = path, .lineno = ++lineno};

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		line_tokenize(&lc, line);
		if (lc.ntok == 0)
		{
			line_tokens_free(&lc);
			continue;
		}
		if (lc.tok[0].kind == TOK_WORD && strcmp(lc.tok[0].val, "reply") == 0)
		{
			reply	   *r;
			const token *label,
					   *rep;

			if (s->nreplies)
				reply_check(path, &s->replies[s->nreplies - 1]);
			s->replies = xrealloc(s->replies, (s->nreplies + 1) * sizeof(reply));
			r = &s->replies[s->nreplies++];
			reply_init(r, lineno);
			lc.used[0] = true;
			if ((label = line_pos(&lc, 1)) != NULL)
				r->label = xstrdup(label->val);
			rep = line_kv(&lc, "repeat");
			line_all_used(&lc);
			for (size_t i = 0; i < npre; i++)
			{
				line_ctx	plc = {.path = path, .lineno = pre_lineno[i]};

				line_tokenize(&plc, pre[i]);
				directive(&plc, r);
				line_tokens_free(&plc);
			}
			if (rep)
				r->repeat = strcmp(rep->val, "forever") == 0 ? 0 : (long) line_to_ll(&lc, rep, "repeat", 1, LONG_MAX);
		}
		else if (s->nreplies == 0)
		{
			/* a default: check it now, replay it at each reply */
			reply		scratch;

			if (lc.tok[0].kind == TOK_WORD && is_content_directive(lc.tok[0].val))
				line_fail(&lc, "%s before the first reply: content belongs to a reply", lc.tok[0].val);
			reply_init(&scratch, lineno);
			directive(&lc, &scratch);
			pre = xrealloc(pre, (npre + 1) * sizeof(char *));
			pre_lineno = xrealloc(pre_lineno, (npre + 1) * sizeof(int));
			pre[npre] = xstrdup(line);
			pre_lineno[npre++] = lineno;
			reply_free(&scratch);
		}
		else
			directive(&lc, &s->replies[s->nreplies - 1]);
		line_tokens_free(&lc);
	}
	if (ferror(f))
		die("reading %s: %s", path, strerror(errno));
	fclose(f);
	free(line);
	for (size_t i = 0; i < npre; i++)
		free(pre[i]);
	free(pre);
	free(pre_lineno);
	if (s->nreplies == 0)
		die("%s: no reply in the script (each response starts with a `reply` line)", path);
	reply_check(path, &s->replies[s->nreplies - 1]);
}

static void
reply_free(reply *r)
{
	for (size_t j = 0; j < r->nitems; j++)
	{
		free(r->items[j].text);
		free(r->items[j].cuts);
		free(r->items[j].name);
		free(r->items[j].id);
		free(r->items[j].signature);
	}
	free(r->items);
	for (size_t j = 0; j < r->nraws; j++)
		buf_free(&r->raws[j]);
	free(r->raws);
	for (size_t j = 0; j < r->nextras; j++)
	{
		free(r->extras[j].name);
		free(r->extras[j].json);
	}
	free(r->extras);
	for (size_t j = 0; j < r->ninserts; j++)
		free(r->inserts[j].bytes);
	free(r->inserts);
	for (size_t j = 0; j < r->nheaders; j++)
		free(r->headers[j].line);
	free(r->headers);
	free(r->label);
	free(r->id);
	free(r->model);
	free(r->fingerprint);
	free(r->service_tier);
	free(r->finish);
	free(r->stop_sequence);
	free(r->reasoning_field);
	free(r->err_type);
	free(r->err_message);
	free(r->err_code);
	free(r->err_param);
	free(r->err_body);
	free(r->mid_type);
	free(r->mid_message);
	free(r->mid_code);
	free(r->chunk_sizes);
}

void
script_free(script *s)
{
	for (size_t i = 0; i < s->nreplies; i++)
		reply_free(&s->replies[i]);
	free(s->replies);
	s->replies = NULL;
	s->nreplies = 0;
}
