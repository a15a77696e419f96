/*
 * script_line.c: a line of a provider-server script for script.c: its tokens
 * (bare words, JSON string literals, key=value pairs; `#` starts a comment
 * outside a string), the typed arguments a directive takes from them, and
 * the file:line error that ends the load at the first mistake.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void
line_fail(const line_ctx *lc, const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s:%d: ", lc->path, lc->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* ---- tokenizer --------------------------------------------------------- */

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

void
line_tokenize(line_ctx *lc, const char *s)
{
	const char *end = s + strlen(s);
	size_t		cap = 0;

	lc->ntok = 0;
	lc->tok = NULL;
	for (const char *p = s;;)
	{
		token		t = {0};

		while (p < end && is_blank(*p))
			p++;
		if (p >= end || *p == '#')
			break;
		if (*p == '"')
		{
			buf			b = {0};

			if (!json_decode_string(&p, end, &b))
				line_fail(lc, "malformed string literal (JSON syntax: \"...\" with \\ escapes)");
			t.kind = TOK_STRING;
			t.val = b.p;
			t.len = b.len;
			t.quoted = true;
		}
		else
		{
			const char *w = p;

			while (p < end && !is_blank(*p) && *p != '=' && *p != '"')
				p++;
			if (p < end && *p == '=')
			{
				t.kind = TOK_KV;
				t.key = xmemdup(w, (size_t) (p - w));
				p++;
				if (p < end && *p == '"')
				{
					buf			b = {0};

					if (!json_decode_string(&p, end, &b))
						line_fail(lc, "malformed string literal after %s=", t.key);
					t.val = b.p;
					t.len = b.len;
					t.quoted = true;
				}
				else
				{
					const char *v = p;

					while (p < end && !is_blank(*p))
						p++;
					t.val = xmemdup(v, (size_t) (p - v));
					t.len = (size_t) (p - v);
				}
			}
			else
			{
				if (p < end && *p == '"')
					line_fail(lc, "a string literal must be preceded by a blank or key=");
				t.kind = TOK_WORD;
				t.val = xmemdup(w, (size_t) (p - w));
				t.len = (size_t) (p - w);
			}
		}
		if (p < end && !is_blank(*p) && *p != '#')
			line_fail(lc, "expected a blank after a token");
		if (lc->ntok == cap)
		{
			cap = cap ? cap * 2 : 8;
			lc->tok = xrealloc(lc->tok, cap * sizeof(token));
		}
		lc->tok[lc->ntok++] = t;
	}
	lc->used = xmalloc((lc->ntok ? lc->ntok : 1) * sizeof(bool));
	memset(lc->used, 0, (lc->ntok ? lc->ntok : 1) * sizeof(bool));
}

void
line_tokens_free(line_ctx *lc)
{
	for (size_t i = 0; i < lc->ntok; i++)
	{
		free(lc->tok[i].key);
		free(lc->tok[i].val);
	}
	free(lc->tok);
	free(lc->used);
	lc->tok = NULL;
	lc->used = NULL;
	lc->ntok = 0;
}

/* ---- argument helpers -------------------------------------------------- */

/* the value of key=..., or NULL; marks it used */
const token *
line_kv(line_ctx *lc, const char *key)
{
	const token *found = NULL;

	for (size_t i = 1; i < lc->ntok; i++)
		if (lc->tok[i].kind == TOK_KV && strcmp(lc->tok[i].key, key) == 0)
		{
			if (found)
				line_fail(lc, "%s= given twice", key);
			found = &lc->tok[i];
			lc->used[i] = true;
		}
	return found;
}

/* positional argument n (1-based among non-KV tokens), or NULL */
const token *
line_pos(line_ctx *lc, size_t n)
{
	size_t		k = 0;

	for (size_t i = 1; i < lc->ntok; i++)
		if (lc->tok[i].kind != TOK_KV && ++k == n)
		{
			lc->used[i] = true;
			return &lc->tok[i];
		}
	return NULL;
}

size_t
line_npos(const line_ctx *lc)
{
	size_t		k = 0;

	for (size_t i = 1; i < lc->ntok; i++)
		if (lc->tok[i].kind != TOK_KV)
			k++;
	return k;
}

void
line_all_used(line_ctx *lc)
{
	for (size_t i = 1; i < lc->ntok; i++)
		if (!lc->used[i])
		{
			if (lc->tok[i].kind == TOK_KV)
				line_fail(lc, "%s does not take %s=", lc->tok[0].val, lc->tok[i].key);
			line_fail(lc, "%s: unexpected argument '%s'", lc->tok[0].val, lc->tok[i].val);
		}
}

long long
line_to_ll(line_ctx *lc, const token *t, const char *what, long long min, long long max)
{
	char	   *e;
	long long	v;

	errno = 0;
	v = strtoll(t->val, &e, 10);
	if (t->len == 0 || *e != '\0' || errno != 0 || v < min || v > max)
		line_fail(lc, "%s: '%s' is not an integer in [%lld, %lld]", what, t->val, min, max);
	return v;
}

double
line_to_double(line_ctx *lc, const token *t, const char *what)
{
	char	   *e;
	double		v;

	errno = 0;
	v = strtod(t->val, &e);
	if (t->len == 0 || *e != '\0' || errno != 0 || !isfinite(v) || v < 0)
		line_fail(lc, "%s: '%s' is not a non-negative number", what, t->val);
	return v;
}

const token *
line_need_pos(line_ctx *lc, size_t n, const char *what)
{
	const token *t = line_pos(lc, n);

	if (t == NULL)
		line_fail(lc, "%s: missing %s", lc->tok[0].val, what);
	return t;
}

/* a comma-separated list of integers >= min */
long *
line_to_list(line_ctx *lc, const token *t, const char *what, long min, size_t *n)
{
	long	   *v = NULL;
	size_t		k = 0;
	const char *p = t->val;

	if (t->len == 0)
		line_fail(lc, "%s: empty list", what);
	for (;;)
	{
		char	   *e;
		long		x;

		errno = 0;
		x = strtol(p, &e, 10);
		if (e == p || errno != 0 || x < min || (*e != ',' && *e != '\0'))
			line_fail(lc, "%s: '%s' is not a list of integers >= %ld separated by commas", what, t->val, min);
		v = xrealloc(v, (k + 1) * sizeof(long));
		v[k++] = x;
		if (*e == '\0')
			break;
		p = e + 1;
	}
	*n = k;
	return v;
}

/*
 * A raw JSON value for an error field: a quoted token is a JSON string; a bare
 * null, true, false or number is itself; any other bare word is a string.
 */
char *
line_to_json_value(const token *t)
{
	buf			b = {0};
	char	   *e;

	if (!t->quoted)
	{
		if (strcmp(t->val, "null") == 0 || strcmp(t->val, "true") == 0 ||
			strcmp(t->val, "false") == 0)
			return xstrdup(t->val);
		if (t->len > 0)
		{
			(void) strtod(t->val, &e);
			if (*e == '\0' && json_valid(t->val, t->len))
				return xstrdup(t->val);
		}
	}
	buf_json_str(&b, t->val, t->len);
	return b.p;
}
