/*
 * mnemo/log.h
 *		Sessions, appends, status changes and reads of the message log.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_LOG_H
#define MNEMO_API_LOG_H

#include "rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------ */

/* What a new session is made of; a NULL or zero field takes the default. */
typedef struct mnemo_new_session
{
	const char *id;				/* NULL: the server makes a sess_ id */
	const char *model_id;		/* "" */
	const char *provider_id;	/* "" */
	const char *agent;			/* "default" */
	const char *parent_id;		/* none */
	const char *title;			/* none */
	const char *metadata;		/* JSON object; none */
	const char *system_prompt;	/* "" */
	int64_t		created_at;		/* unix ms; 0: now (mnemo_session_create
								 * only: restoring a session, as an import
								 * does) */
} mnemo_new_session;

/* Initialises a session spec: every field its default. */
#define MNEMO_NEW_SESSION_INIT { 0 }

/* Create a session (spec may be NULL).  Errors: DUPLICATE_ID,
 * SESSION_NOT_FOUND (the parent), INVALID_ARGUMENT. */
MNEMO_API int mnemo_session_create(mnemo_store *st, const mnemo_new_session *spec,
								   mnemo_session **out);

/* The existing session with spec->id (unchanged), or a new one.  Errors:
 * INVALID_ARGUMENT (no spec->id), and those of mnemo_session_create. */
MNEMO_API int mnemo_session_get_or_create(mnemo_store *st, const mnemo_new_session *spec,
										  mnemo_session **out);

/* Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_session_get(mnemo_store *st, const char *id, mnemo_session **out);

typedef struct mnemo_session_filter
{
	const char *parent_id;		/* only its children; NULL: all */
	bool		include_inactive;	/* also soft-deleted sessions */
	int			limit;			/* 0: 100 */
	int			offset;
} mnemo_session_filter;

/* Initialises a filter: active sessions, the first 100, newest first. */
#define MNEMO_SESSION_FILTER_INIT { 0 }

/* Sessions, newest first.  filter may be NULL (MNEMO_SESSION_FILTER_INIT).
 * Errors: INVALID_ARGUMENT (out NULL; the server's, for a negative limit or
 * offset). */
MNEMO_API int mnemo_session_list(mnemo_store *st, const mnemo_session_filter *filter,
								 mnemo_sessions **out);

/* Mark inactive; its rows stay readable and appends then fail with
 * SESSION_INACTIVE.  Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_session_soft_delete(mnemo_store *st, const char *id);

/* Erase the session and every row it owns (needs EXECUTE on
 * mnemo.purge_session, which PUBLIC lacks).  *deleted (may be NULL):
 * messages removed.  Errors: SESSION_NOT_FOUND, and the server's
 * insufficient_privilege (42501) as MNEMO_ERR_SERVER. */
MNEMO_API int mnemo_session_purge(mnemo_store *st, const char *id, int64_t *deleted);

/* Start / stop NOTIFY mnemo for the session's committed writes.
 * Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_session_watch(mnemo_store *st, const char *id);
MNEMO_API int mnemo_session_unwatch(mnemo_store *st, const char *id);

/* ------------------------------------------------------------------------
 * Appends
 * ------------------------------------------------------------------------ */

/*
 * A part to append.  Either content is set (the whole JSON object, used as
 * is; it must carry "type") and the other fields are ignored, or the object
 * is built from type and the fields that apply to it:
 *	text, reasoning	text
 *	tool			tool_name, tool_call_id, tool_state, tool_input (JSON),
 *					tool_output (a string), error_message
 *	file_ref		content_id, path, file_type, summary
 * id NULL: the server makes one.  token_estimate < 0: the server estimates
 * it; 0 or more is stored as given.
 */
typedef struct mnemo_new_part
{
	const char *type;
	const char *content;
	const char *id;
	const char *text;
	const char *tool_name;
	const char *tool_call_id;
	const char *tool_state;
	const char *tool_input;
	const char *tool_output;
	const char *error_message;
	const char *content_id;
	const char *path;
	const char *file_type;
	const char *summary;
	int			token_estimate;
} mnemo_new_part;

/* Initialises a part spec: everything NULL, token_estimate -1. */
#define MNEMO_NEW_PART_INIT { .token_estimate = -1 }

typedef struct mnemo_new_message
{
	const char *role;			/* user, assistant, system, tool */
	const char *id;				/* NULL: the server makes a msg_ id */
	const char *agent;			/* NULL: the session's */
	const char *model_id;		/* NULL: the session's */
	const char *provider_id;	/* NULL: the session's */
	const char *run_id;			/* or NULL */
	bool		is_summary;		/* summaries get no context item */
	size_t		n_parts;		/* may be 0: an assistant row written
								 * before streaming */
	const mnemo_new_part *parts;
} mnemo_new_message;

/* Initialises a message spec: no role, no parts, the session's defaults. */
#define MNEMO_NEW_MESSAGE_INIT { 0 }

/*
 * Append one message with its parts, and (unless a summary) its context item,
 * atomically.  ref may be NULL.  Errors: SESSION_NOT_FOUND, SESSION_INACTIVE,
 * DUPLICATE_ID, INVALID_ARGUMENT (bad role, part type, tool state, id).
 * Publishes MNEMO_EVENT_MESSAGE_CREATED on this handle.
 */
MNEMO_API int mnemo_message_append(mnemo_store *st, const char *session_id,
								   const mnemo_new_message *msg, mnemo_message_ref *ref);

/* Append n messages in one call and one transaction, at consecutive seqs.
 * refs, when not NULL, has room for n entries.  Errors as above. */
MNEMO_API int mnemo_messages_append(mnemo_store *st, const char *session_id,
									const mnemo_new_message *msgs, size_t n,
									mnemo_message_ref *refs);

/*
 * A function that acts on one message or part takes its session first: ids
 * are unique within their session, and the server touches that session's
 * rows only (one partition, one shard).
 */

/* Add a part at the end of a message (streaming).  *part_index may be NULL.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND, DUPLICATE_ID, SESSION_INACTIVE,
 * INVALID_ARGUMENT. */
MNEMO_API int mnemo_part_append(mnemo_store *st, const char *session_id, const char *message_id,
								const mnemo_new_part *part, int *part_index);

/* ------------------------------------------------------------------------
 * Status changes and tombstones
 * ------------------------------------------------------------------------ */

/* The status fields to change; NULL / 0 leaves a field as it is. */
typedef struct mnemo_part_status
{
	const char *tool_state;
	int64_t		compacted_at;
	int64_t		started_at;
	int64_t		completed_at;
	const char *output;			/* merged into the content as "output" */
	const char *error_message;	/* merged into the content */
} mnemo_part_status;

/* Initialises a status change that changes nothing. */
#define MNEMO_PART_STATUS_INIT { 0 }

/* Errors: SESSION_NOT_FOUND, PART_NOT_FOUND, INVALID_ARGUMENT (state,
 * negative time, tool fields on a non-tool part). */
MNEMO_API int mnemo_part_update_status(mnemo_store *st, const char *session_id,
									   const char *part_id, const mnemo_part_status *status);

/*
 * Record usage on a message: the five counts are written as given (tokens
 * NULL keeps them), cost when >= 0, finish_reason when not NULL.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND, INVALID_ARGUMENT (also a
 * NaN or infinite cost, a negative count: refused before sending).
 */
MNEMO_API int mnemo_message_update_tokens(mnemo_store *st, const char *session_id,
										  const char *message_id,
										  const mnemo_tokens *tokens, double cost,
										  const char *finish_reason);

/* Tombstone a part now; *compacted_at (may be NULL) gets the time, the first
 * one if it was already tombstoned.  Errors: SESSION_NOT_FOUND, PART_NOT_FOUND. */
MNEMO_API int mnemo_part_tombstone(mnemo_store *st, const char *session_id, const char *part_id,
								   int64_t *compacted_at);

/* ------------------------------------------------------------------------
 * Reads
 * ------------------------------------------------------------------------ */

/* One message without its parts.  Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND. */
MNEMO_API int mnemo_message_get(mnemo_store *st, const char *session_id, const char *id,
								mnemo_message **out);

/*
 * A session's messages in seq order, only those after since_message_id when
 * it is not NULL; with_parts fills each message's parts.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND (since_message_id).
 */
MNEMO_API int mnemo_messages_get(mnemo_store *st, const char *session_id,
								 const char *since_message_id, bool with_parts,
								 mnemo_messages **out);

/* The named messages of the session with their parts, in the order given.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND naming the first missing id. */
MNEMO_API int mnemo_messages_get_by_ids(mnemo_store *st, const char *session_id,
										const char *const *ids, size_t n, mnemo_messages **out);

/* The last `limit` messages with parts, oldest first; limit < 0: all.
 * Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_history(mnemo_store *st, const char *session_id, int limit,
							mnemo_messages **out);

/* A message's parts in part_index order.  Errors: SESSION_NOT_FOUND,
 * MESSAGE_NOT_FOUND. */
MNEMO_API int mnemo_parts_get(mnemo_store *st, const char *session_id, const char *message_id,
							  mnemo_parts **out);

/* The newest summary message; *out is NULL (and MNEMO_OK) when none.
 * Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_summary_last(mnemo_store *st, const char *session_id,
								 mnemo_message **out);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_LOG_H */
