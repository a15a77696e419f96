/*
 * part_json.c
 *		A part's JSON as the server prints it, read into a mnemo_part: the
 *		stored content of a message_parts row, or an element of a "parts"
 *		array (message_with_parts, expand_summary) with the status columns
 *		laid over it.
 *
 * The text is the server's, not parsed by json-c: json-c would turn an
 * integer beyond 64 bits into another number, and the extension promises
 * that a part reads back exactly as appended.  So it is checked for its
 * structure once (mn_json_well_formed) and then walked with core's JSON
 * walker, values cut out as the server wrote them.  See the head of
 * convert.c for the two shapes and what each keeps.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "store/store.h"

static bool
is_null(mn_span v)
{
	return v.len == 4 && memcmp(v.p, "null", 4) == 0;
}

/* The decoded JSON string value into *dst; PROTOCOL when malformed. */
static int
unescape(mnemo_store *st, mn_span value, char **dst)
{
	bool		malformed;

	if ((*dst = mn_json_unescape(value, &malformed)) != NULL)
		return MNEMO_OK;
	if (malformed)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed JSON string");
	return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}

/* A string member into *dst (NULL for JSON null; non-strings ignored). */
static int
string_member(mnemo_store *st, mn_span value, char **dst)
{
	if (value.p[0] != '"' || *dst != NULL)
		return MNEMO_OK;
	return unescape(st, value, dst);
}

static int
integer_member(mnemo_store *st, mn_span key, mn_span value, int64_t *dst)
{
	if (is_null(value))
		return MNEMO_OK;
	if (!mn_parse_i64(value.p, value.len, dst))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "part field %.*s is not an integer",
					   (int) key.len, key.p);
	return MNEMO_OK;
}

/* What a part's content says; the members of content and of an element. */
typedef struct part_scan
{
	mnemo_part *part;
	bool		overlaid;		/* an element of a parts array */
	unsigned	columns;		/* MN_PART_* fields set from columns: they win */
	char	   *text;
	char	   *tool_name;
	char	   *tool_call_id;
	/* content rebuilt from the members that are not status fields */
	mn_buf		content;
	int			content_members;
} part_scan;

static int
part_member(mnemo_store *st, mn_span key, mn_span value, part_scan *ps)
{
	mnemo_part *part = ps->part;
	int64_t		n = 0;
	int			rc;

	if (ps->overlaid)
	{
		/* the status columns laid over the content */
		if (mn_json_key_is(key, "id"))
			return is_null(value) || part->id != NULL ? MNEMO_OK : unescape(st, value, &part->id);
		if (mn_json_key_is(key, "tool_state"))
			return is_null(value) || part->tool_state != NULL ? MNEMO_OK
				: unescape(st, value, &part->tool_state);
		if ((mn_json_key_is(key, "part_index") && (ps->columns & MN_PART_INDEX)) ||
			(mn_json_key_is(key, "token_estimate") && (ps->columns & MN_PART_TOKEN_ESTIMATE)) ||
			(mn_json_key_is(key, "compacted_at") && (ps->columns & MN_PART_COMPACTED_AT)) ||
			(mn_json_key_is(key, "started_at") && (ps->columns & MN_PART_STARTED_AT)) ||
			(mn_json_key_is(key, "completed_at") && (ps->columns & MN_PART_COMPLETED_AT)))
			return MNEMO_OK;
		if (mn_json_key_is(key, "part_index") || mn_json_key_is(key, "token_estimate"))
		{
			if ((rc = integer_member(st, key, value, &n)) != MNEMO_OK)
				return rc;
			if (n < INT_MIN || n > INT_MAX)
				return mn_fail(st, MNEMO_ERR_PROTOCOL, "part field %.*s is out of range",
							   (int) key.len, key.p);
			if (mn_json_key_is(key, "part_index"))
				part->part_index = (int) n;
			else
				part->token_estimate = (int) n;
			return MNEMO_OK;
		}
		if (mn_json_key_is(key, "compacted_at"))
			return integer_member(st, key, value, &part->compacted_at);
		if (mn_json_key_is(key, "started_at"))
			return integer_member(st, key, value, &part->started_at);
		if (mn_json_key_is(key, "completed_at"))
			return integer_member(st, key, value, &part->completed_at);

		/* a member of the stored content: keep it, in the server's layout */
		if (ps->content_members++ > 0)
			mn_buf_put(&ps->content, ", ", 2);
		mn_buf_put(&ps->content, key.p, key.len);
		mn_buf_put(&ps->content, ": ", 2);
		if (!mn_buf_put(&ps->content, value.p, value.len))
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}

	if (mn_json_key_is(key, "type") && part->type == NULL)
		return string_member(st, value, &part->type);
	if (mn_json_key_is(key, "text"))
		return string_member(st, value, &ps->text);
	if (mn_json_key_is(key, "tool_name"))
		return string_member(st, value, &ps->tool_name);
	if (mn_json_key_is(key, "tool_call_id"))
		return string_member(st, value, &ps->tool_call_id);
	if (mn_json_key_is(key, "error_message"))
		return string_member(st, value, &part->error_message);
	if (mn_json_key_is(key, "input") && !is_null(value) && part->tool_input == NULL)
	{
		if ((part->tool_input = mn_strndup(value.p, value.len)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return MNEMO_OK;
	}
	/* the input as written, where jsonb would reorder its keys: it wins */
	if (mn_json_key_is(key, "input_text") && value.p[0] == '"')
	{
		char	   *text = NULL;
		int			rc = unescape(st, value, &text);

		if (rc != MNEMO_OK)
			return rc;
		free(part->tool_input);
		part->tool_input = text;
		return MNEMO_OK;
	}
	if (mn_json_key_is(key, "output") && !is_null(value) && part->tool_output == NULL)
	{
		if (value.p[0] == '"')
			return unescape(st, value, &part->tool_output);
		if ((part->tool_output = mn_strndup(value.p, value.len)) == NULL)
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
	mn_buf_free(&ps->content);
	memset(ps, 0, sizeof(*ps));
}

/*
 * Read the content (or a parts-array element, overlaid), a JSON object that
 * the walker may trust, into part.  The strings read from content go to the
 * struct only where they belong: tool_name and tool_call_id to tool parts,
 * as the server's columns do.
 */
static int
scan_object(mnemo_store *st, mn_span obj, bool overlaid, unsigned columns, mnemo_part *part)
{
	part_scan	ps = {.part = part,.overlaid = overlaid,.columns = columns};
	mn_span		key,
				value;
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	if (obj.len == 0 || obj.p[0] != '{')
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "expected a JSON object from the server");
	while (mn_json_next_member(obj, &pos, &key, &value))
		if ((rc = part_member(st, key, value, &ps)) != MNEMO_OK)
			goto done;
	if (overlaid)
	{
		/* the content, in braces */
		size_t		len = ps.content.len;

		if ((part->content = malloc(len + 3)) == NULL)
		{
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			goto done;
		}
		part->content[0] = '{';
		if (len > 0)
			memcpy(part->content + 1, ps.content.data, len);
		memcpy(part->content + 1 + len, "}", 2);
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
mn_part_scan(mnemo_store *st, const char *content, mnemo_part *part)
{
	mn_span		obj = {content, strlen(content)};

	if (!mn_json_well_formed(obj))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed JSON object");
	return scan_object(st, obj, false, 0, part);
}

int
mn_part_scan_over(mnemo_store *st, const char *content, unsigned columns, mnemo_part *part)
{
	mn_span		obj = {content, strlen(content)};

	if (!mn_json_well_formed(obj))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed JSON object");
	return scan_object(st, obj, true, columns, part);
}

int
mn_parts_from_json(mnemo_store *st, const char *json, size_t *n, mnemo_part **parts)
{
	mn_span		arr = {json, strlen(json)};
	mn_span		elem;
	size_t		pos = 0;
	mnemo_part *items = NULL;
	size_t		count = 0,
				cap = 0;
	int			rc = MNEMO_OK;

	*n = 0;
	*parts = NULL;
	if (!mn_json_well_formed(arr))
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "the server sent a malformed parts array");
	while (arr.p[pos] == ' ' || arr.p[pos] == '\t' || arr.p[pos] == '\n' || arr.p[pos] == '\r')
		pos++;
	if (arr.p[pos] != '[')
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "expected a JSON array of parts from the server");
	pos = 0;
	while (mn_json_next_element(arr, &pos, &elem))
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
		rc = scan_object(st, elem, true, 0, &items[count]);
		count++;
		if (rc == MNEMO_OK && (items[count - 1].message_id = strdup("")) == NULL)
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		if (rc != MNEMO_OK)
			goto fail;
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
