/*
 * anthropic.c
 *		Content blocks of the Anthropic Messages API as mnemo parts, for
 *		every format built on it (Claude Code logs, Anthropic message lists).
 *
 *	user:		text -> text part; image -> image part (media_type and the
 *				base64 data, or the URL); tool_result -> the result of its
 *				call (tool_calls.c), content a string or a list of blocks as
 *				written, is_error -> state "error".
 *	assistant:	text -> text; thinking -> reasoning with its signature;
 *				redacted_thinking -> reasoning "" with its "data";
 *				tool_use -> tool part (tool_name, tool_call_id, input).
 * A block of any other type is kept whole in the message's metadata under
 * "content[i]", and reported.  Text and inputs are copied from the input as
 * written (cut out of the line, never re-printed by json-c).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

static const char *
block_type(mn_import *imp, int64_t line, size_t i, struct json_object *block)
{
	const char *type = json_object_is_type(block, json_type_object) ? mn_js_str(block, "type", NULL) : NULL;

	if (type == NULL)
		mn_fail(imp->st, MNEMO_ERR_FORMAT,
				"line %" PRId64 ": content[%zu] is not a block with a \"type\"", line, i);
	return type;
}

/* A string member of a block into a part, as written. */
static int
string_member(mn_import *imp, int64_t line, size_t i, mn_span block_text,
			  struct json_object *block, const char *type, const char *key,
			  mn_import_part *p, const char *as)
{
	mn_span		v;

	if (mn_js_str(block, key, NULL) == NULL || !mn_json_member(block_text, key, &v))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": content[%zu] is a %s block without \"%s\"", line, i,
					   type, key);
	mn_part_put_raw(p, as, v);
	return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
keep_block(mn_import *imp, mn_import_msg *m, size_t i, const char *type, mn_span block_text)
{
	char		key[32];

	snprintf(key, sizeof(key), "content[%zu]", i);
	mn_import_keep(imp, m, key, block_text, type);
	return m->meta.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
image_block(mn_import *imp, mn_import_msg *m, struct json_object *block)
{
	struct json_object *source = mn_js_obj(block, "source");
	const char *data;
	size_t		len = 0;

	if (source == NULL)
		return mn_import_image(imp, m, NULL, NULL, 0, "");
	data = mn_js_str(source, "data", &len);
	return mn_import_image(imp, m, mn_js_str(source, "media_type", NULL), data, len,
						   mn_js_str(source, "url", NULL));
}

int
mn_anthropic_user_block(mn_import *imp, mn_calls *calls, int64_t line, size_t i,
						struct json_object *block, mn_span block_text, mn_span result_meta,
						mn_import_msg **m)
{
	const char *type = block_type(imp, line, i, block);
	mn_import_part *p;

	if (type == NULL)
		return imp->st->errcode;
	if (strcmp(type, "tool_result") == 0)
	{
		const char *call_id = mn_js_str(block, "tool_use_id", NULL);
		struct json_object *flag;
		mn_span		content = {NULL, 0};
		struct json_object *c;

		if (call_id == NULL)
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": a tool_result without a \"tool_use_id\" string", line);
		if (json_object_object_get_ex(block, "content", &c) && !json_object_is_type(c, json_type_null))
			(void) mn_json_member(block_text, "content", &content);
		return mn_calls_result(imp, calls, line, call_id, NULL,
							   json_object_object_get_ex(block, "is_error", &flag) &&
							   json_object_get_boolean(flag),
							   0, content, result_meta);
	}
	if (*m == NULL && (*m = mn_import_msg_new(imp, line, "user")) == NULL)
		return imp->st->errcode;
	if (strcmp(type, "text") == 0)
	{
		if ((p = mn_import_part_new(imp, *m, "text")) == NULL)
			return imp->st->errcode;
		return string_member(imp, line, i, block_text, block, type, "text", p, "text");
	}
	if (strcmp(type, "image") == 0)
		return image_block(imp, *m, block);
	return keep_block(imp, *m, i, type, block_text);
}

int
mn_anthropic_assistant_block(mn_import *imp, mn_calls *calls, int64_t line, size_t i,
							 struct json_object *block, mn_span block_text, mn_import_msg *m)
{
	const char *type = block_type(imp, line, i, block);
	mn_import_part *p;
	mn_span		raw;
	int			rc;

	if (type == NULL)
		return imp->st->errcode;
	if (strcmp(type, "text") == 0)
	{
		if ((p = mn_import_part_new(imp, m, "text")) == NULL)
			return imp->st->errcode;
		return string_member(imp, line, i, block_text, block, type, "text", p, "text");
	}
	if (strcmp(type, "thinking") == 0)
	{
		if ((p = mn_import_part_new(imp, m, "reasoning")) == NULL)
			return imp->st->errcode;
		if ((rc = string_member(imp, line, i, block_text, block, type, "thinking", p, "text")) != MNEMO_OK)
			return rc;
		if (mn_js_str(block, "signature", NULL) != NULL && mn_json_member(block_text, "signature", &raw))
			mn_part_put_raw(p, "signature", raw);
		return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
	}
	if (strcmp(type, "redacted_thinking") == 0)
	{
		if ((p = mn_import_part_new(imp, m, "reasoning")) == NULL)
			return imp->st->errcode;
		mn_part_put_string(p, "text", "", 0);
		if (mn_json_member(block_text, "data", &raw))
			mn_part_put_raw(p, "data", raw);
		return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
	}
	if (strcmp(type, "tool_use") == 0)
	{
		const char *name = mn_js_str(block, "name", NULL);
		const char *call_id = mn_js_str(block, "id", NULL);
		struct json_object *input;
		mn_span		input_text = {NULL, 0};

		if (name == NULL || call_id == NULL)
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a tool_use without \"name\" and \"id\"",
						   line, i);
		if (json_object_object_get_ex(block, "input", &input) &&
			!json_object_is_type(input, json_type_null))
		{
			if (!json_object_is_type(input, json_type_object))
				return mn_fail(imp->st, MNEMO_ERR_FORMAT,
							   "line %" PRId64 ": content[%zu] is a tool_use whose input is not an object",
							   line, i);
			(void) mn_json_member(block_text, "input", &input_text);
		}
		return mn_import_tool_call(imp, calls, m, name, call_id, input_text) ? MNEMO_OK
			: imp->st->errcode;
	}
	return keep_block(imp, m, i, type, block_text);
}
