/*
 * free.c
 *		Releasing the rows the library hands out: sessions, messages, parts
 *		and their lists.
 *
 * Every string of a row is its own malloc'd block, so a row is released
 * field by field; a message owns its parts and a list its items.  The
 * mn_*_clear functions release what a struct holds and zero it, for the
 * converters' error paths and for structs that live inside arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

void
mn_session_clear(mnemo_session *s)
{
	free(s->id);
	free(s->parent_id);
	free(s->model_id);
	free(s->provider_id);
	free(s->agent);
	free(s->title);
	free(s->metadata);
	free(s->system_prompt);
	free(s->state);
	memset(s, 0, sizeof(*s));
}

void
mn_part_clear(mnemo_part *p)
{
	free(p->id);
	free(p->message_id);
	free(p->type);
	free(p->content);
	free(p->text);
	free(p->tool_name);
	free(p->tool_call_id);
	free(p->tool_state);
	free(p->tool_input);
	free(p->tool_output);
	free(p->error_message);
	memset(p, 0, sizeof(*p));
}

void
mn_message_clear(mnemo_message *m)
{
	free(m->id);
	free(m->session_id);
	free(m->role);
	free(m->agent);
	free(m->model_id);
	free(m->provider_id);
	free(m->run_id);
	free(m->finish_reason);
	for (size_t i = 0; i < m->n_parts; i++)
		mn_part_clear(&m->parts[i]);
	free(m->parts);
	memset(m, 0, sizeof(*m));
}

MNEMO_API void
mnemo_session_free(mnemo_session *s)
{
	if (s == NULL)
		return;
	mn_session_clear(s);
	free(s);
}

MNEMO_API void
mnemo_sessions_free(mnemo_sessions *list)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < list->count; i++)
		mn_session_clear(&list->items[i]);
	free(list->items);
	free(list);
}

MNEMO_API void
mnemo_part_free(mnemo_part *p)
{
	if (p == NULL)
		return;
	mn_part_clear(p);
	free(p);
}

MNEMO_API void
mnemo_parts_free(mnemo_parts *list)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < list->count; i++)
		mn_part_clear(&list->items[i]);
	free(list->items);
	free(list);
}

MNEMO_API void
mnemo_message_free(mnemo_message *m)
{
	if (m == NULL)
		return;
	mn_message_clear(m);
	free(m);
}

MNEMO_API void
mnemo_messages_free(mnemo_messages *list)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < list->count; i++)
		mn_message_clear(&list->items[i]);
	free(list->items);
	free(list);
}
