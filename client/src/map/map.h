/*
 * map.h
 *		The map room: LLMMap and AgenticMap over the durable maps of the
 *		extension (mnemo.maps, mnemo.map_items).
 *
 * Owns: map/ (template.c, the {{ item }} templates; schema.c, the JSON
 * Schema subset; llm.c, one LLMMap item; agentic.c, one AgenticMap item;
 * run.c, the workers that claim and record items; maps.c, create, status
 * and the SQL they run).  May call: chat/ (the turn's settings, for
 * LLMMap's requests; mnemo_session_send, for AgenticMap), stream/, store/,
 * events/, core/.  Nothing below calls into map/.
 */
#ifndef MNEMO_MAP_ROOM_H
#define MNEMO_MAP_ROOM_H

#include "core/json.h"
#include "chat/chat.h"
#include "store/store.h"

struct json_object;

/* A map as stored: what every run of it needs (maps.c). */
typedef struct mn_map
{
	char	   *session_id;
	char	   *map_id;
	bool		agentic;
	int			item_count;
	char	   *template_text;
	char	   *schema;			/* JSON text or NULL */
	int			max_retries;
	int			timeout_ms;
	int			backoff_ms;
	char	   *system_prompt;
	char	   *retry_guidance;
	int			max_turns;
	char	   *continuation;
} mn_map;

/* One claimed item, and its outcome once worked. */
typedef struct mn_map_item
{
	int			ordinal;
	char	   *item;			/* JSON */
	int			claims;
	/* the outcome */
	bool		success;
	char	   *output;			/* JSON (schema) or text */
	const char *error_kind;
	char	   *error;
	int			attempts;
	char		sub_session_id[MNEMO_ID_MAX + 1];
} mn_map_item;

/* template.c */
int			mn_map_render(mnemo_store *st, const char *template_text,
						  struct json_object *item, char **out);

/* schema.c: one whole JSON text into *value, else why it is not JSON */
const char *mn_map_parse_json(const char *text, struct json_object **value);

/* schema.c: MNEMO_OK, or INVALID_ARGUMENT saying where and why */
int			mn_schema_check(mnemo_store *st, struct json_object *schema);
int			mn_schema_validate(mnemo_store *st, struct json_object *schema,
							   struct json_object *value);

/* A worker's own handle and what it resolved once for every item. */
typedef struct mn_map_worker
{
	mnemo_store *st;			/* its own connection and transport */
	mnemo_session *parent;		/* the map's session */
	turn_cfg	cfg;			/* LLMMap: provider, model, URL, key */
	bool		cfg_ok;
	int			cfg_error;		/* why not (NO_PROVIDER, ...) */
	char	   *cfg_message;
} mn_map_worker;

/* llm.c, agentic.c: work one item; its outcome goes into it (an item's
 * failure is its outcome, not an error) */
void		mn_map_llm_item(mn_map_worker *w, const mn_map *m, const mnemo_map_options *o,
							mn_map_item *it);
void		mn_map_agentic_item(mn_map_worker *w, const mn_map *m, const mnemo_map_options *o,
								mn_map_item *it);

/* The outcome of an item: a failure of kind with a message. */
void		mn_map_item_fail(mn_map_item *it, const char *kind, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* maps.c */
int			mn_map_load(mnemo_store *st, const char *session_id, const char *map_id, mn_map *m);
void		mn_map_clear(mn_map *m);
int			mn_map_claim(mnemo_store *st, const mn_map *m, const char *holder, int n,
						 int lease_ms, mn_map_item **items, int *count);
int			mn_map_record(mnemo_store *st, const mn_map *m, const char *holder,
						  const mn_map_item *it, bool *recorded, bool *map_done);
void		mn_map_item_clear(mn_map_item *it);

/* The default lease of a map's item. */
int			mn_map_lease_ms(const mn_map *m, const mnemo_map_options *o);

#endif							/* MNEMO_MAP_ROOM_H */
