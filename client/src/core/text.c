/*
 * text.c
 *		Byte-level tests and copies of text: the one digits test, UTF-8
 *		validity, a counted copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

bool
mn_all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

char *
mn_strndup(const char *s, size_t n)
{
	char	   *d = malloc(n + 1);

	if (d != NULL)
	{
		if (n > 0)
			memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
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

bool
mn_parse_i64(const char *text, size_t len, int64_t *v)
{
	char		buf[32];
	char	   *end;
	long long	n;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	errno = 0;
	n = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*v = (int64_t) n;
	return true;
}
