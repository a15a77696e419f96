/*
 * buf.c
 *		The one growable byte buffer of libmnemo (mn_buf, core/json.h), and
 *		the JSON text it writes.
 *
 * Strings are escaped as PostgreSQL prints jsonb (escape_json): \" \\ \b
 * \f \n \r \t, other control characters as \u00xx, everything else as is,
 * so an exported line looks like the server's own output.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

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
