/*
 * json.c: the little JSON provider-server needs, without a JSON library.
 *
 * The server never builds a document tree: it checks that a request body is
 * JSON (so the log can embed it as an object), copies it without blanks (so
 * a pretty-printed body still fits on one log line), and looks up the few
 * members that change the answer (model, stream, stream_options).  Replies
 * are written by hand in the providers' exact field order, so they only
 * need string escaping.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this is refused rather than risking the stack. */
#define JSON_MAX_DEPTH 512

_Noreturn void
die(const char *fmt,...)
{
	va_list		ap;

	fputs("provider-server: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void *
xmalloc(size_t n)
{
	void	   *p = malloc(n ? n : 1);

	if (p == NULL)
		die("out of memory");
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		die("out of memory");
	return p;
}

char *
xmemdup(const char *s, size_t n)
{
	char	   *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xstrdup(const char *s)
{
	return xmemdup(s, strlen(s));
}

static void
buf_reserve(buf *b, size_t extra)
{
	size_t		need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	size_t		cap = b->cap ? b->cap : 256;

	while (cap < need)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

void
buf_put(buf *b, const void *data, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
buf_puts(buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void
buf_printf(buf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("vsnprintf failed");
	buf_reserve(b, (size_t) n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
}

void
buf_free(buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/*
 * Escapes as the providers' servers do: the two mandatory escapes, the short
 * forms for control characters, \u00XX for the rest, and UTF-8 untouched.
 */
void
buf_json_str(buf *b, const char *s, size_t n)
{
	buf_reserve(b, n + 2);
	b->p[b->len++] = '"';
	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		switch (c)
		{
			case '"':
				buf_put(b, "\\\"", 2);
				break;
			case '\\':
				buf_put(b, "\\\\", 2);
				break;
			case '\n':
				buf_put(b, "\\n", 2);
				break;
			case '\r':
				buf_put(b, "\\r", 2);
				break;
			case '\t':
				buf_put(b, "\\t", 2);
				break;
			case '\b':
				buf_put(b, "\\b", 2);
				break;
			case '\f':
				buf_put(b, "\\f", 2);
				break;
			default:
				if (c < 0x20)
					buf_printf(b, "\\u%04x", c);
				else
					buf_put(b, &s[i], 1);
		}
	}
	buf_put(b, "\"", 1);
}

void
buf_json_cstr(buf *b, const char *s)
{
	buf_json_str(b, s, strlen(s));
}

static void
put_utf8(buf *out, unsigned long cp)
{
	char		u[4];
	size_t		n;

	if (cp < 0x80)
	{
		u[0] = (char) cp;
		n = 1;
	}
	else if (cp < 0x800)
	{
		u[0] = (char) (0xC0 | (cp >> 6));
		u[1] = (char) (0x80 | (cp & 0x3F));
		n = 2;
	}
	else if (cp < 0x10000)
	{
		u[0] = (char) (0xE0 | (cp >> 12));
		u[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char) (0x80 | (cp & 0x3F));
		n = 3;
	}
	else
	{
		u[0] = (char) (0xF0 | (cp >> 18));
		u[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char) (0x80 | (cp & 0x3F));
		n = 4;
	}
	buf_put(out, u, n);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool
read_hex4(const char *p, const char *end, unsigned long *v)
{
	*v = 0;
	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++)
	{
		int			h = hexval(p[i]);

		if (h < 0)
			return false;
		*v = (*v << 4) | (unsigned long) h;
	}
	return true;
}

bool
json_decode_string(const char **pp, const char *end, buf *out)
{
	const char *p = *pp;

	if (p >= end || *p != '"')
		return false;
	p++;
	buf_put(out, "", 0);
	while (p < end)
	{
		unsigned char c = (unsigned char) *p;

		if (c == '"')
		{
			*pp = p + 1;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
		{
			buf_put(out, p, 1);
			p++;
			continue;
		}
		if (++p >= end)
			return false;
		switch (*p)
		{
			case '"':
				buf_put(out, "\"", 1);
				break;
			case '\\':
				buf_put(out, "\\", 1);
				break;
			case '/':
				buf_put(out, "/", 1);
				break;
			case 'b':
				buf_put(out, "\b", 1);
				break;
			case 'f':
				buf_put(out, "\f", 1);
				break;
			case 'n':
				buf_put(out, "\n", 1);
				break;
			case 'r':
				buf_put(out, "\r", 1);
				break;
			case 't':
				buf_put(out, "\t", 1);
				break;
			case 'u':
				{
					unsigned long cp,
								lo;

					if (!read_hex4(p + 1, end, &cp))
						return false;
					p += 4;
					if (cp >= 0xD800 && cp <= 0xDBFF)
					{
						/* a high surrogate must pair with a low one */
						if (end - p < 7 || p[1] != '\\' || p[2] != 'u' ||
							!read_hex4(p + 3, end, &lo) || lo < 0xDC00 || lo > 0xDFFF)
							return false;
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
						p += 6;
					}
					else if (cp >= 0xDC00 && cp <= 0xDFFF)
						return false;
					put_utf8(out, cp);
					break;
				}
			default:
				return false;
		}
		p++;
	}
	return false;
}

/* ---- validation -------------------------------------------------------- */

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* past one string literal, or NULL */
static const char *
skip_string(const char *p, const char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++)
	{
		unsigned char c = (unsigned char) *p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c == '\\')
		{
			if (++p >= end)
				return NULL;
			if (*p == 'u')
			{
				for (int i = 1; i <= 4; i++)
					if (p + i >= end || hexval(p[i]) < 0)
						return NULL;
				p += 4;
			}
			else if (strchr("\"\\/bfnrt", *p) == NULL)
				return NULL;
		}
	}
	return NULL;
}

static const char *
skip_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p >= end)
		return NULL;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (p < end && *p == '.')
	{
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E'))
	{
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return NULL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p;
}

static const char *
skip_literal(const char *p, const char *end, const char *lit)
{
	size_t		n = strlen(lit);

	if ((size_t) (end - p) < n || memcmp(p, lit, n) != 0)
		return NULL;
	return p + n;
}

/* past one value (blanks before it skipped), or NULL when malformed */
static const char *
skip_value(const char *p, const char *end, int depth)
{
	p = skip_ws(p, end);
	if (p >= end || depth > JSON_MAX_DEPTH)
		return NULL;
	switch (*p)
	{
		case '"':
			return skip_string(p, end);
		case 't':
			return skip_literal(p, end, "true");
		case 'f':
			return skip_literal(p, end, "false");
		case 'n':
			return skip_literal(p, end, "null");
		case '[':
			p = skip_ws(p + 1, end);
			if (p < end && *p == ']')
				return p + 1;
			for (;;)
			{
				p = skip_value(p, end, depth + 1);
				if (p == NULL)
					return NULL;
				p = skip_ws(p, end);
				if (p >= end)
					return NULL;
				if (*p == ']')
					return p + 1;
				if (*p != ',')
					return NULL;
				p++;
			}
		case '{':
			p = skip_ws(p + 1, end);
			if (p < end && *p == '}')
				return p + 1;
			for (;;)
			{
				p = skip_string(skip_ws(p, end), end);
				if (p == NULL)
					return NULL;
				p = skip_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = skip_value(p + 1, end, depth + 1);
				if (p == NULL)
					return NULL;
				p = skip_ws(p, end);
				if (p >= end)
					return NULL;
				if (*p == '}')
					return p + 1;
				if (*p != ',')
					return NULL;
				p++;
			}
		default:
			return skip_number(p, end);
	}
}

bool
json_valid(const char *s, size_t n)
{
	const char *end = s + n;
	const char *p = skip_value(s, end, 0);

	return p != NULL && skip_ws(p, end) == end;
}

void
json_minify(buf *out, const char *s, size_t n)
{
	const char *end = s + n;

	for (const char *p = s; p < end;)
	{
		if (*p == '"')
		{
			const char *q = skip_string(p, end);

			if (q == NULL)
				q = end;
			buf_put(out, p, (size_t) (q - p));
			p = q;
		}
		else
		{
			if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
				buf_put(out, p, 1);
			p++;
		}
	}
}

/* ---- lookup ------------------------------------------------------------ */

/*
 * The member `key` of the object at p, or NULL.  JSON says names should be
 * unique; when they are not, the last one wins, as in most parsers.
 */
static const char *
find_member(const char *p, const char *end, const char *key, const char **vend)
{
	buf			k = {0};
	const char *found = NULL;

	p = skip_ws(p, end);
	if (p >= end || *p != '{')
		return NULL;
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}')
		return NULL;
	for (;;)
	{
		const char *v,
				   *ve;

		k.len = 0;
		if (!json_decode_string(&p, end, &k))
			break;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			break;
		v = skip_ws(p + 1, end);
		ve = skip_value(v, end, 0);
		if (ve == NULL)
			break;
		if (strlen(key) == k.len && memcmp(k.p, key, k.len) == 0)
		{
			found = v;
			*vend = ve;
		}
		p = skip_ws(ve, end);
		if (p >= end || *p != ',')
			break;
		p = skip_ws(p + 1, end);
	}
	buf_free(&k);
	return found;
}

bool
json_lookup(const char *s, size_t n, const char *const *path,
			const char **vs, size_t *vn)
{
	const char *p = s;
	const char *end = s + n;
	const char *ve = end;

	for (; *path; path++)
	{
		p = find_member(p, end, *path, &ve);
		if (p == NULL)
			return false;
		end = ve;
	}
	*vs = p;
	*vn = (size_t) (ve - p);
	return true;
}

char *
json_get_string(const char *s, size_t n, const char *const *path)
{
	const char *v;
	size_t		vn;
	buf			out = {0};

	if (!json_lookup(s, n, path, &v, &vn) || vn == 0 || *v != '"')
		return NULL;
	if (!json_decode_string(&v, v + vn, &out))
	{
		buf_free(&out);
		return NULL;
	}
	return out.p;
}

int
json_get_bool(const char *s, size_t n, const char *const *path)
{
	const char *v;
	size_t		vn;

	if (!json_lookup(s, n, path, &v, &vn))
		return -1;
	if (vn == 4 && memcmp(v, "true", 4) == 0)
		return 1;
	if (vn == 5 && memcmp(v, "false", 5) == 0)
		return 0;
	return -1;
}

long
json_array_length(const char *s, size_t n, const char *const *path)
{
	const char *v;
	size_t		vn;
	const char *end;
	long		count = 0;

	if (!json_lookup(s, n, path, &v, &vn) || *v != '[')
		return -1;
	end = v + vn;
	v = skip_ws(v + 1, end);
	if (v < end && *v == ']')
		return 0;
	for (;;)
	{
		v = skip_value(v, end, 0);
		if (v == NULL)
			return -1;
		count++;
		v = skip_ws(v, end);
		if (v >= end || *v != ',')
			return count;
		v++;
	}
}
