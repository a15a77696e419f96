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
 *	- an element of a message_with_parts "parts" array (src/reads/flat.c's
 *	  AddPart in the extension): the stored content with the status columns id,
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

bool
mn_str_into(const PGresult *res, int row, int col, char **dst)
{
	*dst = mn_get_str(res, row, col);
	return *dst != NULL || PQgetisnull(res, row, col);
}

int64_t
mn_get_i64(const PGresult *res, int row, int col)
{
	const char *v;
	int64_t		n = 0;

	if (PQgetisnull(res, row, col))
		return 0;
	v = PQgetvalue(res, row, col);
	return mn_parse_i64(v, strlen(v), &n) ? n : 0;
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

#define MAX_FIELDS 20

/* The column of each of the n fields in res, -1 when missing. */
static void
field_columns(const PGresult *res, const field *fields, size_t n, int *cols)
{
	for (size_t i = 0; i < n; i++)
		cols[i] = PQfnumber(res, fields[i].column);
}

/* Fill out from row `row`, the fields' columns already looked up (cols). */
static int
fill_fields_at(mnemo_store *st, const PGresult *res, int row, const field *fields,
			   const int *cols, size_t n, void *out, const char *what)
{
	char	   *base = out;

	for (size_t i = 0; i < n; i++)
	{
		const field *f = &fields[i];
		int			col = cols[i];
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
				if (!mn_parse_i64(text, strlen(text), &v) ||
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

static int
fill_fields(mnemo_store *st, const PGresult *res, int row, const field *fields,
			size_t n, void *out, const char *what)
{
	int			cols[MAX_FIELDS];

	field_columns(res, fields, n, cols);
	return fill_fields_at(st, res, row, fields, cols, n, out, what);
}

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

_Static_assert(mn_lengthof(session_fields) <= MAX_FIELDS && mn_lengthof(message_fields) <= MAX_FIELDS &&
			   mn_lengthof(part_fields) <= MAX_FIELDS, "MAX_FIELDS holds every row's fields");

int
mn_part_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_part *out)
{
	int			rc;

	memset(out, 0, sizeof(*out));
	if ((rc = fill_fields(st, res, row, part_fields, mn_lengthof(part_fields), out,
						  "message_parts")) == MNEMO_OK)
		rc = mn_part_scan(st, out->content, out);
	if (rc != MNEMO_OK)
		mn_part_clear(out);
	return rc;
}

/* ------------------------------------------------------------------------
 * Sessions and messages
 * ------------------------------------------------------------------------ */

int
mn_session_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_session *out)
{
	int			rc;

	memset(out, 0, sizeof(*out));
	rc = fill_fields(st, res, row, session_fields, mn_lengthof(session_fields), out, "session");
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
	rc = fill_fields(st, res, row, message_fields, mn_lengthof(message_fields), out, "message");
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

/* ------------------------------------------------------------------------
 * get_messages_flat: one row per part, beside its message's columns
 * ------------------------------------------------------------------------ */

/* The part columns of a flat row, by number. */
typedef struct flat_cols
{
	int			part_id;
	int			part_index;
	int			content;
	int			tool_state;
	int			compacted_at;
	int			started_at;
	int			completed_at;
	int			token_estimate;
} flat_cols;

/* A NOT NULL integer column of a flat row into *v; PROTOCOL otherwise. */
static int
flat_int(mnemo_store *st, const PGresult *res, int row, int col, int64_t *v)
{
	const char *text = PQgetvalue(res, row, col);

	if (PQgetisnull(res, row, col) || !mn_parse_i64(text, strlen(text), v))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "column \"%s\" of a flat row is not an integer",
					   PQfname(res, col));
	return MNEMO_OK;
}

/*
 * Row `row`'s part, as the same part in get_messages_with_parts's array
 * reads (mn_parts_from_json): its status columns laid over its content.
 */
static int
flat_part(mnemo_store *st, const PGresult *res, int row, const flat_cols *c,
		  const char *message_id, mnemo_part *out)
{
	static const struct
	{
		int			offset;
		unsigned	flag;
	}			times[] = {
		{offsetof(flat_cols, compacted_at), MN_PART_COMPACTED_AT},
		{offsetof(flat_cols, started_at), MN_PART_STARTED_AT},
		{offsetof(flat_cols, completed_at), MN_PART_COMPLETED_AT},
	};
	int64_t    *fields[] = {&out->compacted_at, &out->started_at, &out->completed_at};
	unsigned	columns = MN_PART_INDEX | MN_PART_TOKEN_ESTIMATE;
	int64_t		v;
	int			rc;

	memset(out, 0, sizeof(*out));
	if (PQgetisnull(res, row, c->content))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "a flat row has a part without content");
	if (!mn_str_into(res, row, c->part_id, &out->id) ||
		!mn_str_into(res, row, c->tool_state, &out->tool_state) ||
		(out->message_id = strdup(message_id)) == NULL)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else if ((rc = flat_int(st, res, row, c->part_index, &v)) == MNEMO_OK &&
			 (out->part_index = (int) v, rc = flat_int(st, res, row, c->token_estimate, &v)) == MNEMO_OK)
	{
		out->token_estimate = (int) v;
		for (size_t i = 0; i < mn_lengthof(times) && rc == MNEMO_OK; i++)
		{
			int			col = *(const int *) ((const char *) c + times[i].offset);

			if (PQgetisnull(res, row, col))
				continue;
			columns |= times[i].flag;
			rc = flat_int(st, res, row, col, fields[i]);
		}
	}
	if (rc == MNEMO_OK && out->id == NULL)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "a flat row has a part without an id");
	if (rc == MNEMO_OK)
		rc = mn_part_scan_over(st, PQgetvalue(res, row, c->content), columns, out);
	if (rc != MNEMO_OK)
		mn_part_clear(out);
	return rc;
}

int
mn_messages_from_flat(mnemo_store *st, const PGresult *res, mnemo_messages **out)
{
	int			nrows = PQntuples(res);
	int			seq_col = PQfnumber(res, "seq");
	flat_cols	c = {
		PQfnumber(res, "part_id"), PQfnumber(res, "part_index"), PQfnumber(res, "content"),
		PQfnumber(res, "tool_state"), PQfnumber(res, "compacted_at"),
		PQfnumber(res, "started_at"), PQfnumber(res, "completed_at"),
		PQfnumber(res, "token_estimate")
	};
	int			message_cols[mn_lengthof(message_fields)];
	mnemo_messages *list;
	size_t		nmsgs = 0;
	int			row;
	int			rc = MNEMO_OK;

	field_columns(res, message_fields, mn_lengthof(message_fields), message_cols);

	if (seq_col < 0 || c.part_id < 0 || c.part_index < 0 || c.content < 0 || c.tool_state < 0 ||
		c.compacted_at < 0 || c.started_at < 0 || c.completed_at < 0 || c.token_estimate < 0)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the flat rows lack a column");
	/* a message's rows are adjacent, and seqs strictly increase along the line */
	for (row = 0; row < nrows; row++)
		if (row == 0 || strcmp(PQgetvalue(res, row, seq_col), PQgetvalue(res, row - 1, seq_col)) != 0)
			nmsgs++;
	if ((list = calloc(1, sizeof(*list))) == NULL ||
		(nmsgs > 0 && (list->items = calloc(nmsgs, sizeof(*list->items))) == NULL))
	{
		free(list);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (row = 0; row < nrows && rc == MNEMO_OK;)
	{
		mnemo_message *m = &list->items[list->count++];
		int			end = row + 1;
		size_t		nparts;

		while (end < nrows &&
			   strcmp(PQgetvalue(res, end, seq_col), PQgetvalue(res, row, seq_col)) == 0)
			end++;
		memset(m, 0, sizeof(*m));
		rc = fill_fields_at(st, res, row, message_fields, message_cols, mn_lengthof(message_fields), m,
							"message");
		if (rc != MNEMO_OK)
			break;
		nparts = PQgetisnull(res, row, c.part_id) ? 0 : (size_t) (end - row);
		if (nparts > 0 && (m->parts = calloc(nparts, sizeof(*m->parts))) == NULL)
		{
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			break;
		}
		for (size_t i = 0; i < nparts && rc == MNEMO_OK; i++)
		{
			rc = flat_part(st, res, row + (int) i, &c, m->id, &m->parts[i]);
			if (rc == MNEMO_OK)
				m->n_parts++;
		}
		row = end;
	}
	if (rc != MNEMO_OK)
	{
		mnemo_messages_free(list);
		return rc;
	}
	*out = list;
	return MNEMO_OK;
}
