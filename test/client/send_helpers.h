/*
 * send_helpers.h
 *		What the chat-turn tests (t_send.c, t_send_failures.c) share: the
 *		turn's part callback that collects what it heard, the turn options
 *		for the scripted provider server, a session, its messages.  Include
 *		after helpers.h and provider.h.
 */
#ifndef MNEMO_TEST_SEND_HELPERS_H
#define MNEMO_TEST_SEND_HELPERS_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"

typedef struct collected
{
	char		text[8192];
	size_t		len;
	int			n_text;
	int			n_reasoning;
	int			n_tool;
	char		tool_part[MNEMO_ID_MAX + 1];
	int			stop_after;		/* > 0: return non-zero at that delta */
	atomic_int	deltas;
} collected;

static inline int
on_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	collected  *c = arg;

	(void) st;
	if (strcmp(p->type, "text") == 0)
	{
		if (c->len + p->len < sizeof(c->text))
		{
			memcpy(c->text + c->len, p->delta, p->len);
			c->len += p->len;
		}
		c->n_text++;
	}
	else if (strcmp(p->type, "reasoning") == 0)
		c->n_reasoning++;
	else if (strcmp(p->type, "tool") == 0)
	{
		c->n_tool++;
		snprintf(c->tool_part, sizeof(c->tool_part), "%s", p->part_id);
	}
	atomic_fetch_add(&c->deltas, 1);
	return c->stop_after > 0 && atomic_load(&c->deltas) >= c->stop_after;
}

static inline void
options(mnemo_turn_options *o, const server *s, const char *provider, char *url, size_t urlsize)
{
	memset(o, 0, sizeof(*o));
	o->provider = provider;
	snprintf(url, urlsize, "%s%s", s->url, strcmp(provider, "openai") == 0 ? "/v1" : "");
	o->base_url = url;
	o->api_key = KEY;
}

static inline void
session(mnemo_store *st, const char *id, const char *provider, const char *model)
{
	mnemo_new_session spec = {0};

	spec.id = id;
	spec.provider_id = provider;
	spec.model_id = model;
	spec.system_prompt = "You are terse.";
	create_session(st, &spec);
}

static inline mnemo_messages *
messages(mnemo_store *st, const char *sid)
{
	mnemo_messages *m = NULL;

	if (mnemo_messages_get(st, sid, NULL, true, &m) != MNEMO_OK)
		bail_out("messages of %s: %s", sid, mnemo_errmsg(st));
	return m;
}

static inline const mnemo_message *
last_message(const mnemo_messages *m)
{
	return m->count ? &m->items[m->count - 1] : NULL;
}


#endif
