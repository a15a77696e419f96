/*
 * mnemo/recall.h
 *		Recall: what compaction took out of a context, given back to a model
 *		(or a program) on request: a search whose hits name the summary that
 *		covers them, and a summary's items rendered as text, a page at a time.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).  A chat turn offers
 * these to its model as the tools lcm_grep, lcm_describe and lcm_expand
 * (mnemo_turn_options.recall, doc/compaction.md#recall).
 */
#ifndef MNEMO_API_RECALL_H
#define MNEMO_API_RECALL_H

#include "rows.h"

typedef struct mnemo_recall_hit
{
	char	   *message_id;
	int64_t		seq;
	char	   *role;
	char	   *snippet;
	bool		in_context;
	char	   *covered_by;		/* the summary of the context view that covers
								 * the message; NULL: in context (or covered
								 * by none) */
} mnemo_recall_hit;

typedef struct mnemo_recall_hits
{
	size_t		count;
	mnemo_recall_hit *items;
} mnemo_recall_hits;

MNEMO_API void mnemo_recall_hits_free(mnemo_recall_hits *hits);

/*
 * Search the session's whole line, newest first (recall_search): pattern as
 * full-text words, or with regex a PostgreSQL regular expression over the
 * newest 5,000 messages of the scope; summary_id (may be NULL) narrows the
 * scope to what that summary covers.  limit <= 0: 20; before_seq > 0 gives
 * the page before that seq (the last hit's seq: the next page).
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND (no such summary),
 * INVALID_ARGUMENT (also a regular expression that does not compile),
 * SERVER with SQLSTATE 54000 (one over 256 bytes or with a back-reference).
 */
MNEMO_API int mnemo_recall_grep(mnemo_store *st, const char *session_id, const char *pattern,
								const char *summary_id, bool regex, int limit, int64_t before_seq,
								mnemo_recall_hits **out);

typedef struct mnemo_recall_item
{
	int			ordinal;		/* 1 .. items */
	char	   *item_type;		/* "message" or "summary" */
	char	   *item_id;
	int64_t		seq;
	char	   *role;
	char	   *content;		/* "[ROLE #SEQ ID]" then the rendered parts */
	int			tokens;
} mnemo_recall_item;

typedef struct mnemo_recall_page
{
	size_t		count;
	mnemo_recall_item *items;
	int			total;			/* the items the summary covers */
	int			next_offset;	/* where the next page starts; -1: none */
} mnemo_recall_page;

MNEMO_API void mnemo_recall_page_free(mnemo_recall_page *page);

/*
 * The items directly under summary_id, after offset, rendered as text while
 * their tokens stay within max_tokens (100 .. 100000; <= 0: 4000), the first
 * always, cut to it (recall_expand).  Errors: SESSION_NOT_FOUND,
 * MESSAGE_NOT_FOUND (no such summary), INVALID_ARGUMENT.
 */
MNEMO_API int mnemo_recall_expand(mnemo_store *st, const char *session_id,
								  const char *summary_id, int offset, int max_tokens,
								  mnemo_recall_page **out);

/*
 * What id is, as text for a model (lcm_describe): a summary node of the
 * session (kind, depth, level, the span it covers, its tokens, whether a
 * condensation consumed it, and its text) or a file reference (path, type,
 * tokens, exploration summary).  *out is malloc'd; free() it.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND (neither), INVALID_ARGUMENT.
 */
MNEMO_API int mnemo_recall_describe(mnemo_store *st, const char *session_id, const char *id,
									char **out);

#endif							/* MNEMO_API_RECALL_H */
