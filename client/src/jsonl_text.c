/*
 * jsonl_text.c
 *		JSON text for the transcript files: a buffer that writes it, and a
 *		walker that cuts values out of a line json-c has already accepted.
 *
 * Strings are escaped as PostgreSQL prints jsonb (escape_json): \" \\ \b
 * \f \n \r \t, other control characters as \u00xx, everything else as is,
 * so an exported line looks like the server's own output.  The walker does
 * not validate: it trusts that its input is one valid JSON value, which
 * json-c has checked, and never reads past the span it is given.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

/* ------------------------------------------------------------------------
 * The buffer
 * ------------------------------------------------------------------------ */

static bool
reserve(mn_buf *b, size_t more)
{
	size_t		cap;
	char	   *grown;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	if (more > SIZE_MAX / 2 - b->len)
	{
		b->oom = true;
		return false;
	}
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	grown = realloc(b->data, cap);
	if (grown == NULL)
	{
		b->oom = true;
		return false;
	}
	b->data = grown;
	b->cap = cap;
	return true;
}

bool
mn_buf_put(mn_buf *b, const char *s, size_t len)
{
	if (!reserve(b, len))
		return false;
	if (len > 0)
		memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

void
mn_buf_puts(mn_buf *b, const char *s)
{
	mn_buf_put(b, s, strlen(s));
}

void
mn_buf_put_i64(mn_buf *b, int64_t v)
{
	char		tmp[24];
	int			n = snprintf(tmp, sizeof(tmp), "%lld", (long long) v);

	mn_buf_put(b, tmp, (size_t) n);
}

void
mn_buf_put_double(mn_buf *b, double v)
{
	char		tmp[64];
	const char *point = localeconv()->decimal_point;
	int			prec;
	int			n = 0;
	char	   *p;

	/* JSON has no NaN nor Infinity */
	if (!isfinite(v))
	{
		mn_buf_put(b, "null", 4);
		return;
	}
	/* the fewest digits that read back as the same double */
	for (prec = 1; prec <= 17; prec++)
	{
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	if (point != NULL && point[0] != '\0' && strcmp(point, ".") != 0 &&
		(p = strstr(tmp, point)) != NULL)
	{
		size_t		plen = strlen(point);

		*p = '.';
		memmove(p + 1, p + plen, strlen(p + plen) + 1);
		n = (int) strlen(tmp);
	}
	mn_buf_put(b, tmp, (size_t) n);
}

void
mn_buf_put_jstr(mn_buf *b, const char *s, size_t len)
{
	size_t		start = 0;
	size_t		i;

	mn_buf_put(b, "\"", 1);
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];
		const char *esc = NULL;
		char		u[8];

		switch (c)
		{
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\f':
				esc = "\\f";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			case '\t':
				esc = "\\t";
				break;
			default:
				if (c < 0x20)
				{
					snprintf(u, sizeof(u), "\\u%04x", c);
					esc = u;
				}
				break;
		}
		if (esc == NULL)
			continue;
		mn_buf_put(b, s + start, i - start);
		mn_buf_puts(b, esc);
		start = i + 1;
	}
	mn_buf_put(b, s + start, len - start);
	mn_buf_put(b, "\"", 1);
}

void
mn_buf_reset(mn_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
mn_buf_free(mn_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------
 * The walker
 * ------------------------------------------------------------------------ */

static size_t
skip_ws(mn_span s, size_t i)
{
	while (i < s.len && (s.p[i] == ' ' || s.p[i] == '\t' || s.p[i] == '\n' || s.p[i] == '\r'))
		i++;
	return i;
}

/* The end of the string token starting at i (its opening quote). */
static size_t
skip_string(mn_span s, size_t i)
{
	for (i++; i < s.len; i++)
	{
		if (s.p[i] == '\\')
			i++;
		else if (s.p[i] == '"')
			return i + 1;
	}
	return s.len;
}

/* The end of the value starting at i. */
static size_t
skip_value(mn_span s, size_t i)
{
	int			depth = 0;

	if (i >= s.len)
		return s.len;
	if (s.p[i] == '"')
		return skip_string(s, i);
	if (s.p[i] != '{' && s.p[i] != '[')
	{
		/* a number, true, false or null: up to a delimiter */
		while (i < s.len && strchr(",:]} \t\r\n", s.p[i]) == NULL)
			i++;
		return i;
	}
	for (; i < s.len; i++)
	{
		char		c = s.p[i];

		if (c == '"')
			i = skip_string(s, i) - 1;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return i + 1;
	}
	return s.len;
}

/* Past the opening bracket on the first call, past a separator after. */
static bool
next_item(mn_span s, size_t *pos, char open, char close)
{
	size_t		i = *pos;

	if (i == 0)
	{
		i = skip_ws(s, 0);
		if (i >= s.len || s.p[i] != open)
			return false;
		i++;
	}
	i = skip_ws(s, i);
	if (i < s.len && s.p[i] == ',')
		i = skip_ws(s, i + 1);
	if (i >= s.len || s.p[i] == close)
	{
		*pos = s.len;
		return false;
	}
	*pos = i;
	return true;
}

bool
mn_json_next_member(mn_span obj, size_t *pos, mn_span *key, mn_span *value)
{
	size_t		i;

	if (!next_item(obj, pos, '{', '}'))
		return false;
	i = *pos;
	key->p = obj.p + i;
	i = skip_string(obj, i);
	key->len = (size_t) (obj.p + i - key->p);
	i = skip_ws(obj, i);
	if (i < obj.len && obj.p[i] == ':')
		i = skip_ws(obj, i + 1);
	value->p = obj.p + i;
	i = skip_value(obj, i);
	value->len = (size_t) (obj.p + i - value->p);
	*pos = i;
	return true;
}

bool
mn_json_next_element(mn_span arr, size_t *pos, mn_span *value)
{
	size_t		i;

	if (!next_item(arr, pos, '[', ']'))
		return false;
	i = *pos;
	value->p = arr.p + i;
	i = skip_value(arr, i);
	value->len = (size_t) (arr.p + i - value->p);
	*pos = i;
	return true;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code point of the \uXXXX escape at p (4 hex digits), or -1. */
static long
hex4(const char *p)
{
	long		v = 0;

	for (int k = 0; k < 4; k++)
	{
		int			d = hex_digit(p[k]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

bool
mn_json_key_is(mn_span key, const char *name)
{
	size_t		i = 1;
	size_t		end;
	size_t		n = 0;
	size_t		want = strlen(name);

	if (key.len < 2 || key.p[0] != '"')
		return false;
	end = key.len - 1;
	if (memchr(key.p, '\\', key.len) == NULL)
		return end - 1 == want && memcmp(key.p + 1, name, want) == 0;

	/* the rare escaped key: decode as we compare (names are ASCII) */
	while (i < end)
	{
		long		c = (unsigned char) key.p[i];

		if (c == '\\')
		{
			if (i + 1 >= end)
				return false;
			switch (key.p[i + 1])
			{
				case 'b':
					c = '\b';
					break;
				case 'f':
					c = '\f';
					break;
				case 'n':
					c = '\n';
					break;
				case 'r':
					c = '\r';
					break;
				case 't':
					c = '\t';
					break;
				case 'u':
					if (i + 6 > end || (c = hex4(key.p + i + 2)) < 0)
						return false;
					i += 4;
					break;
				default:
					c = (unsigned char) key.p[i + 1];
					break;
			}
			i += 2;
		}
		else
			i++;
		if (n >= want || c != (unsigned char) name[n])
			return false;
		n++;
	}
	return n == want;
}

bool
mn_json_member(mn_span obj, const char *key, mn_span *value)
{
	size_t		pos = 0;
	mn_span		k,
				v;
	bool		found = false;

	while (mn_json_next_member(obj, &pos, &k, &v))
	{
		if (mn_json_key_is(k, key))
		{
			*value = v;
			found = true;
		}
	}
	return found;
}

bool
mn_json_element(mn_span arr, size_t index, mn_span *value)
{
	size_t		pos = 0;
	size_t		i = 0;
	mn_span		v;

	while (mn_json_next_element(arr, &pos, &v))
	{
		if (i++ == index)
		{
			*value = v;
			return true;
		}
	}
	return false;
}

bool
mn_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		i = 0;

	while (i < len)
	{
		unsigned char c = p[i];
		size_t		n;
		unsigned long cp;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0)
			n = 1, cp = c & 0x1F;
		else if ((c & 0xF0) == 0xE0)
			n = 2, cp = c & 0x0F;
		else if ((c & 0xF8) == 0xF0)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (size_t k = 1; k <= n; k++)
		{
			if (i + k >= len || (p[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3F);
		}
		/* overlong forms, surrogates and beyond U+10FFFF */
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
			(cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return false;
		i += n + 1;
	}
	return true;
}
