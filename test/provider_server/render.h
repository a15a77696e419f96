/*
 * render.h: what render.c and render_stream.c share: a response as a list
 * of events, and what every event of one response shares (ctx).
 */
#ifndef PROVIDER_SERVER_RENDER_H
#define PROVIDER_SERVER_RENDER_H

#include "ps.h"

typedef struct event
{
	buf			b;
	bool		content;		/* generated: gets the line-ending conversion */
} event;

typedef struct evlist
{
	event	   *ev;
	size_t		n;
	size_t		cap;
} evlist;

/* what every event of one response shares */
typedef struct ctx
{
	const reply *r;
	const request_info *ri;
	char	   *id;
	const char *model;			/* NULL = omitted */
	long long	created;
	bool		has_tools;
	long long	usage[6];
	bool		show_cache;
	bool		show_reasoning;
} ctx;

/* render.c */
/* a new event at the end of l; generated content gets the line-ending conversion */
buf		   *ev_new(evlist *l, bool content);
size_t		tool_count(const reply *r);
/* the finish reason to send, or NULL for `finish none` */
const char *finish_reason(const ctx *c);

/* render_stream.c */
void		oa_stream(evlist *l, const ctx *c);
void		an_stream(evlist *l, const ctx *c);
/* an Anthropic event named name, its data to be written into the buffer returned */
buf		   *an_event(evlist *l, const char *name);
/* Anthropic's usage object: the input counts when input, then output */
void		an_usage(buf *b, const ctx *c, bool input, long long output);
/* the id of tool item it's k-th call: given, or prefix and a number */
char	   *tool_id(const ctx *c, const item *it, size_t k, const char *prefix);

#endif							/* PROVIDER_SERVER_RENDER_H */
