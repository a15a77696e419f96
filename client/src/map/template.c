/*
 * template.c
 *		Prompt templates: {{ item }} and {{ item.a.b }}.
 *
 * The seed's templates are Jinja2; a map needs only its variable
 * substitution, so this is that and nothing more: "{{", optional blanks,
 * "item" or a dotted path under it, optional blanks, "}}".  Anything else
 * between braces is left as written (a prompt may show JSON or code).  The
 * item must be named at least once, or every item would get the same
 * prompt: that is refused before any model call, as mnesis refuses it.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "map/map.h"

/*
 * At s (just past "{{"): whether a variable follows; *path and *path_len
 * the part after "item" ("" or ".a.b"), *end just past "}}".
 */
static bool
variable_at(const char *s, const char **path, size_t *path_len, const char **end)
{
	const char *p = s;
	const char *q;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "item", 4) != 0)
		return false;
	p += 4;
	q = p;
	while (*q == '.' || isalnum((unsigned char) *q) || *q == '_')
	{
		if (*q == '.' && !(isalnum((unsigned char) q[1]) || q[1] == '_'))
			return false;
		q++;
	}
	if (q > p && *p != '.')
		return false;			/* "items", "item2": another name */
	*path = p;
	*path_len = (size_t) (q - p);
	while (*q == ' ' || *q == '\t')
		q++;
	if (strncmp(q, "}}", 2) != 0)
		return false;
	*end = q + 2;
	return true;
}

MNEMO_API int
mnemo_map_check_template(mnemo_store *st, const char *template_text)
{
	const char *p;

	if (mn_begin(st, template_text != NULL, "a template is required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	for (p = strstr(template_text, "{{"); p != NULL; p = strstr(p + 2, "{{"))
	{
		const char *path;
		const char *end;
		size_t		len;

		if (variable_at(p + 2, &path, &len, &end))
			return MNEMO_OK;
	}
	return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
				   "the template must reference {{ item }} (or {{ item.field }}): "
				   "without it every item gets the same prompt");
}

/*
 * Whether item has a value at path (".a.b"), into *v: NULL for a member
 * that is JSON null, which is there (it renders as null).
 */
static bool
lookup(struct json_object *item, const char *path, size_t len, struct json_object **out)
{
	struct json_object *v = item;
	size_t		i = 0;

	while (i < len)
	{
		char		name[256];
		size_t		n = 0;

		i++;					/* the dot */
		while (i < len && path[i] != '.' && n < sizeof(name) - 1)
			name[n++] = path[i++];
		name[n] = '\0';
		if (!json_object_is_type(v, json_type_object) ||
			!json_object_object_get_ex(v, name, &v))
			return false;
	}
	*out = v;
	return true;
}

int
mn_map_render(mnemo_store *st, const char *template_text, struct json_object *item, char **out)
{
	mn_buf		b = {0};
	const char *p = template_text;
	const char *open;

	*out = NULL;
	if (mnemo_map_check_template(st, template_text) != MNEMO_OK)
		return st->errcode;
	while ((open = strstr(p, "{{")) != NULL)
	{
		const char *path;
		const char *end;
		size_t		len;
		struct json_object *v;

		if (!variable_at(open + 2, &path, &len, &end))
		{
			mn_buf_put(&b, p, (size_t) (open + 2 - p));
			p = open + 2;
			continue;
		}
		mn_buf_put(&b, p, (size_t) (open - p));
		if (!lookup(item, path, len, &v))
		{
			mn_buf_free(&b);
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
						   "the item has no member %.*s named by the template",
						   (int) len - 1, path + 1);
		}
		if (json_object_is_type(v, json_type_string))
			mn_buf_put(&b, json_object_get_string(v), (size_t) json_object_get_string_len(v));
		else
			mn_buf_puts(&b, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
														  JSON_C_TO_STRING_NOSLASHESCAPE));
		p = end;
	}
	mn_buf_puts(&b, p);
	if (b.oom)
	{
		mn_buf_free(&b);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	*out = b.data ? b.data : strdup("");
	return *out ? MNEMO_OK : mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}

MNEMO_API int
mnemo_map_render(mnemo_store *st, const char *template_text, const char *item, char **out)
{
	struct json_object *v;
	int			rc;

	if (out)
		*out = NULL;
	if (mn_begin(st, template_text != NULL && item != NULL && out != NULL,
				 "a template, an item and a result pointer are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	if (mn_map_parse_json(item, &v) != NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the item is not JSON");
	rc = mn_map_render(st, template_text, v, out);
	json_object_put(v);
	return rc;
}
