/*
 * specs.c
 *		The JSON the append functions send, built from the C specs.
 *
 * mnemo_new_part and mnemo_new_message (mnemo.h) describe what to append;
 * the server takes parts as JSON objects (append_message, append_part) and
 * messages as the objects of append_messages' array.  Only what the client
 * cannot send at all is refused here (a NULL role, a part without a type, a
 * NULL parts array, JSON text that does not parse): every other rule -- known
 * roles and part types, required fields, tool states, id lengths -- is the
 * server's, checked before it writes anything, so the two cannot disagree.
 *
 * JSON the caller gives as text (a part's content, a tool's input) is parsed
 * here only to check it, and sent as written: json-c would print an integer
 * beyond 64 bits as another number (it clamps), and the extension promises
 * that a part reads back exactly as appended.  The parsed object keeps the
 * caller's text as its serializer, so it prints verbatim inside the array or
 * object built around it.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "core/json.h"
#include "store/store.h"

#ifndef JSON_TOKENER_VALIDATE_UTF8
#define JSON_TOKENER_VALIDATE_UTF8 0
#endif

/*
 * Parse one complete JSON text: strict, nesting at most depth levels, and
 * nothing but white space after the value (json-c alone would stop at the
 * end of the first value and ignore the rest); UTF-8, RFC 8259's grammar
 * (json-c's strict mode is laxer) and no \u0000 or lone surrogate escape,
 * so that whatever the server's jsonb would refuse is FORMAT here, the
 * code doc/c-api.md promises, rather than its 22P02 or 22P05.  NULL with
 * FORMAT (or NOMEM) set; what names the argument.
 */
static struct json_object *
parse_json(mnemo_store *st, const char *text, const char *what, int depth)
{
	struct json_tokener *tok;
	struct json_object *obj;
	size_t		len = strlen(text);
	size_t		end;
	char	   *verbatim;

	if (len > INT_MAX)
	{
		mn_fail(st, MNEMO_ERR_FORMAT, "%s is too long (%zu bytes)", what, len);
		return NULL;
	}
	tok = json_tokener_new_ex(depth);
	if (tok == NULL)
	{
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, text, (int) len);
	if (obj == NULL)
	{
		enum json_tokener_error err = json_tokener_get_error(tok);

		/* a truncated text asks for more input rather than failing */
		if (err == json_tokener_error_depth)
			mn_fail(st, MNEMO_ERR_FORMAT, "%s nests deeper than %d levels", what, depth);
		else
			mn_fail(st, MNEMO_ERR_FORMAT, "%s is not valid JSON: %s", what,
					err == json_tokener_continue ? "unexpected end of input"
					: json_tokener_error_desc(err));
		json_tokener_free(tok);
		return NULL;
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
	{
		if (strchr(" \t\r\n", text[end]) == NULL)
		{
			mn_fail(st, MNEMO_ERR_FORMAT,
					"%s is not valid JSON: text after the value at offset %zu", what, end);
			json_object_put(obj);
			json_tokener_free(tok);
			return NULL;
		}
	}
	json_tokener_free(tok);
	/* json-c before 0.15 has no UTF-8 check: the server would answer 22021 */
	if (!mn_utf8_valid(text, len))
	{
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_FORMAT, "%s is not valid JSON: not UTF-8", what);
		return NULL;
	}
	/* what json-c's strict mode still takes and the server's json does not */
	if (!mn_json_well_formed((mn_span) {text, len}))
	{
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_FORMAT, "%s is not valid JSON: a single-quoted string, NaN, "
				"Infinity, a malformed number or a raw control character in a string", what);
		return NULL;
	}

	verbatim = malloc(len + 1);
	if (verbatim == NULL)
	{
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(verbatim, text, len + 1);
	/* valid JSON, but nothing jsonb can hold: refused here too, not as the
	 * server's 22P05 or 22P02 (the copy is dropped, so its rewrite is moot) */
	if (mn_json_scrub(verbatim, len) > 0)
	{
		free(verbatim);
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_FORMAT, "%s holds \\u0000 or a lone surrogate escape, "
				"which PostgreSQL's jsonb cannot hold", what);
		return NULL;
	}
	json_object_set_serializer(obj, json_object_userdata_to_json_string, verbatim,
							   json_object_free_userdata);
	return obj;
}

/* Add a member; the value is consumed either way.  false when out of memory. */
static bool
add(struct json_object *obj, const char *key, struct json_object *value)
{
	if (value == NULL)
		return false;
	if (json_object_object_add(obj, key, value) != 0)
	{
		json_object_put(value);
		return false;
	}
	return true;
}

/* Add a string member when the value is set. */
static bool
add_string(struct json_object *obj, const char *key, const char *value)
{
	return value == NULL || add(obj, key, json_object_new_string(value));
}

struct json_object *
mn_part_to_json(mnemo_store *st, const mnemo_new_part *part)
{
	struct json_object *obj;
	bool		good;

	if (part == NULL)
	{
		mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "part is NULL");
		return NULL;
	}

	if (part->content != NULL)
	{
		obj = parse_json(st, part->content, "part content", MNEMO_MAX_JSON_DEPTH);
		if (obj == NULL)
			return NULL;
		if (!json_object_is_type(obj, json_type_object) ||
			!json_object_object_get_ex(obj, "type", NULL))
		{
			json_object_put(obj);
			mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					"part content must be a JSON object with a \"type\"");
			return NULL;
		}
		return obj;
	}

	if (part->type == NULL)
	{
		mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "part has neither a type nor content");
		return NULL;
	}
	obj = json_object_new_object();
	if (obj == NULL)
	{
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}

	good = add_string(obj, "type", part->type) && add_string(obj, "id", part->id);
	if (good && strcmp(part->type, "tool") == 0)
	{
		good = add_string(obj, "tool_name", part->tool_name) &&
			add_string(obj, "tool_call_id", part->tool_call_id) &&
			add_string(obj, "tool_state", part->tool_state);
		if (good && part->tool_input != NULL)
		{
			struct json_object *input = parse_json(st, part->tool_input, "tool_input",
														   MNEMO_MAX_JSON_DEPTH - 1);

			if (input == NULL)
			{
				json_object_put(obj);
				return NULL;
			}
			good = add(obj, "input", input);
			/* jsonb sorts the keys of "input": the text keeps the model's order */
			if (good && !mn_json_jsonb_order((mn_span) {part->tool_input, strlen(part->tool_input)}))
				good = add_string(obj, "input_text", part->tool_input);
		}
		good = good && add_string(obj, "output", part->tool_output) &&
			add_string(obj, "error_message", part->error_message);
	}
	else if (good && strcmp(part->type, "file_ref") == 0)
	{
		good = add_string(obj, "content_id", part->content_id) &&
			add_string(obj, "path", part->path) &&
			add_string(obj, "file_type", part->file_type) &&
			add_string(obj, "summary", part->summary);
	}
	else if (good)
	{
		/* text, reasoning, and the free-form types, which render their text */
		good = add_string(obj, "text", part->text);
	}
	if (good && part->token_estimate >= 0)
		good = add(obj, "token_estimate", json_object_new_int(part->token_estimate));

	if (!good)
	{
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	return obj;
}

struct json_object *
mn_parts_to_json(mnemo_store *st, const mnemo_new_part *parts, size_t n)
{
	struct json_object *array;
	size_t		i;

	if (n > 0 && parts == NULL)
	{
		mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "n_parts is %zu but parts is NULL", n);
		return NULL;
	}
	array = json_object_new_array_ext((int) n);
	if (array == NULL)
	{
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++)
	{
		struct json_object *part = mn_part_to_json(st, &parts[i]);

		if (part == NULL)
		{
			json_object_put(array);
			return NULL;
		}
		if (json_object_array_add(array, part) != 0)
		{
			json_object_put(part);
			json_object_put(array);
			mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			return NULL;
		}
	}
	return array;
}

struct json_object *
mn_message_to_json(mnemo_store *st, const mnemo_new_message *msg)
{
	struct json_object *obj;
	struct json_object *parts;
	bool		good;

	if (msg == NULL)
	{
		mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "message is NULL");
		return NULL;
	}
	if (msg->role == NULL)
	{
		mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "message role is required");
		return NULL;
	}
	parts = mn_parts_to_json(st, msg->parts, msg->n_parts);
	if (parts == NULL)
		return NULL;
	obj = json_object_new_object();
	if (obj == NULL)
	{
		json_object_put(parts);
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	/* parts first: add() consumes it even when it fails */
	good = add(obj, "parts", parts) &&
		add_string(obj, "role", msg->role) &&
		add_string(obj, "id", msg->id) &&
		add_string(obj, "agent", msg->agent) &&
		add_string(obj, "model_id", msg->model_id) &&
		add_string(obj, "provider_id", msg->provider_id) &&
		add_string(obj, "run_id", msg->run_id) &&
		(!msg->is_summary || add(obj, "is_summary", json_object_new_boolean(1)));
	if (!good)
	{
		json_object_put(obj);
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	return obj;
}

const char *
mn_json_text(mnemo_store *st, struct json_object *obj)
{
	const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
													  JSON_C_TO_STRING_NOSLASHESCAPE);

	if (text == NULL)
		mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	return text;
}
