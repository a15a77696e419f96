/*
 * mnemo/search.h
 *		Pruning tool outputs, full-text search, file references.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_SEARCH_H
#define MNEMO_API_SEARCH_H

#include "rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Pruning and search
 * ------------------------------------------------------------------------ */
typedef struct mnemo_prune_options
{
	int			protect_tokens;		/* < 0: 40000 */
	int			minimum_tokens;		/* < 0: 20000 */
	const char *const *protected_tools; /* NULL: {"skill"} */
	size_t		n_protected_tools;
} mnemo_prune_options;

/* Initialises pruning options: the seed's defaults. */
#define MNEMO_PRUNE_OPTIONS_INIT { .protect_tokens = -1, .minimum_tokens = -1 }

/* The seed's tool-output pruner (opts may be NULL); *pruned (may be NULL)
 * gets the number of parts tombstoned.  Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_prune_tool_outputs(mnemo_store *st, const char *session_id,
									   const mnemo_prune_options *opts, int *pruned);

typedef struct mnemo_search_hit
{
	char	   *message_id;
	int64_t		seq;
	char	   *role;
	bool		in_context;
	char	   *snippet;
	float		rank;
} mnemo_search_hit;

typedef struct mnemo_search_hits
{
	size_t		count;
	mnemo_search_hit *items;
} mnemo_search_hits;

MNEMO_API void mnemo_search_hits_free(mnemo_search_hits *hits);

/* Full-text search over the whole log, newest first; limit < 0: 50.
 * Errors: INVALID_ARGUMENT (session_id, query or out NULL). */
MNEMO_API int mnemo_search(mnemo_store *st, const char *session_id, const char *query,
						   int limit, mnemo_search_hits **out);

/* How many of the session's messages wait to be indexed for search
 * (search_pending): a search reads the newest 2,000 of them directly and
 * the rest only once indexed.  Errors: SESSION_NOT_FOUND,
 * INVALID_ARGUMENT (session_id or pending NULL). */
MNEMO_API int mnemo_search_pending(mnemo_store *st, const char *session_id, int64_t *pending);

/* ------------------------------------------------------------------------
 * File references
 * ------------------------------------------------------------------------ */
typedef struct mnemo_file_ref
{
	char	   *content_id;		/* sha256 of the content */
	char	   *path;
	char	   *file_type;
	int			token_count;
	char	   *exploration_summary;
	int64_t		created_at;
} mnemo_file_ref;

typedef struct mnemo_new_file_ref
{
	const char *content_id;
	const char *path;
	const char *file_type;		/* NULL: "unknown" */
	int			token_count;
	const char *exploration_summary;	/* NULL: "" */
} mnemo_new_file_ref;

/* Initialises a file reference spec: type "unknown", no summary. */
#define MNEMO_NEW_FILE_REF_INIT { 0 }

MNEMO_API void mnemo_file_ref_free(mnemo_file_ref *f);

/* Insert, or replace the row with the same content id.  out may be NULL.
 * Errors: INVALID_ARGUMENT (no content id or path). */
MNEMO_API int mnemo_file_ref_store(mnemo_store *st, const mnemo_new_file_ref *f,
								   mnemo_file_ref **out);

/* The file by content id, or by path; *out is NULL (and MNEMO_OK) when
 * there is no such file.  Errors: INVALID_ARGUMENT (key or out NULL). */
MNEMO_API int mnemo_file_ref_get(mnemo_store *st, const char *content_id,
								 mnemo_file_ref **out);
MNEMO_API int mnemo_file_ref_get_by_path(mnemo_store *st, const char *path,
										 mnemo_file_ref **out);

/* ------------------------------------------------------------------------
 * Large files (seed 002, "Large File Handling")
 * ------------------------------------------------------------------------ */
typedef struct mnemo_file_options
{
	int			inline_threshold;	/* < 1: 10000 tokens */
} mnemo_file_options;

/* Initialises file options: the seed's threshold. */
#define MNEMO_FILE_OPTIONS_INIT { .inline_threshold = 0 }

typedef struct mnemo_file_result
{
	int			token_count;	/* mnemo_estimate_tokens of the content */
	char	   *inline_text;	/* below the threshold: the content; else NULL */
	mnemo_file_ref *ref;		/* at or above: the stored reference; else NULL */
	bool		cached;			/* ref was found, not made */
	char	   *part;			/* the part to append, as JSON (for
								 * mnemo_new_part.content): a text part with
								 * the content, or a file_ref part (content
								 * id, path as given, type, token_count,
								 * summary) */
} mnemo_file_result;

MNEMO_API void mnemo_file_result_free(mnemo_file_result *r);

/*
 * Read the file at path (UTF-8 text) and estimate its tokens.  Below the
 * inline threshold the result holds the text.  At or above it, the content
 * id is "sha256:" and the hex sha256 of the bytes: a reference stored
 * before under that id is returned as it is (cached); otherwise the file
 * type is detected from the name (doc/c-api.md lists them), an exploration
 * summary made, and the reference stored.  The content itself is never
 * stored.  opts may be NULL.  Errors: IO (the file cannot be read),
 * BINARY_FILE (a NUL byte or not UTF-8), INVALID_ARGUMENT.
 */
MNEMO_API int mnemo_file_handle(mnemo_store *st, const char *path,
								const mnemo_file_options *opts, mnemo_file_result **out);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_SEARCH_H */
