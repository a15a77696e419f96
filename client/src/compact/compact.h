/*
 * compact.h
 *		The compaction room: mnemo_compact's loop (engine.c), the levels
 *		that call a model (levels.c), and the server's deterministic half
 *		(server.c: the block picker, the footer, Level 3, the claim).
 *
 * Owns: compact/.  May call: chat/ (the turn's settings resolver, so the
 * compaction model is found by the same rules), stream/ (the request body,
 * the transport, the decoders), files/ (a giant output's reference),
 * store/, events/, core/.  Below it only a
 * turn calls into compact/, through mnemo_turn_options.compact or, when
 * that is NULL, the two entries chat.h declares (mn_compact_turn,
 * mn_compact_reap: hook.c).
 */
#ifndef MNEMO_COMPACT_H
#define MNEMO_COMPACT_H

#include <json-c/json.h>

#include "chat/chat.h"

/* ---- the server's half (server.c) ---- */

/* How to pick a block: compaction_block's arguments besides the options'
 * tail_messages and block_tokens. */
typedef struct mn_pick
{
	bool		condensed;
	int			min_items;
	int			protect_tokens; /* by budget; -1: by turns */
	int			lone_tokens;	/* -1: none */
} mn_pick;

/* What mnemo.compaction_block picked. */
typedef struct mn_block
{
	mn_pick		pick;			/* how */
	bool		condensed;
	char	   *content;		/* the transcript */
	int			tokens;
	json_object *item_ids;		/* array of strings */
	json_object *file_ids;		/* array of strings */
} mn_block;

/* The next block picked by p, each item cut to item_chars (0: whole).
 * *found is false when there is none. */
int			mn_compact_block(mnemo_store *st, const char *sid, const mn_pick *p,
							 const mnemo_compact_options *o, int item_chars,
							 mn_block *b, bool *found);
void		mn_block_clear(mn_block *b);

/* text with the footer of its file ids and file_ids (a JSON array); *out
 * malloc'd. */
int			mn_compact_footer(mnemo_store *st, const char *text, json_object *file_ids,
							  char **out);

/* Level 3 of content at max_tokens; *out malloc'd. */
int			mn_compact_truncate(mnemo_store *st, const char *content, int max_tokens, char **out);

/* The claim holder of the handle's compactions (engine.c). */
const char *mn_compact_holder(mnemo_store *st);

/* The claim: *taken says whether holder has it now. */
int			mn_compact_claim(mnemo_store *st, const char *sid, const char *holder, int ttl_ms,
							 bool *taken);
/* Release it, telling followers the outcome: rc and r as the engine ended,
 * error the failure's message (NULL when rc is MNEMO_OK). */
int			mn_compact_release(mnemo_store *st, const char *sid, const char *holder, int rc,
							   const mnemo_compact_result *r, const char *error);

/* End sid's claim, whoever holds it; holder (MNEMO_ID_MAX + 1 bytes) gets
 * its holder, "" when none. */
int			mn_compact_release_any(mnemo_store *st, const char *sid, char *holder);

/*
 * The assembled context's size, summaries included, as context_report
 * gives it for budget_tokens: exact up to past the budget, and past that an
 * estimate that stays over it, so that a round costs what the budget holds,
 * not the session (issue 36); 0: exact, the whole view rendered.
 */
int			mn_compact_size(mnemo_store *st, const char *sid, int budget_tokens, int64_t *size);

/* ---- the levels that call a model (levels.c) ---- */

/* The compaction model's settings, resolved once per compaction; *usable
 * false (and no error) when no provider or key is set. */
typedef struct mn_compact_model
{
	bool		usable;
	turn_cfg	cfg;
} mn_compact_model;

void		mn_compact_model_init(mnemo_store *st, const char *sid, const mnemo_compact_options *o,
								  mn_compact_model *m);
void		mn_compact_model_free(mn_compact_model *m);

/*
 * Level 1 or 2 of block b: the model's summary with its footer in *out
 * (malloc'd), or *out NULL when the level failed (the model could not be
 * called or answered badly, the answer is empty, not smaller than the
 * input, or over max_tokens when that is > 0).  Errors only for the database (the footer), memory, and
 * CANCELLED: the model's request was stopped (the store's stop flag, or
 * mnemo_turn_cancel), and the compaction with it.
 */
int			mn_compact_summarise(mnemo_store *st, mn_compact_model *m,
								 const mnemo_compact_options *o, int level, const mn_block *b,
								 int max_tokens, char **out);

/* ---- the outcome (engine.c) ---- */

/* COMPACTION_COMPLETED (data: tokens_before, tokens_after, level,
 * summaries, summary_id, lost) or COMPACTION_FAILED (data: error,
 * summaries) on st, for a compaction of sid that ended with rc and r. */
void		mn_compact_publish(mnemo_store *st, const char *sid, int rc,
							   const mnemo_compact_result *r);

#endif							/* MNEMO_COMPACT_H */
