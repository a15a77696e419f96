/*
 * mnemo/compact.h
 *		The compaction engine: mnemo_compact.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_COMPACT_H
#define MNEMO_API_COMPACT_H

#include "chat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Compaction (doc/compaction.md)
 *
 * mnemo_compact() runs one compaction of a session, as LCM's control loop:
 *	1. the session's compaction claim is taken (mnemo.claim_compaction), a
 *	   lease with an expiry, before any model is called; another live
 *	   holder means someone else is compacting: MNEMO_OK with lost set;
 *	2. tool outputs are pruned (mnemo.prune_tool_outputs);
 *	3. rounds, each one block the server picks (mnemo.compaction_block: the
 *	   oldest messages outside the fresh tail, else summary nodes of one
 *	   depth), summarised by Level 1 (the structured prompt), else Level 2
 *	   (the aggressive one, each input cut to 500 characters, 800 for
 *	   summaries), else Level 3 (mnemo.truncate_summary, no model, never
 *	   fails); Level 1 and 2 are accepted only when smaller than their input
 *	   and not empty, and any failure (provider error, timeout, too long,
 *	   empty) falls through to the next level; every summary gets the
 *	   file-id footer of all its inputs (mnemo.file_id_footer);
 *	4. each summary is committed with the claim's holder (commit_summary);
 *	   losing the race (MN006) is someone else's win: MNEMO_OK, lost set;
 *	5. rounds go on while the context is over budget_tokens, up to
 *	   max_rounds, and stop at the first that commits no summary (no block
 *	   left, or lost); a round that did not make the context smaller goes
 *	   on (the next block may be the one that does).
 * The claim is released at the end.  Events: COMPACTION_STARTED once the
 * claim is taken, COMPACTION_COMPLETED ({"tokens_before", "tokens_after",
 * "level", "summary_id", "summaries", "lost"}) or COMPACTION_FAILED
 * ({"error", "summaries"}).  The release tells followers in other processes
 * the same end (compaction_completed / compaction_failed on the feed).
 * mnemo_session_send runs it by default at its thresholds
 * (doc/compaction.md).
 * ------------------------------------------------------------------------ */

/* Called after each summary a compaction commits: its id, kind ("leaf" or
 * "condensed"), level, the number of items it replaced, and the context's
 * size after it. */
typedef void (*mnemo_compact_progress_fn) (const char *summary_id, const char *kind, int level,
										   int items, int64_t tokens_after, void *arg);

/* How to compact; a NULL or zero field takes the default. */
typedef struct mnemo_compact_options
{
	/* the compaction model, apart from the chat's: NULL takes the turn's
	 * rules (the session's provider and model, then the environment) */
	const char *provider;
	const char *model;
	const char *base_url;
	const char *api_key;
	int			connect_timeout_ms; /* 0: 10000 */
	int			idle_timeout_ms;	/* 0: 60000 */
	int			max_retries;	/* 0: 1, < 0: none */
	int			max_output_tokens;	/* Level 1; 0: 8192 (Level 2: at most
									 * 4000) */

	int			budget_tokens;	/* compact while the context is over this,
								 * protecting shares of it (doc/compaction.md);
								 * OVER_BUDGET when it cannot; 0: one round */
	int			first_level;	/* 1, 2 or 3: the level to start at; 0: 1 */
	int			max_rounds;		/* 0: 10, with budget_tokens no limit */
	int			tail_messages;	/* messages of the fresh tail besides the
								 * two latest user turns; 0: 8, < 0: none;
								 * not with budget_tokens */
	int			block_tokens;	/* cap of one block's input; 0: 20000 */
	int			l3_tokens;		/* Level 3's size; 0: 512; at least 24 */
	bool		no_prune;		/* skip prune_tool_outputs */
	bool		dry_run;		/* only say what the first round would
								 * summarise: no claim, no prune, no model,
								 * nothing written */

	/* prompts; NULL: the seed's */
	const char *level1_prompt;
	const char *level2_prompt;
	const char *condense_level1_prompt;
	const char *condense_level2_prompt;

	const char *holder;			/* the claim's holder; NULL: the handle's,
								 * host:pid:time:handle, the same for each
								 * of its compactions */
	int			claim_ttl_ms;	/* 0: 300000 */
	mnemo_compact_progress_fn progress; /* or NULL */
	void	   *progress_arg;
} mnemo_compact_options;

/* Initialises compaction options: every field its default. */
#define MNEMO_COMPACT_OPTIONS_INIT { 0 }

/* What a compaction did. */
typedef struct mnemo_compact_result
{
	int64_t		tokens_before;	/* the assembled context's size */
	int64_t		tokens_after;
	int			summaries;		/* committed by this call */
	int			level;			/* of the last one (0: none) */
	int			levels[4];		/* summaries committed at each level */
	int			pruned;			/* tool outputs tombstoned */
	bool		lost;			/* another compactor held the claim or won a
								 * commit: nothing more was done here */
	char		summary_id[MNEMO_ID_MAX + 1];	/* the last one, or "" */
	/* dry_run: the block the first round would summarise (items 0: none) */
	char		block_kind[16];	/* "leaf" or "condensed" */
	int			block_items;
	int			block_tokens;
	/* the rounds run; and OVER_BUDGET: the session's floor, the least the
	 * context can be brought to (the latest user message, summaries at
	 * their least, what cannot be summarised), else 0 */
	int			rounds;
	int64_t		floor_tokens;
} mnemo_compact_result;

/*
 * Compact session_id (opts may be NULL; out may be NULL).  A provider that
 * cannot be set up or reached is not an error: Level 3 runs.  Errors:
 * OVER_BUDGET (budget_tokens is below the session's floor: out says the
 * floor and how far it got; the summaries committed stay; max_rounds
 * ending first is no error),
 * SESSION_NOT_FOUND, INVALID_ARGUMENT, CONNECTION and the other database
 * errors (the claim is released if the connection still works).
 */
MNEMO_API int mnemo_compact(mnemo_store *st, const char *session_id,
							const mnemo_compact_options *opts, mnemo_compact_result *out);

/*
 * End the session's compaction claim, whoever holds it (a compactor that
 * was killed leaves its claim until it expires); *holder_out (may be
 * NULL, MNEMO_ID_MAX + 1 bytes) gets the holder, "" when there was none.
 * Only for a claim whose compactor is known to be gone: a live one loses
 * its next commit (INVALID_SWAP, reported as lost).  Errors:
 * SESSION_NOT_FOUND.
 */
MNEMO_API int mnemo_compact_release(mnemo_store *st, const char *session_id, char *holder_out);

/*
 * The engine as a turn's compaction hook (mnemo_turn_options.compact =
 * mnemo_compact_hook, compact_arg = a mnemo_compact_options that lives as
 * long as the handle).  Blocking (the hard threshold): mnemo_compact on
 * this connection, after waiting for this handle's background compaction,
 * and again while another process holds the claim (up to 10 s); set the
 * options' budget_tokens to the turn's budget so that it compacts until the
 * context is under it.  Not blocking (the soft threshold): mnemo_compact
 * starts on a thread with a connection of its own and the turn goes on; one
 * at a time per handle, joined by the next call, the next turn or
 * mnemo_store_close; it keeps copies of the options' provider, model,
 * base_url and api_key (the prompts and holder stay borrowed).  It publishes
 * COMPACTION_STARTED here when it starts, and its COMPLETED or FAILED here
 * when one of this handle's calls joins it, on the caller's thread.
 * Returns 0, or the error of a blocking compaction.
 */
MNEMO_API int mnemo_compact_hook(mnemo_store *st, const char *session_id, bool blocking,
								 void *arg);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_COMPACT_H */
