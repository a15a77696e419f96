/*
 * schema.c
 *		The subset of JSON Schema a map's output is validated against.
 *
 * Debian ships no maintained C JSON Schema validator (apt-cache search
 * json schema: Python, Perl and Go ones only), so this is the subset the
 * operators need, on json-c: type (a name or an array of names; "integer"
 * is a number without a fraction), properties, required,
 * additionalProperties (false only), items (one schema), enum, and the
 * annotations that do not constrain (title, description, $schema,
 * default, examples).  mn_schema_check refuses any other keyword when the
 * map is created, so a schema is never silently validated less than it
 * says.  Errors name the path (as $.a[2].b) and the rule.
 */
#define _POSIX_C_SOURCE 200809L
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "map/map.h"

static const char *const keywords[] = {
	"type", "properties", "required", "additionalProperties", "items", "enum",
	"title", "description", "$schema", "default", "examples", NULL
};

static const char *const types[] = {
	"object", "array", "string", "number", "integer", "boolean", "null", NULL
};

static bool
listed(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static int
check_at(mnemo_store *st, struct json_object *schema, const char *path)
{
	struct json_object *v;
	char		sub[512];

	if (!json_object_is_type(schema, json_type_object))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "schema %s: not an object", path);
	json_object_object_foreach(schema, key, val)
	{
		if (!listed(key, keywords))
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
						   "schema %s: keyword \"%s\" is not supported (type, properties, "
						   "required, additionalProperties, items, enum)", path, key);
		(void) val;
	}
	if (json_object_object_get_ex(schema, "type", &v))
	{
		size_t		n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;

		for (size_t i = 0; i < n; i++)
		{
			struct json_object *t = json_object_is_type(v, json_type_array)
				? json_object_array_get_idx(v, i) : v;

			if (!json_object_is_type(t, json_type_string) ||
				!listed(json_object_get_string(t), types))
				return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "schema %s: unknown type", path);
		}
	}
	if (json_object_object_get_ex(schema, "required", &v))
	{
		if (!json_object_is_type(v, json_type_array))
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "schema %s: required is not an array", path);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
				return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
							   "schema %s: required holds a non-string", path);
	}
	if (json_object_object_get_ex(schema, "enum", &v) && !json_object_is_type(v, json_type_array))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "schema %s: enum is not an array", path);
	if (json_object_object_get_ex(schema, "additionalProperties", &v) &&
		!json_object_is_type(v, json_type_boolean))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "schema %s: additionalProperties must be true or false", path);
	if (json_object_object_get_ex(schema, "items", &v))
	{
		snprintf(sub, sizeof(sub), "%s[]", path);
		if (check_at(st, v, sub) != MNEMO_OK)
			return st->errcode;
	}
	if (json_object_object_get_ex(schema, "properties", &v))
	{
		if (!json_object_is_type(v, json_type_object))
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
						   "schema %s: properties is not an object", path);
		json_object_object_foreach(v, name, prop)
		{
			snprintf(sub, sizeof(sub), "%s.%s", path, name);
			if (check_at(st, prop, sub) != MNEMO_OK)
				return st->errcode;
		}
	}
	return MNEMO_OK;
}

/*
 * One whole JSON text: *value (NULL for JSON null) and NULL, or why it is
 * not JSON.  json-c alone stops at the end of the first value and ignores
 * the rest, so "{...} Hope this helps!" would pass for the object; only
 * white space may follow the value here.
 */
const char *
mn_map_parse_json(const char *text, struct json_object **value)
{
	struct json_tokener *tok = json_tokener_new();
	size_t		len = strlen(text);
	const char *why = NULL;

	*value = NULL;
	if (tok == NULL)
		return "out of memory";
	if (len > INT_MAX)
		why = "too long";
	else
	{
		enum json_tokener_error jerr;

		*value = json_tokener_parse_ex(tok, text, (int) len);
		jerr = json_tokener_get_error(tok);
		if (jerr == json_tokener_continue)
			why = "unexpected end of input";
		else if (jerr != json_tokener_success)
			why = json_tokener_error_desc(jerr);
		else
			for (size_t end = json_tokener_get_parse_end(tok); end < len; end++)
				if (strchr(" \t\r\n", text[end]) == NULL)
				{
					why = "text after the value";
					break;
				}
	}
	json_tokener_free(tok);
	if (why != NULL)
	{
		json_object_put(*value);
		*value = NULL;
	}
	return why;
}

int
mn_schema_check(mnemo_store *st, struct json_object *schema)
{
	return check_at(st, schema, "$");
}

static bool
is_type(struct json_object *value, const char *type)
{
	enum json_type t = json_object_get_type(value);

	if (strcmp(type, "integer") == 0)
		return t == json_type_int ||
			(t == json_type_double && floor(json_object_get_double(value)) == json_object_get_double(value));
	if (strcmp(type, "number") == 0)
		return t == json_type_int || t == json_type_double;
	if (strcmp(type, "object") == 0)
		return t == json_type_object;
	if (strcmp(type, "array") == 0)
		return t == json_type_array;
	if (strcmp(type, "string") == 0)
		return t == json_type_string;
	if (strcmp(type, "boolean") == 0)
		return t == json_type_boolean;
	return t == json_type_null;
}

static int
validate_at(mnemo_store *st, struct json_object *schema, struct json_object *value,
			const char *path)
{
	struct json_object *v;
	char		sub[512];

	if (json_object_object_get_ex(schema, "type", &v))
	{
		bool		ok = false;
		size_t		n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;

		for (size_t i = 0; i < n && !ok; i++)
			ok = is_type(value, json_object_get_string(json_object_is_type(v, json_type_array)
													   ? json_object_array_get_idx(v, i) : v));
		if (!ok)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "%s: expected type %s", path,
						   json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	}
	if (json_object_object_get_ex(schema, "enum", &v))
	{
		bool		ok = false;

		for (size_t i = 0; i < json_object_array_length(v) && !ok; i++)
			ok = json_object_equal(json_object_array_get_idx(v, i), value);
		if (!ok)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "%s: not one of %s", path,
						   json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	}
	if (json_object_is_type(value, json_type_object))
	{
		struct json_object *props = NULL;
		struct json_object *extra;

		(void) json_object_object_get_ex(schema, "properties", &props);
		if (json_object_object_get_ex(schema, "required", &v))
			for (size_t i = 0; i < json_object_array_length(v); i++)
			{
				const char *name = json_object_get_string(json_object_array_get_idx(v, i));

				if (!json_object_object_get_ex(value, name, NULL))
					return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
								   "%s: required property \"%s\" is missing", path, name);
			}
		json_object_object_foreach(value, name, member)
		{
			struct json_object *ps;

			snprintf(sub, sizeof(sub), "%s.%s", path, name);
			if (props != NULL && json_object_object_get_ex(props, name, &ps))
			{
				if (validate_at(st, ps, member, sub) != MNEMO_OK)
					return st->errcode;
			}
			else if (json_object_object_get_ex(schema, "additionalProperties", &extra) &&
					 !json_object_get_boolean(extra))
				return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
							   "%s: property not allowed (additionalProperties is false)", sub);
		}
	}
	if (json_object_is_type(value, json_type_array) &&
		json_object_object_get_ex(schema, "items", &v))
		for (size_t i = 0; i < json_object_array_length(value); i++)
		{
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (validate_at(st, v, json_object_array_get_idx(value, i), sub) != MNEMO_OK)
				return st->errcode;
		}
	return MNEMO_OK;
}

int
mn_schema_validate(mnemo_store *st, struct json_object *schema, struct json_object *value)
{
	return validate_at(st, schema, value, "$");
}

MNEMO_API int
mnemo_map_validate(mnemo_store *st, const char *schema, const char *output)
{
	struct json_object *s;
	struct json_object *v;
	const char *why;
	int			rc;

	if (mn_begin(st, schema != NULL && output != NULL, "a schema and an output are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	if ((s = json_tokener_parse(schema)) == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the schema is not JSON");
	if ((rc = mn_schema_check(st, s)) == MNEMO_OK)
	{
		if ((why = mn_map_parse_json(output, &v)) != NULL)
			rc = mn_fail(st, MNEMO_ERR_FORMAT, "the output is not JSON: %s", why);
		else
			rc = mn_schema_validate(st, s, v);
		json_object_put(v);
	}
	json_object_put(s);
	return rc;
}
