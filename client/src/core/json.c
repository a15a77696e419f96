/*
 * json.c
 *		The one JSON helper set of libmnemo: a walker that cuts values out
 *		of JSON text without re-serialising them, and getters for json-c
 *		objects.
 *
 * JSON values a user wrote (part contents, tool inputs) travel as text, cut
 * out of their input and pasted into what is sent, never through json-c's
 * numbers: json-c turns an integer beyond 64 bits into another number, and
 * the extension promises that a part reads back exactly as appended.  The
 * walker does not validate what it walks: its input is either one value
 * json-c has accepted or the server's own jsonb output, and it never reads
 * past the span it is given.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"

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

bool
mn_json_jsonb_order(mn_span s)
{
	size_t		pos = 0;
	mn_span		key,
				value,
				prev = {NULL, 0};

	while (s.len > 0 && strchr(" \t\r\n", s.p[0]) != NULL)
		s.p++, s.len--;
	if (s.len > 0 && s.p[0] == '[')
	{
		while (mn_json_next_element(s, &pos, &value))
			if (!mn_json_jsonb_order(value))
				return false;
		return true;
	}
	if (s.len == 0 || s.p[0] != '{')
		return true;
	while (mn_json_next_member(s, &pos, &key, &value))
	{
		/* the quoted tokens: one more byte each, the same order */
		if (memchr(key.p, '\\', key.len) != NULL ||
			(prev.p != NULL && (key.len < prev.len ||
								(key.len == prev.len && memcmp(key.p, prev.p, key.len) <= 0))) ||
			!mn_json_jsonb_order(value))
			return false;
		prev = key;
	}
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

/*
 * The end of the string token at i (its opening quote), or 0 when the
 * string is not terminated within s or is not a JSON string: a raw control
 * character, or an escape the grammar does not have (json-c's strict mode
 * lets a raw newline through, PostgreSQL does not).
 */
static size_t
string_end(mn_span s, size_t i)
{
	for (i++; i < s.len; i++)
	{
		unsigned char c = (unsigned char) s.p[i];

		if (c < 0x20)
			return 0;
		if (c == '"')
			return i + 1;
		if (c != '\\' || ++i >= s.len)
			continue;
		if (s.p[i] == 'u')
		{
			if (i + 4 >= s.len || hex4(s.p + i + 1) < 0)
				return 0;
			i += 4;
		}
		else if (strchr("\"\\/bfnrt", s.p[i]) == NULL || s.p[i] == '\0')
			return 0;
	}
	return 0;
}

/*
 * Whether p[0..n) is a JSON number or literal exactly as the grammar has
 * them: json-c's strict mode also takes NaN, Infinity and "1.", which
 * PostgreSQL refuses.
 */
static bool
scalar_ok(const char *p, size_t n)
{
	size_t		i = 0;

	if ((n == 4 && memcmp(p, "true", 4) == 0) || (n == 5 && memcmp(p, "false", 5) == 0) ||
		(n == 4 && memcmp(p, "null", 4) == 0))
		return true;
	if (i < n && p[i] == '-')
		i++;
	if (i < n && p[i] == '0')
		i++;
	else if (i < n && p[i] >= '1' && p[i] <= '9')
	{
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	else
		return false;
	if (i < n && p[i] == '.')
	{
		if (++i >= n || p[i] < '0' || p[i] > '9')
			return false;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E'))
	{
		if (++i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			return false;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	return i == n;
}

bool
mn_json_well_formed(mn_span s)
{
	enum
	{
		VALUE, VALUE_OR_CLOSE, KEY, KEY_OR_CLOSE, AFTER
	}			expect = VALUE;
	char		small[64];
	char	   *stack = small;
	size_t		depth = 0,
				cap = sizeof(small),
				i = 0,
				j;
	bool		ok = false;

	for (;;)
	{
		char		c;

		i = skip_ws(s, i);
		if (i >= s.len)
		{
			ok = depth == 0 && expect == AFTER;
			break;
		}
		c = s.p[i];
		if (expect == AFTER)
		{
			char		top = depth > 0 ? stack[depth - 1] : 0;

			if (top != 0 && c == ',')
				expect = top == '{' ? KEY : VALUE;
			else if (top != 0 && c == (top == '{' ? '}' : ']'))
				depth--;
			else
				break;			/* text after the value, or a wrong close */
			i++;
		}
		else if (expect == KEY || expect == KEY_OR_CLOSE)
		{
			if (c == '}' && expect == KEY_OR_CLOSE)
			{
				depth--;
				expect = AFTER;
				i++;
				continue;
			}
			if (c != '"' || (j = string_end(s, i)) == 0)
				break;
			i = skip_ws(s, j);
			if (i >= s.len || s.p[i] != ':')
				break;
			i++;
			expect = VALUE;
		}
		else if (c == ']' && expect == VALUE_OR_CLOSE)
		{
			depth--;
			expect = AFTER;
			i++;
		}
		else if (c == '{' || c == '[')
		{
			if (depth == cap)
			{
				char	   *grown = malloc(cap * 2);

				if (grown == NULL)
					break;
				memcpy(grown, stack, depth);
				if (stack != small)
					free(stack);
				stack = grown;
				cap *= 2;
			}
			stack[depth++] = c;
			expect = c == '{' ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
			i++;
		}
		else if (c == '"')
		{
			if ((j = string_end(s, i)) == 0)
				break;
			i = j;
			expect = AFTER;
		}
		else if (strchr(",:]}", c) != NULL)
			break;
		else
		{
			/* a number or a literal: up to a delimiter */
			j = i;
			while (i < s.len && strchr(",:]} \t\r\n", s.p[i]) == NULL)
				i++;
			if (!scalar_ok(s.p + j, i - j))
				break;
			expect = AFTER;
		}
	}
	if (stack != small)
		free(stack);
	return ok;
}

static void
put_utf8(char **out, unsigned long cp)
{
	unsigned char *o = (unsigned char *) *out;

	if (cp < 0x80)
		*o++ = (unsigned char) cp;
	else if (cp < 0x800)
	{
		*o++ = (unsigned char) (0xC0 | (cp >> 6));
		*o++ = (unsigned char) (0x80 | (cp & 0x3F));
	}
	else if (cp < 0x10000)
	{
		*o++ = (unsigned char) (0xE0 | (cp >> 12));
		*o++ = (unsigned char) (0x80 | ((cp >> 6) & 0x3F));
		*o++ = (unsigned char) (0x80 | (cp & 0x3F));
	}
	else
	{
		*o++ = (unsigned char) (0xF0 | (cp >> 18));
		*o++ = (unsigned char) (0x80 | ((cp >> 12) & 0x3F));
		*o++ = (unsigned char) (0x80 | ((cp >> 6) & 0x3F));
		*o++ = (unsigned char) (0x80 | (cp & 0x3F));
	}
	*out = (char *) o;
}

/* The code unit of the \uXXXX escape at s (s[0] == '\\'), or -1. */
static long
escape_unit(const char *s, size_t left)
{
	char		hex[5];
	char	   *end;
	long		v;

	if (left < 6 || s[1] != 'u')
		return -1;
	memcpy(hex, s + 2, 4);
	hex[4] = '\0';
	v = strtol(hex, &end, 16);
	return end == hex + 4 ? v : -1;
}

size_t
mn_json_scrub(char *s, size_t len)
{
	size_t		n = 0;

	for (size_t i = 0; i < len; i++)
	{
		long		u;

		if (s[i] != '\\')
			continue;
		if ((u = escape_unit(s + i, len - i)) < 0)
		{
			i++;				/* \", \\, \n, ...: skip the escaped character */
			continue;
		}
		if (u >= 0xD800 && u <= 0xDBFF)
		{
			long		low = len - i > 6 && s[i + 6] == '\\' ? escape_unit(s + i + 6, len - i - 6) : -1;

			if (low >= 0xDC00 && low <= 0xDFFF)
			{
				i += 11;		/* a pair: both escapes */
				continue;
			}
		}
		else if (u != 0 && (u < 0xDC00 || u > 0xDFFF))
		{
			i += 5;
			continue;
		}
		memcpy(s + i + 2, "fffd", 4);
		n++;
		i += 5;
	}
	return n;
}

char *
mn_json_unescape(mn_span s, bool *malformed)
{
	const char *p = s.p + 1;
	const char *end = s.p + s.len - 1;
	char	   *out;
	char	   *o;

	*malformed = s.len < 2 || s.p[0] != '"' || s.p[s.len - 1] != '"';
	if (*malformed)
		return NULL;
	/* an escape never decodes to more bytes than it takes */
	if ((out = malloc(s.len)) == NULL)
		return NULL;
	o = out;
	while (p < end)
	{
		long		cp,
					lo;

		if (*p != '\\')
		{
			*o++ = *p++;
			continue;
		}
		p++;
		switch (*p++)
		{
			case '"':
				*o++ = '"';
				break;
			case '\\':
				*o++ = '\\';
				break;
			case '/':
				*o++ = '/';
				break;
			case 'b':
				*o++ = '\b';
				break;
			case 'f':
				*o++ = '\f';
				break;
			case 'n':
				*o++ = '\n';
				break;
			case 'r':
				*o++ = '\r';
				break;
			case 't':
				*o++ = '\t';
				break;
			case 'u':
				if (end - p < 4 || (cp = hex4(p)) < 0)
					goto bad;
				p += 4;
				if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' &&
					p[1] == 'u' && (lo = hex4(p + 2)) >= 0xDC00 && lo < 0xE000)
				{
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					p += 6;
				}
				if (cp == 0 || (cp >= 0xD800 && cp < 0xE000))
					goto bad;
				put_utf8(&o, (unsigned long) cp);
				break;
			default:
				goto bad;
		}
	}
	*o = '\0';
	return out;

bad:
	free(out);
	*malformed = true;
	return NULL;
}

/* ========================================================================
 * Reading json-c objects
 * ======================================================================== */

const char *
mn_js_str(struct json_object *obj, const char *key, size_t *len)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
		!json_object_is_type(v, json_type_string))
		return NULL;
	if (len != NULL)
		*len = (size_t) json_object_get_string_len(v);
	return json_object_get_string(v);
}

struct json_object *
mn_js_obj(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
		!json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

struct json_object *
mn_js_arr(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
		!json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

bool
mn_js_int(struct json_object *obj, const char *key, int64_t *out)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v))
		return false;
	if (json_object_is_type(v, json_type_int))
	{
		*out = json_object_get_int64(v);
		return true;
	}
	if (json_object_is_type(v, json_type_double))
	{
		double		d = json_object_get_double(v);

		/* 12.0 is 12; a fraction or a value beyond int64 is not a count */
		if (d >= -9.2e18 && d <= 9.2e18 && d == (double) (int64_t) d)
		{
			*out = (int64_t) d;
			return true;
		}
	}
	return false;
}

int64_t
mn_js_count(struct json_object *obj, const char *key)
{
	int64_t		v;

	if (!mn_js_int(obj, key, &v))
		return -1;
	return v < 0 ? 0 : v;
}

char *
mn_js_text(struct json_object *obj, const char *key)
{
	struct json_object *v;
	const char *s;
	size_t		len;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	if (json_object_is_type(v, json_type_string))
	{
		s = json_object_get_string(v);
		len = (size_t) json_object_get_string_len(v);
	}
	else if (json_object_is_type(v, json_type_int) ||
			 json_object_is_type(v, json_type_double))
	{
		/* as the server wrote it (json-c keeps the text of a parsed number) */
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
		if (s == NULL)
			return NULL;
		len = strlen(s);
	}
	else
		return NULL;
	return mn_strndup(s, len);
}
