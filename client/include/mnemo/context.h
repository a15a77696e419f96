/*
 * mnemo/context.h
 *		The context view, its assembly and swaps, and the summary DAG.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_CONTEXT_H
#define MNEMO_API_CONTEXT_H

#include "rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The context view and its assembly
 * ------------------------------------------------------------------------ */
typedef struct mnemo_context_item
{
	char	   *item_type;		/* message | summary */
	char	   *item_id;
	int64_t		position;
} mnemo_context_item;

typedef struct mnemo_context_items
{
	size_t		count;
	mnemo_context_item *items;
} mnemo_context_items;

/* One entry of an assembled context (mnemo.build_context). */
typedef struct mnemo_context_entry
{
	int64_t		position;
	char	   *item_type;
	char	   *item_id;
	char	   *role;
	char	   *content;		/* the message rendered as text */
	int			tokens;
} mnemo_context_entry;

typedef struct mnemo_context
{
	size_t		count;
	mnemo_context_entry *items;
} mnemo_context;

/* What an assembly keeps and leaves out (mnemo.context_report). */
typedef struct mnemo_context_budget
{
	int			budget_tokens;
	int64_t		summary_tokens;
	int			included_items;
	int64_t		included_tokens;
	int			omitted_items;
	int64_t		omitted_tokens;
} mnemo_context_budget;

MNEMO_API void mnemo_context_items_free(mnemo_context_items *list);
MNEMO_API void mnemo_context_free(mnemo_context *ctx);

/* The context view in position order.  Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_context_items_get(mnemo_store *st, const char *session_id,
									  mnemo_context_items **out);

/* The context assembled for a token budget.  Errors: SESSION_NOT_FOUND,
 * INVALID_ARGUMENT (negative budget). */
MNEMO_API int mnemo_context_build(mnemo_store *st, const char *session_id,
								  int budget_tokens, mnemo_context **out);

/* What the context for a token budget includes and leaves out.
 * Errors: SESSION_NOT_FOUND, INVALID_ARGUMENT (negative budget). */
MNEMO_API int mnemo_context_report(mnemo_store *st, const char *session_id,
								   int budget_tokens, mnemo_context_budget *out);

/*
 * Replace the named items with the summary message summary_id, at the
 * smallest position they held (returned in *position, may be NULL).
 * Errors: INVALID_SWAP (an item no longer in context: another compactor
 * won; nothing changed), SESSION_NOT_FOUND.
 */
MNEMO_API int mnemo_context_swap(mnemo_store *st, const char *session_id,
								 const char *const *remove_item_ids, size_t n,
								 const char *summary_id, int64_t *position);

/* ------------------------------------------------------------------------
 * The summary DAG
 * ------------------------------------------------------------------------ */
typedef struct mnemo_new_summary
{
	const char *summary_id;		/* NULL: a sum_ id is made (returned) */
	const char *content;
	int			token_count;
	const char *const *remove_item_ids;
	size_t		n_remove;
	const char *kind;			/* "leaf" (over messages) or "condensed"
								 * (over summaries); NULL: "leaf" */
	int			level;			/* 1, 2, 3; 0: 1 */
	const char *model_id;		/* or NULL */
	const char *provider_id;	/* or NULL */
	const char *holder;			/* or NULL; else commit only while holding
								 * the session's compaction claim
								 * (INVALID_SWAP otherwise) */
	/* an import restoring a summary: its time (unix ms; 0: now), the ids
	 * of its text and marker parts (NULL: made), and what the source had
	 * beyond the text, kept in the text part (NULL, or a JSON object) */
	int64_t		created_at;
	const char *const *part_ids;	/* NULL, or 2 ids */
	const char *metadata;
	/* > 0: the server puts a header (id, kind, depth, span) and an
	 * "Expand for details about: ..." line (the file ids, paths and tools
	 * it covers) of at most this many tokens before content, and adds
	 * their tokens to token_count (doc/compaction.md, "What the model
	 * sees"); 0: content is stored as given */
	int			annotate_tokens;
} mnemo_new_summary;

/* Initialises a summary spec: a new id, kind "leaf", level 1. */
#define MNEMO_NEW_SUMMARY_INIT { 0 }

/*
 * One atomic compaction commit (mnemo.commit_summary).  *position (may be
 * NULL) gets the summary's position; summary_id_out (may be NULL) its id.
 * Errors: INVALID_SWAP (another compactor won; nothing written),
 * DUPLICATE_ID, SESSION_NOT_FOUND, INVALID_ARGUMENT.
 */
MNEMO_API int mnemo_summary_commit(mnemo_store *st, const char *session_id,
								   const mnemo_new_summary *summary, int64_t *position,
								   char summary_id_out[MNEMO_ID_MAX + 1]);

typedef struct mnemo_summary_node
{
	char	   *session_id;
	char	   *id;
	char	   *kind;			/* leaf | condensed */
	int			level;
	int			token_count;
	int64_t		seq_start;
	int64_t		seq_end;
	int64_t		created_at;
	char	   *superseded_by;	/* or NULL */
} mnemo_summary_node;

typedef struct mnemo_summary_nodes
{
	size_t		count;
	mnemo_summary_node *items;
} mnemo_summary_nodes;

/* One row of an expansion: an item a node covers, with its message. */
typedef struct mnemo_expansion_row
{
	int			depth;
	char	   *summary_id;		/* the node that covers it */
	char	   *item_type;		/* message | summary */
	char	   *item_id;
	int64_t		seq;
	char	   *role;
	size_t		n_parts;
	mnemo_part *parts;			/* exactly as stored */
} mnemo_expansion_row;

typedef struct mnemo_expansion
{
	size_t		count;
	mnemo_expansion_row *items;
} mnemo_expansion;

MNEMO_API void mnemo_summary_nodes_free(mnemo_summary_nodes *list);
MNEMO_API void mnemo_expansion_free(mnemo_expansion *e);

/* The DAG's nodes in span order.  Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_summary_nodes_get(mnemo_store *st, const char *session_id,
									  bool include_superseded, mnemo_summary_nodes **out);

/* What a node covers; recursive: depth first down to the original messages.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND (not a summary node). */
MNEMO_API int mnemo_summary_expand(mnemo_store *st, const char *session_id,
								   const char *summary_id, bool recursive, mnemo_expansion **out);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_CONTEXT_H */
