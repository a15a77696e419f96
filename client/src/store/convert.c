/*
 * convert.c
 *		From text-format result rows to the public structs, and the text of
 *		parameters.
 *
 * Rows are read by column name, so a statement may select more columns than
 * a struct has, in any order.  A column the struct needs and the row lacks,
 * a NULL where the schema says NOT NULL, or a number that does not parse is
 * MNEMO_ERR_PROTOCOL: the server is not the one this library was built for.
 *
 * Part content and JSON exactness.  The extension promises that a part reads
 * back exactly as appended, so the JSON text here is cut out of the server's
 * own output rather than re-serialised: json-c would turn an integer beyond
 * 64 bits into another number.  The server prints jsonb in one canonical
 * form (keys sorted, ", " and ": " as separators), which is what makes the
 * cutting exact; the small scanner below relies on that input being valid
 * JSON and reports MNEMO_ERR_PROTOCOL when it is not.
 *
 * A part comes in two shapes:
 *	- a mnemo.message_parts row (get_parts): content is the stored jsonb
 *	  column, verbatim;
 *	- an element of a message_with_parts "parts" array (MNEMO_PARTS_JSON in
 *	  the extension): the stored content with the status columns id,
 *	  part_index, tool_state, compacted_at, started_at, completed_at and
 *	  token_estimate laid over it.  Those keys fill the struct's status fields
 *	  and are left out of content, which is then the stored object without
 *	  them (the only difference from the get_parts shape: a part appended
 *	  with its own "id", "tool_state" or "token_estimate" key shows them in
 *	  the fields, not in content).
 * In both, "output" and "error_message" merged by update_part_status are
 * part of content, and text, tool_input, tool_output and error_message are
 * read from content.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* ------------------------------------------------------------------------
 * Columns and parameters
 * ------------------------------------------------------------------------ */

int
mn_col(const PGresult *res, const char *name)
{
	return PQfnumber(res, name);
}

char *
mn_get_str(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	return strdup(PQgetvalue(res, row, col));
}

/* Strict decimal integer; false if text is not one or out of range. */
static bool
parse_i64(const char *text, size_t len, int64_t *v)
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

int64_t
mn_get_i64(const PGresult *res, int row, int col)
{
	const char *v;
	int64_t		n = 0;

	if (PQgetisnull(res, row, col))
		return 0;
	v = PQgetvalue(res, row, col);
	return parse_i64(v, strlen(v), &n) ? n : 0;
}

bool
mn_get_bool(const PGresult *res, int row, int col)
{
	return !PQgetisnull(res, row, col) && PQgetvalue(res, row, col)[0] == 't';
}

/*
 * float8 text in the C locale: an application that set LC_NUMERIC to a
 * comma locale must not read "0.25" as 0.
 */
static bool
parse_f64(const char *text, double *v)
{
	locale_t	c = newlocale(LC_NUMERIC_MASK, "C", (locale_t) 0);
	locale_t	old = (locale_t) 0;
	char	   *end;

	if (c != (locale_t) 0)
		old = uselocale(c);
	*v = strtod(text, &end);
	if (c != (locale_t) 0)
	{
		uselocale(old);
		freelocale(c);
	}
	return end != text && *end == '\0';
}

double
mn_get_f64(const PGresult *res, int row, int col)
{
	double		v = 0;

	if (PQgetisnull(res, row, col))
		return 0;
	return parse_f64(PQgetvalue(res, row, col), &v) ? v : 0;
}

/*
 * Every element is double-quoted, so commas, braces, blanks and the word
 * NULL inside an item stay text; a NULL item is an unquoted NULL, which the
 * server refuses with 22004 where it matters.
 */
char *
mn_text_array(mnemo_store *st, const char *const *items, size_t n)
{
	size_t		len = 3;
	char	   *out;
	char	   *p;

	for (size_t i = 0; i < n; i++)
	{
		if (items[i] == NULL)
			len += 5;
		else
			for (const char *c = items[i]; *c; c++)
				len += (*c == '"' || *c == '\\') ? 2 : 1;
		len += 3;				/* quotes and comma */
	}
	out = malloc(len);
	if (out == NULL)
	{
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	p = out;
	*p++ = '{';
	for (size_t i = 0; i < n; i++)
	{
		if (i > 0)
			*p++ = ',';
		if (items[i] == NULL)
		{
			memcpy(p, "NULL", 4);
			p += 4;
			continue;
		}
		*p++ = '"';
		for (const char *c = items[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				*p++ = '\\';
			*p++ = *c;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return out;
}

/* ------------------------------------------------------------------------
 * Table-driven row filling
 * ------------------------------------------------------------------------ */

typedef enum field_kind
{
	F_STR,						/* char *, NOT NULL */
	F_STR_OR_NULL,				/* char *, NULL stays NULL */
	F_I64,						/* int64_t, NULL is 0 */
	F_INT,						/* int, NULL is 0 */
	F_BOOL,						/* bool, NULL is false */
	F_F64						/* double, NULL is 0 */
} field_kind;

typedef struct field
{
	const char *column;
	field_kind	kind;
	size_t		offset;
} field;

static int
fill_fields(mnemo_store *st, const PGresult *res, int row, const field *fields,
			size_t n, void *out, const char *what)
{
	char	   *base = out;

	for (size_t i = 0; i < n; i++)
	{
		const field *f = &fields[i];
		int			col = PQfnumber(res, f->column);
		const char *text;
		int64_t		v;

		if (col < 0)
			return mn_fail(st, MNEMO_ERR_PROTOCOL, "the %s row has no column \"%s\"",
						   what, f->column);
		if (PQgetisnull(res, row, col))
		{
			if (f->kind == F_STR)
				return mn_fail(st, MNEMO_ERR_PROTOCOL, "column \"%s\" of the %s row is NULL",
							   f->column, what);
			continue;			/* the struct is zeroed: NULL, 0, false */
		}
		text = PQgetvalue(res, row, col);
		switch (f->kind)
		{
			case F_STR:
			case F_STR_OR_NULL:
				if ((*(char **) (base + f->offset) = strdup(text)) == NULL)
					return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
				break;
			case F_I64:
			case F_INT:
				if (!parse_i64(text, strlen(text), &v) ||
					(f->kind == F_INT && (v < INT_MIN || v > INT_MAX)))
					return mn_fail(st, MNEMO_ERR_PROTOCOL,
								   "column \"%s\" of the %s row is not an integer: \"%s\"",
								   f->column, what, text);
				if (f->kind == F_I64)
					*(int64_t *) (base + f->offset) = v;
				else
					*(int *) (base + f->offset) = (int) v;
				break;
			case F_BOOL:
				*(bool *) (base + f->offset) = text[0] == 't';
				break;
			case F_F64:
				if (!parse_f64(text, (double *) (base + f->offset)))
					return mn_fail(st, MNEMO_ERR_PROTOCOL,
								   "column \"%s\" of the %s row is not a number: \"%s\"",
								   f->column, what, text);
				break;
		}
	}
	return MNEMO_OK;
}

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static const field session_fields[] = {
	{"id", F_STR, offsetof(mnemo_session, id)},
	{"parent_id", F_STR_OR_NULL, offsetof(mnemo_session, parent_id)},
	{"created_at", F_I64, offsetof(mnemo_session, created_at)},
	{"updated_at", F_I64, offsetof(mnemo_session, updated_at)},
	{"model_id", F_STR, offsetof(mnemo_session, model_id)},
	{"provider_id", F_STR, offsetof(mnemo_session, provider_id)},
	{"agent", F_STR, offsetof(mnemo_session, agent)},
	{"title", F_STR_OR_NULL, offsetof(mnemo_session, title)},
	{"is_active", F_BOOL, offsetof(mnemo_session, is_active)},
	{"metadata", F_STR_OR_NULL, offsetof(mnemo_session, metadata)},
	{"system_prompt", F_STR, offsetof(mnemo_session, system_prompt)},
	{"state", F_STR, offsetof(mnemo_session, state)},
	{"watched", F_BOOL, offsetof(mnemo_session, watched)},
	{"last_seq", F_I64, offsetof(mnemo_session, last_seq)},
	{"last_position", F_I64, offsetof(mnemo_session, last_position)},
};

static const field message_fields[] = {
	{"id", F_STR, offsetof(mnemo_message, id)},
	{"session_id", F_STR, offsetof(mnemo_message, session_id)},
	{"seq", F_I64, offsetof(mnemo_message, seq)},
	{"role", F_STR, offsetof(mnemo_message, role)},
	{"created_at", F_I64, offsetof(mnemo_message, created_at)},
	{"agent", F_STR, offsetof(mnemo_message, agent)},
	{"model_id", F_STR, offsetof(mnemo_message, model_id)},
	{"provider_id", F_STR, offsetof(mnemo_message, provider_id)},
	{"run_id", F_STR_OR_NULL, offsetof(mnemo_message, run_id)},
	{"is_summary", F_BOOL, offsetof(mnemo_message, is_summary)},
	{"tokens_input", F_I64, offsetof(mnemo_message, tokens.input)},
	{"tokens_output", F_I64, offsetof(mnemo_message, tokens.output)},
	{"tokens_cache_read", F_I64, offsetof(mnemo_message, tokens.cache_read)},
	{"tokens_cache_write", F_I64, offsetof(mnemo_message, tokens.cache_write)},
	{"tokens_reasoning", F_I64, offsetof(mnemo_message, tokens.reasoning)},
	{"cost", F_F64, offsetof(mnemo_message, cost)},
	{"finish_reason", F_STR_OR_NULL, offsetof(mnemo_message, finish_reason)},
};

static const field part_fields[] = {
	{"message_id", F_STR, offsetof(mnemo_part, message_id)},
	{"part_index", F_INT, offsetof(mnemo_part, part_index)},
	{"id", F_STR, offsetof(mnemo_part, id)},
	{"part_type", F_STR, offsetof(mnemo_part, type)},
	{"content", F_STR, offsetof(mnemo_part, content)},
	{"tool_name", F_STR_OR_NULL, offsetof(mnemo_part, tool_name)},
	{"tool_call_id", F_STR_OR_NULL, offsetof(mnemo_part, tool_call_id)},
	{"tool_state", F_STR_OR_NULL, offsetof(mnemo_part, tool_state)},
	{"compacted_at", F_I64, offsetof(mnemo_part, compacted_at)},
	{"started_at", F_I64, offsetof(mnemo_part, started_at)},
	{"completed_at", F_I64, offsetof(mnemo_part, completed_at)},
	{"token_estimate", F_INT, offsetof(mnemo_part, token_estimate)},
};

/* ------------------------------------------------------------------------
 * A scanner for the server's JSON text
 * ------------------------------------------------------------------------ */

typedef struct span
{
	const char *p;
	size_t		len;
} span;

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Past the string starting at the quote p; NULL if unterminated. */
static const char *
skip_string(const char *p)
{
	for (p++; *p; p++)
	{
		if (*p == '\\')
		{
			if (*++p == '\0')
				return NULL;
		}
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the value starting at p (no leading blanks); NULL if malformed. */
static const char *
skip_value(const char *p)
{
	int			depth = 0;

	do
	{
		switch (*p)
		{
			case '"':
				if ((p = skip_string(p)) == NULL)
					return NULL;
				break;
			case '{':
			case '[':
				depth++;
				p++;
				break;
			case '}':
			case ']':
				if (--depth < 0)
					return NULL;
				p++;
				break;
			case '\0':
				return NULL;
			default:
				if (depth == 0)
				{
					/* a number or a literal */
					const char *start = p;

					while (*p && strchr(",}] \t\r\n", *p) == NULL)
						p++;
					return p > start ? p : NULL;
				}
				p++;
				break;
		}
	} while (depth > 0);
	return p;
}

static void
put_utf8(char **out, unsigned cp)
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

static bool
hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++)
	{
		char		c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned) (c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned) (c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned) (c - 'A' + 10);
		else
			return false;
	}
	return true;
}

/* The decoded text of the JSON string s (quotes included) into *out. */
static int
decode_string(mnemo_store *st, span s, char **out)
{
	const char *p = s.p + 1;
	const char *end = s.p + s.len - 1;
	char	   *o;

	/* an escape never decodes to more bytes than it takes */
	*out = malloc(s.len);
	if (*out == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	o = *out;
	while (p < end)
	{
		unsigned	cp,
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
				if (end - p < 4 || !hex4(p, &cp))
					goto bad;
				p += 4;
				if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' &&
					p[1] == 'u' && hex4(p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000)
				{
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					p += 6;
				}
				if (cp == 0 || (cp >= 0xD800 && cp < 0xE000))
					goto bad;
				put_utf8(&o, cp);
				break;
			default:
				goto bad;
		}
	}
	*o = '\0';
	return MNEMO_OK;

bad:
	free(*out);
	*out = NULL;
	return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed JSON string");
}

static char *
span_dup(span s)
{
	char	   *copy = malloc(s.len + 1);

	if (copy != NULL)
	{
		memcpy(copy, s.p, s.len);
		copy[s.len] = '\0';
	}
	return copy;
}

static bool
key_is(span key, const char *name)
{
	size_t		n = strlen(name);

	/* keys compared here have no escapes */
	return key.len == n + 2 && memcmp(key.p + 1, name, n) == 0;
}

/*
 * Call fn for each member of the object at *pp, advancing *pp past it.
 * fn gets the raw key (with quotes) and the raw value.
 */
typedef int (*member_fn) (mnemo_store *st, span key, span value, void *arg);

static int
each_member(mnemo_store *st, const char **pp, member_fn fn, void *arg)
{
	const char *p = skip_ws(*pp);
	int			rc;

	if (*p != '{')
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "expected a JSON object from the server");
	p = skip_ws(p + 1);
	if (*p == '}')
	{
		*pp = p + 1;
		return MNEMO_OK;
	}
	for (;;)
	{
		span		key,
					value;
		const char *e;

		if (*p != '"' || (e = skip_string(p)) == NULL)
			break;
		key.p = p;
		key.len = (size_t) (e - p);
		p = skip_ws(e);
		if (*p != ':')
			break;
		p = skip_ws(p + 1);
		if ((e = skip_value(p)) == NULL)
			break;
		value.p = p;
		value.len = (size_t) (e - p);
		if ((rc = fn(st, key, value, arg)) != MNEMO_OK)
			return rc;
		p = skip_ws(e);
		if (*p == ',')
		{
			p = skip_ws(p + 1);
			continue;
		}
		if (*p != '}')
			break;
		*pp = p + 1;
		return MNEMO_OK;
	}
	return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed JSON object");
}

/* ------------------------------------------------------------------------
 * Parts
 * ------------------------------------------------------------------------ */

static bool
is_null(span v)
{
	return v.len == 4 && memcmp(v.p, "null", 4) == 0;
}

/* A string member into *dst (NULL for JSON null; non-strings ignored). */
static int
string_member(mnemo_store *st, span value, char **dst)
{
	if (value.p[0] != '"' || *dst != NULL)
		return MNEMO_OK;
	return decode_string(st, value, dst);
}

static int
integer_member(mnemo_store *st, span key, span value, int64_t *dst)
{
	if (is_null(value))
		return MNEMO_OK;
	if (!parse_i64(value.p, value.len, dst))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "part field %.*s is not an integer",
					   (int) key.len, key.p);
	return MNEMO_OK;
}

/* What a part's content says; the members of content and of an element. */
typedef struct part_scan
{
	mnemo_part *part;
	bool		overlaid;		/* an element of a parts array */
	char	   *text;
	char	   *tool_name;
	char	   *tool_call_id;
	/* content rebuilt from the members that are not status fields */
	char	   *content;
	size_t		content_len;
	size_t		content_cap;
	int			content_members;
} part_scan;

static int
content_append(mnemo_store *st, part_scan *ps, const char *s, size_t len)
{
	if (ps->content_len + len + 1 > ps->content_cap)
	{
		size_t		cap = ps->content_cap ? ps->content_cap : 128;
		char	   *grown;

		while (ps->content_len + len + 1 > cap)
			cap *= 2;
		if ((grown = realloc(ps->content, cap)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		ps->content = grown;
		ps->content_cap = cap;
	}
	memcpy(ps->content + ps->content_len, s, len);
	ps->content_len += len;
	ps->content[ps->content_len] = '\0';
	return MNEMO_OK;
}

static int
part_member(mnemo_store *st, span key, span value, void *arg)
{
	part_scan  *ps = arg;
	mnemo_part *part = ps->part;
	int64_t		n = 0;
	int			rc;

	if (ps->overlaid)
	{
		/* the status columns laid over the content */
		if (key_is(key, "id"))
			return is_null(value) ? MNEMO_OK : decode_string(st, value, &part->id);
		if (key_is(key, "tool_state"))
			return is_null(value) ? MNEMO_OK : decode_string(st, value, &part->tool_state);
		if (key_is(key, "part_index") || key_is(key, "token_estimate"))
		{
			if ((rc = integer_member(st, key, value, &n)) != MNEMO_OK)
				return rc;
			if (n < INT_MIN || n > INT_MAX)
				return mn_fail(st, MNEMO_ERR_PROTOCOL, "part field %.*s is out of range",
							   (int) key.len, key.p);
			if (key_is(key, "part_index"))
				part->part_index = (int) n;
			else
				part->token_estimate = (int) n;
			return MNEMO_OK;
		}
		if (key_is(key, "compacted_at"))
			return integer_member(st, key, value, &part->compacted_at);
		if (key_is(key, "started_at"))
			return integer_member(st, key, value, &part->started_at);
		if (key_is(key, "completed_at"))
			return integer_member(st, key, value, &part->completed_at);

		/* a member of the stored content: keep it, in the server's layout */
		if ((ps->content_members++ > 0 && (rc = content_append(st, ps, ", ", 2)) != MNEMO_OK) ||
			(rc = content_append(st, ps, key.p, key.len)) != MNEMO_OK ||
			(rc = content_append(st, ps, ": ", 2)) != MNEMO_OK ||
			(rc = content_append(st, ps, value.p, value.len)) != MNEMO_OK)
			return rc;
	}

	if (key_is(key, "type") && part->type == NULL)
		return string_member(st, value, &part->type);
	if (key_is(key, "text"))
		return string_member(st, value, &ps->text);
	if (key_is(key, "tool_name"))
		return string_member(st, value, &ps->tool_name);
	if (key_is(key, "tool_call_id"))
		return string_member(st, value, &ps->tool_call_id);
	if (key_is(key, "error_message"))
		return string_member(st, value, &part->error_message);
	if (key_is(key, "input") && !is_null(value) && part->tool_input == NULL)
	{
		if ((part->tool_input = span_dup(value)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return MNEMO_OK;
	}
	if (key_is(key, "output") && !is_null(value) && part->tool_output == NULL)
	{
		if (value.p[0] == '"')
			return decode_string(st, value, &part->tool_output);
		if ((part->tool_output = span_dup(value)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	return MNEMO_OK;
}

static void
part_scan_clear(part_scan *ps)
{
	free(ps->text);
	free(ps->tool_name);
	free(ps->tool_call_id);
	free(ps->content);
	memset(ps, 0, sizeof(*ps));
}

/*
 * Read the content (or a parts-array element, overlaid) at *pp into part.
 * The strings read from content go to the struct only where they belong:
 * tool_name and tool_call_id to tool parts, as the server's columns do.
 */
static int
scan_part(mnemo_store *st, const char **pp, bool overlaid, mnemo_part *part)
{
	part_scan	ps = {.part = part,.overlaid = overlaid};
	int			rc;

	if ((rc = each_member(st, pp, part_member, &ps)) != MNEMO_OK)
		goto done;
	if (overlaid)
	{
		if ((rc = content_append(st, &ps, "}", 1)) != MNEMO_OK)
			goto done;
		/* the opening brace, now that the length is known */
		part->content = malloc(ps.content_len + 2);
		if (part->content == NULL)
		{
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			goto done;
		}
		part->content[0] = '{';
		memcpy(part->content + 1, ps.content, ps.content_len + 1);
		if (part->id == NULL || part->type == NULL)
		{
			rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "a part from the server has no %s",
						 part->id == NULL ? "id" : "type");
			goto done;
		}
		if (strcmp(part->type, "tool") == 0)
		{
			part->tool_name = ps.tool_name;
			part->tool_call_id = ps.tool_call_id;
			ps.tool_name = ps.tool_call_id = NULL;
		}
	}
	part->text = ps.text;
	ps.text = NULL;
done:
	part_scan_clear(&ps);
	return rc;
}

int
mn_part_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_part *out)
{
	const char *p;
	int			rc;

	memset(out, 0, sizeof(*out));
	if ((rc = fill_fields(st, res, row, part_fields, NFIELDS(part_fields), out,
						  "message_parts")) == MNEMO_OK)
	{
		p = out->content;
		rc = scan_part(st, &p, false, out);
	}
	if (rc != MNEMO_OK)
		mn_part_clear(out);
	return rc;
}

int
mn_parts_from_json(mnemo_store *st, const char *json, size_t *n, mnemo_part **parts)
{
	const char *p = skip_ws(json);
	mnemo_part *items = NULL;
	size_t		count = 0,
				cap = 0;
	int			rc = MNEMO_OK;

	*n = 0;
	*parts = NULL;
	if (*p != '[')
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "expected a JSON array of parts from the server");
	p = skip_ws(p + 1);
	while (*p != ']')
	{
		if (count == cap)
		{
			mnemo_part *grown;

			cap = cap ? cap * 2 : 4;
			if ((grown = realloc(items, cap * sizeof(*items))) == NULL)
			{
				rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
				goto fail;
			}
			items = grown;
		}
		memset(&items[count], 0, sizeof(items[count]));
		rc = scan_part(st, &p, true, &items[count]);
		count++;
		if (rc == MNEMO_OK && (items[count - 1].message_id = strdup("")) == NULL)
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		if (rc != MNEMO_OK)
			goto fail;
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ']')
		{
			rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed parts array");
			goto fail;
		}
	}
	*n = count;
	*parts = items;
	return MNEMO_OK;

fail:
	for (size_t i = 0; i < count; i++)
		mn_part_clear(&items[i]);
	free(items);
	return rc;
}

int
mn_parts_set_message_id(mnemo_store *st, mnemo_part *parts, size_t n, const char *message_id)
{
	for (size_t i = 0; i < n; i++)
	{
		char	   *copy = strdup(message_id);

		if (copy == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		free(parts[i].message_id);
		parts[i].message_id = copy;
	}
	return MNEMO_OK;
}

/* ------------------------------------------------------------------------
 * Sessions and messages
 * ------------------------------------------------------------------------ */

int
mn_session_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_session *out)
{
	int			rc;

	memset(out, 0, sizeof(*out));
	rc = fill_fields(st, res, row, session_fields, NFIELDS(session_fields), out, "session");
	if (rc != MNEMO_OK)
		mn_session_clear(out);
	return rc;
}

int
mn_message_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_message *out)
{
	int			col;
	int			rc;

	memset(out, 0, sizeof(*out));
	rc = fill_fields(st, res, row, message_fields, NFIELDS(message_fields), out, "message");
	col = PQfnumber(res, "parts");
	if (rc == MNEMO_OK && col >= 0 && !PQgetisnull(res, row, col))
	{
		rc = mn_parts_from_json(st, PQgetvalue(res, row, col), &out->n_parts, &out->parts);
		if (rc == MNEMO_OK)
			rc = mn_parts_set_message_id(st, out->parts, out->n_parts, out->id);
	}
	if (rc != MNEMO_OK)
		mn_message_clear(out);
	return rc;
}
