/*
 * import_message.c
 *		The messages and parts a transcript reader builds for an import:
 *		each part kept as the JSON text of its members, cut out of the input
 *		and sent as it is, and what a reader cannot map kept as metadata.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

bool
mn_import_strdup(const char *s, char **dst)
{
	if (s == NULL)
	{
		*dst = NULL;
		return true;
	}
	*dst = strdup(s);
	return *dst != NULL;
}

int
mn_import_oom(mn_import *imp)
{
	return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
}

mn_import_msg *
mn_import_msg_new(mn_import *imp, int64_t line, const char *role)
{
	mn_import_msg *m = calloc(1, sizeof(*m));

	if (m == NULL || !mn_import_strdup(role, &m->role))
	{
		free(m);
		mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	m->line = line;
	m->cost = -1;
	return m;
}

void
mn_import_msg_free(mn_import_msg *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n_parts; i++)
	{
		mn_buf_free(&m->parts[i].members);
		free(m->parts[i].id);
	}
	free(m->parts);
	free(m->role);
	free(m->id);
	free(m->agent);
	free(m->model_id);
	free(m->provider_id);
	free(m->run_id);
	free(m->finish_reason);
	mn_buf_free(&m->meta);
	free(m);
}

mn_import_part *
mn_import_part_new(mn_import *imp, mn_import_msg *m, const char *type)
{
	mn_import_part *p;

	if (m->n_parts == m->cap_parts)
	{
		size_t		cap = m->cap_parts ? m->cap_parts * 2 : 4;
		mn_import_part *grown = realloc(m->parts, cap * sizeof(*grown));

		if (grown == NULL)
		{
			mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
			return NULL;
		}
		m->parts = grown;
		m->cap_parts = cap;
	}
	p = &m->parts[m->n_parts++];
	memset(p, 0, sizeof(*p));
	if (type != NULL)
		mn_part_put_string(p, "type", type, strlen(type));
	return p;
}

static void
member_key(mn_import_part *p, const char *key)
{
	if (p->members.len > 0)
		mn_buf_put(&p->members, ",", 1);
	mn_buf_put_jstr(&p->members, key, strlen(key));
	mn_buf_put(&p->members, ":", 1);
}

void
mn_import_put_field(mn_buf *b, const char *key, const char *value)
{
	if (value == NULL)
		return;
	mn_buf_put(b, ",", 1);
	mn_buf_put_jstr(b, key, strlen(key));
	mn_buf_put(b, ":", 1);
	mn_buf_put_jstr(b, value, strlen(value));
}

void
mn_part_put_string(mn_import_part *p, const char *key, const char *s, size_t len)
{
	member_key(p, key);
	mn_buf_put_jstr(&p->members, s, len);
}

void
mn_part_put_raw(mn_import_part *p, const char *key, mn_span value)
{
	member_key(p, key);
	mn_buf_put(&p->members, value.p, value.len);
}

void
mn_import_keep(mn_import *imp, mn_import_msg *m, const char *key, mn_span value,
			   const char *kind)
{
	if (m->meta.len > 0)
		mn_buf_put(&m->meta, ",", 1);
	mn_buf_put_jstr(&m->meta, key, strlen(key));
	mn_buf_put(&m->meta, ":", 1);
	mn_buf_put(&m->meta, value.p, value.len);
	if (imp->opts->kept != NULL)
		imp->opts->kept(m->line, kind != NULL ? kind : key, imp->opts->progress_arg);
}

/* Whether key is one of known (NULL-terminated). */
static bool
is_known(const char *const *known, const char *key)
{
	for (; *known != NULL; known++)
		if (strcmp(*known, key) == 0)
			return true;
	return false;
}

void
mn_import_keep_others(mn_import *imp, mn_import_msg *m, struct json_object *obj, mn_span text,
					  const char *const *known)
{
	json_object_object_foreach(obj, key, v)
	{
		mn_span		raw;

		(void) v;
		if (!is_known(known, key) && mn_json_member(text, key, &raw))
			mn_import_keep(imp, m, key, raw, NULL);
	}
}

void
mn_import_others(struct json_object *obj, mn_span text, const char *const *known, mn_buf *out)
{
	json_object_object_foreach(obj, key, v)
	{
		mn_span		raw;

		(void) v;
		if (is_known(known, key) || !mn_json_member(text, key, &raw))
			continue;
		mn_buf_puts(out, out->len > 0 ? "," : "{");
		mn_buf_put_jstr(out, key, strlen(key));
		mn_buf_puts(out, ":");
		mn_buf_put(out, raw.p, raw.len);
	}
	if (out->len > 0)
		mn_buf_puts(out, "}");
}

const char *
mn_history_document(struct json_object *obj)
{
	return mn_js_arr(obj, "history") != NULL ? "history" : NULL;
}

int
mn_import_session_meta(mn_import *imp, struct json_object *obj, mn_span text, const char *source,
					   const char *const *known)
{
	mn_buf		meta = {0};
	mn_buf		rest = {0};

	mn_import_others(obj, text, known, &rest);
	mn_buf_puts(&meta, "{\"source\":");
	mn_buf_put_jstr(&meta, source, strlen(source));
	if (rest.len > 1)
	{
		mn_buf_puts(&meta, ",");
		mn_buf_put(&meta, rest.data + 1, rest.len - 1);	/* its members and } */
	}
	else
		mn_buf_puts(&meta, "}");
	mn_buf_free(&rest);
	if (meta.oom)
	{
		mn_buf_free(&meta);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	free(imp->session.metadata);
	imp->session.metadata = meta.data;
	return MNEMO_OK;
}
