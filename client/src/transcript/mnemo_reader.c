/*
 * mnemo_reader.c
 *		The import reader of mnemo's own JSONL export (see export.c).
 *
 * Checkpoint lines (export.c) are restored after the import's last batch,
 * each at the seq of the messages above it, in one statement.
 *
 * The ids in the file are kept, so an import into another database restores
 * the session exactly, and a second import into the same database fails
 * with MNEMO_ERR_DUPLICATE_ID and leaves nothing; options.new_ids drops
 * them to copy a session instead.  The header line (export.c) gives the
 * session its id, title, agent, model, provider, system prompt, metadata,
 * state and created time; a file without one (an export of 0.2) still
 * imports.  A message key this reader does not know is kept in the
 * message's metadata.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

/* ------------------------------------------------------------------------
 * The mnemo export format
 * ------------------------------------------------------------------------ */

/* A string field, or JSON null for "not set"; FORMAT otherwise. */
static int
string_field(mn_import *imp, int64_t line, const char *key, struct json_object *v, char **dst)
{
	if (v == NULL)
		return MNEMO_OK;
	if (!json_object_is_type(v, json_type_string))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"%s\" must be a string",
					   line, key);
	free(*dst);
	if (!mn_import_strdup(json_object_get_string(v), dst))
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

static int
count_field(mn_import *imp, int64_t line, const char *key, struct json_object *v, int64_t *dst)
{
	if (v == NULL)
		return MNEMO_OK;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": \"%s\" must be a non-negative integer", line, key);
	*dst = json_object_get_int64(v);
	return MNEMO_OK;
}

static int
tokens_field(mn_import *imp, int64_t line, struct json_object *v, mn_import_msg *m)
{
	int			rc = MNEMO_OK;

	if (!json_object_is_type(v, json_type_object))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"tokens\" must be an object",
					   line);
	json_object_object_foreach(v, key, count)
	{
		int64_t    *dst;

		if (strcmp(key, "input") == 0)
			dst = &m->tokens.input;
		else if (strcmp(key, "output") == 0)
			dst = &m->tokens.output;
		else if (strcmp(key, "cache_read") == 0)
			dst = &m->tokens.cache_read;
		else if (strcmp(key, "cache_write") == 0)
			dst = &m->tokens.cache_write;
		else if (strcmp(key, "reasoning") == 0)
			dst = &m->tokens.reasoning;
		else
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": unknown key \"%s\" in \"tokens\"", line, key);
		if ((rc = count_field(imp, line, key, count, dst)) != MNEMO_OK)
			return rc;
	}
	m->has_tokens = true;
	return MNEMO_OK;
}

/*
 * One part of a line: the members are copied as written, except the status
 * fields (restored after the append) and, with new_ids, the id.
 */
static int
jsonl_part(mn_import *imp, int64_t line, size_t index, struct json_object *obj,
		   mn_span text, mn_import_msg *m)
{
	mn_import_part *p;
	struct json_object *type;
	size_t		pos = 0;
	mn_span		key,
				value;
	int			rc;

	if (!json_object_is_type(obj, json_type_object))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": parts[%zu] must be a JSON object", line, index);
	if (!json_object_object_get_ex(obj, "type", &type) ||
		!json_object_is_type(type, json_type_string))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": parts[%zu] has no \"type\" string", line, index);
	if ((p = mn_import_part_new(imp, m, NULL)) == NULL)
		return imp->st->errcode;

	while (mn_json_next_member(text, &pos, &key, &value))
	{
		static const char *const status[] = {"compacted_at", "started_at", "completed_at"};
		int64_t    *dst[] = {&p->compacted_at, &p->started_at, &p->completed_at};
		bool		is_status = false;

		for (int k = 0; k < 3; k++)
		{
			struct json_object *v;

			if (!mn_json_key_is(key, status[k]))
				continue;
			is_status = true;
			json_object_object_get_ex(obj, status[k], &v);
			if (v != NULL && (rc = count_field(imp, line, status[k], v, dst[k])) != MNEMO_OK)
				return rc;
		}
		if (is_status)
			continue;
		if (mn_json_key_is(key, "id"))
		{
			struct json_object *v;

			if (imp->new_ids)
				continue;
			json_object_object_get_ex(obj, "id", &v);
			if (v != NULL && !json_object_is_type(v, json_type_null) &&
				(rc = string_field(imp, line, "id", v, &p->id)) != MNEMO_OK)
				return rc;
		}
		if (p->members.len > 0)
			mn_buf_put(&p->members, ",", 1);
		mn_buf_put(&p->members, key.p, key.len);
		mn_buf_put(&p->members, ":", 1);
		mn_buf_put(&p->members, value.p, value.len);
	}
	if (p->members.oom)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

/* An integer member of a JSON object; false when absent or not one. */
static bool
int_member(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

/*
 * Whether a summary message's parts are what commit_summary writes (its
 * text, then a compaction marker naming kind, level, span and item count),
 * so that the compaction can be committed again rather than the message
 * appended: *sum gets what the marker says.
 */
static bool
compaction_of(struct json_object *parts, mn_import_summary *sum)
{
	struct json_object *text;
	struct json_object *marker;
	int64_t		tokens,
				level;

	if (json_object_array_length(parts) != 2)
		return false;
	text = json_object_array_get_idx(parts, 0);
	marker = json_object_array_get_idx(parts, 1);
	if (mn_js_str(text, "type", NULL) == NULL || strcmp(mn_js_str(text, "type", NULL), "text") != 0 ||
		(sum->text = mn_js_str(text, "text", NULL)) == NULL ||
		!int_member(text, "token_estimate", &tokens) ||
		mn_js_str(marker, "type", NULL) == NULL ||
		strcmp(mn_js_str(marker, "type", NULL), "compaction_marker") != 0 ||
		(sum->kind = mn_js_str(marker, "kind", NULL)) == NULL ||
		!int_member(marker, "level", &level) || !int_member(marker, "seq_start", &sum->seq_start) ||
		!int_member(marker, "seq_end", &sum->seq_end) ||
		!int_member(marker, "compacted_item_count", &sum->item_count) ||
		tokens < 0 || tokens > INT_MAX || level < 1 || level > 3)
		return false;
	sum->token_count = (int) tokens;
	sum->level = (int) level;
	return true;
}

/* The session's header: the first line, before any message. */
static int
header_line(mn_import *imp, int64_t line, struct json_object *obj, mn_span text)
{
	mn_import_session *s = &imp->session;
	const char *type = mn_js_str(obj, "type", NULL);
	int64_t		version = 0;
	char	   *id = NULL;
	mn_span		meta;
	int			rc = MNEMO_OK;

	if (type == NULL || strcmp(type, MNEMO_SESSION_HEADER) != 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": \"type\" must be \"" MNEMO_SESSION_HEADER "\"", line);
	if (imp->records > 1 || s->header)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a session header after the first line", line);
	json_object_object_foreach(obj, key, v)
	{
		if (strcmp(key, "type") == 0)
			continue;
		if (strcmp(key, "version") == 0)
			rc = count_field(imp, line, key, v, &version);
		else if (strcmp(key, "id") == 0)
			rc = string_field(imp, line, key, v, &id);
		else if (strcmp(key, "title") == 0)
			rc = string_field(imp, line, key, v, &s->title);
		/* a copy under new ids is no child of the original's parent */
		else if (strcmp(key, "parent_id") == 0 && !imp->new_ids)
			rc = string_field(imp, line, key, v, &s->parent_id);
		else if (strcmp(key, "agent") == 0)
			rc = string_field(imp, line, key, v, &s->agent);
		else if (strcmp(key, "model_id") == 0)
			rc = string_field(imp, line, key, v, &s->model_id);
		else if (strcmp(key, "provider_id") == 0)
			rc = string_field(imp, line, key, v, &s->provider_id);
		else if (strcmp(key, "system_prompt") == 0)
			rc = string_field(imp, line, key, v, &s->system_prompt);
		else if (strcmp(key, "created_at") == 0)
			rc = count_field(imp, line, key, v, &s->created_at);
		else if (strcmp(key, "metadata") == 0 || strcmp(key, "state") == 0)
		{
			char	  **dst = key[0] == 'm' ? &s->metadata : &s->state;

			if (!json_object_is_type(v, json_type_object) || !mn_json_member(text, key, &meta))
				rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": \"%s\" must be an object", line, key);
			else if ((*dst = strndup(meta.p, meta.len)) == NULL)
				rc = mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		}
		/* keys of later versions are theirs to define */
		if (rc != MNEMO_OK)
			break;
	}
	if (rc == MNEMO_OK && (version < 1 || version > MNEMO_SESSION_HEADER_VERSION))
		rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
					 "line %" PRId64 ": a session header of version %" PRId64 "; this mnemo "
					 "reads versions 1 and 2", line, version);
	if (rc == MNEMO_OK && id != NULL && imp->opts->session_id == NULL)
	{
		free(s->want_id);
		s->want_id = id;
		id = NULL;
	}
	free(id);
	s->header = rc == MNEMO_OK;
	return rc;
}

/* A checkpoint: at the end of the messages above it. */
static int
checkpoint_line(mn_import *imp, int64_t line, struct json_object *obj)
{
	const char *label = mn_js_str(obj, "label", NULL);
	struct json_object *v;
	int64_t		created_at = 0;
	bool		is_auto = false;
	int			rc;

	if (label == NULL || label[0] == '\0' || strlen(label) > MNEMO_ID_MAX)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a checkpoint's \"label\" must be a string of 1 to %d "
					   "bytes", line, MNEMO_ID_MAX);
	if (json_object_object_get_ex(obj, "auto", &v))
	{
		if (!json_object_is_type(v, json_type_boolean))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": \"auto\" must be a boolean", line);
		is_auto = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(obj, "created_at", &v) &&
		(rc = count_field(imp, line, "created_at", v, &created_at)) != MNEMO_OK)
		return rc;
	/* keys of later versions are theirs to define */
	return mn_import_checkpoint(imp, line, label, is_auto, created_at);
}

static int
jsonl_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		   struct json_object *obj)
{
	mnemo_store *st = imp->st;
	mn_import_msg *m;
	struct json_object *parts = NULL;
	mn_span		whole = {text, len};
	mn_span		parts_text;
	mn_import_summary sum = {0};
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	(void) state;
	if (!json_object_is_type(obj, json_type_object))
		return mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": a message must be a JSON object",
					   line);
	if (json_object_object_get_ex(obj, "type", NULL))
	{
		const char *type = mn_js_str(obj, "type", NULL);

		if (type != NULL && strcmp(type, MNEMO_CHECKPOINT_LINE) == 0)
			return checkpoint_line(imp, line, obj);
		return header_line(imp, line, obj, whole);
	}
	if ((m = mn_import_msg_new(imp, line, NULL)) == NULL)
		return st->errcode;

	json_object_object_foreach(obj, key, v)
	{
		if (strcmp(key, "id") == 0)
			rc = imp->new_ids ? MNEMO_OK : string_field(imp, line, key, v, &m->id);
		else if (strcmp(key, "role") == 0)
			rc = string_field(imp, line, key, v, &m->role);
		else if (strcmp(key, "agent") == 0)
			rc = string_field(imp, line, key, v, &m->agent);
		else if (strcmp(key, "model_id") == 0)
			rc = string_field(imp, line, key, v, &m->model_id);
		else if (strcmp(key, "provider_id") == 0)
			rc = string_field(imp, line, key, v, &m->provider_id);
		else if (strcmp(key, "run_id") == 0)
			rc = string_field(imp, line, key, v, &m->run_id);
		else if (strcmp(key, "finish_reason") == 0)
			rc = string_field(imp, line, key, v, &m->finish_reason);
		else if (strcmp(key, "is_summary") == 0)
		{
			if (v != NULL && !json_object_is_type(v, json_type_boolean))
				rc = mn_fail(st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": \"is_summary\" must be a boolean", line);
			else
				m->is_summary = v != NULL && json_object_get_boolean(v);
		}
		else if (strcmp(key, "tokens") == 0)
			rc = v == NULL ? MNEMO_OK : tokens_field(imp, line, v, m);
		else if (strcmp(key, "cost") == 0)
		{
			double		cost = v ? json_object_get_double(v) : 0;

			if (v != NULL && ((!json_object_is_type(v, json_type_double) &&
							   !json_object_is_type(v, json_type_int)) ||
							  !isfinite(cost) || cost < 0))
				rc = mn_fail(st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": \"cost\" must be a non-negative number", line);
			else if (v != NULL)
				m->cost = cost;
		}
		else if (strcmp(key, "parts") == 0)
			parts = v;
		else if (strcmp(key, "created_at") == 0)
			rc = count_field(imp, line, key, v, &m->created_at);
		else
		{
			mn_span		raw;

			if (mn_json_member(whole, key, &raw))
				mn_import_keep(imp, m, key, raw, NULL);
		}
		if (rc != MNEMO_OK)
			break;
	}
	if (rc == MNEMO_OK && m->role == NULL)
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"role\" is required", line);
	/* without a header, the session takes the first message's agent and model */
	if (rc == MNEMO_OK && !imp->session.header && !imp->created && imp->n_batch == 0 &&
		(!mn_import_strdup(m->agent, &imp->session.agent) ||
		 !mn_import_strdup(m->model_id, &imp->session.model_id) ||
		 !mn_import_strdup(m->provider_id, &imp->session.provider_id)))
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (rc == MNEMO_OK && !json_object_is_type(parts, json_type_array))
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"parts\" must be an array", line);
	if (rc == MNEMO_OK && !mn_json_member(whole, "parts", &parts_text))
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"parts\" not found", line);
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(parts); i++)
	{
		mn_span		part_text;

		if (!mn_json_next_element(parts_text, &pos, &part_text))
			rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": parts[%zu] not found", line, i);
		else
			rc = jsonl_part(imp, line, i, json_object_array_get_idx(parts, i), part_text, m);
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	if (m->is_summary && compaction_of(parts, &sum))
	{
		mn_span		text_part;

		/* its text part's metadata goes back through commit_summary */
		pos = 0;
		if (mn_json_next_element(parts_text, &pos, &text_part) &&
			json_object_object_get_ex(json_object_array_get_idx(parts, 0), "metadata", NULL))
			(void) mn_json_member(text_part, "metadata", &sum.metadata);
		return mn_import_summary_push(imp, m, &sum);
	}
	return mn_import_push(imp, m);
}

static bool
jsonl_detect(struct json_object *first)
{
	const char *type = mn_js_str(first, "type", NULL);

	return json_object_object_get_ex(first, "parts", NULL) ||
		(type != NULL && (strcmp(type, MNEMO_SESSION_HEADER) == 0 ||
						  strcmp(type, MNEMO_CHECKPOINT_LINE) == 0));
}

/* A header line begins a session: exports written one after another
 * (mnemo export A B) are read back as a session each. */
static const char *
jsonl_document(struct json_object *obj)
{
	const char *type = mn_js_str(obj, "type", NULL);

	return type != NULL && strcmp(type, MNEMO_SESSION_HEADER) == 0 ? "" : NULL;
}

const mn_reader mn_mnemo_reader = {
	"mnemo", jsonl_detect, jsonl_document, NULL, NULL, jsonl_line, NULL, NULL, NULL, NULL, NULL
};
