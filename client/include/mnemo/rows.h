/*
 * mnemo/rows.h
 *		The rows the library hands out, and their _free functions.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_ROWS_H
#define MNEMO_API_ROWS_H

#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Rows
 *
 * Strings are never NULL unless the comment says "or NULL"; JSON fields hold
 * JSON text.
 * ------------------------------------------------------------------------ */
typedef struct mnemo_session
{
	char	   *id;
	char	   *parent_id;		/* or NULL */
	int64_t		created_at;
	int64_t		updated_at;		/* the later of the last change to the session and its newest message */
	char	   *model_id;
	char	   *provider_id;
	char	   *agent;
	char	   *title;			/* or NULL */
	bool		is_active;
	char	   *metadata;		/* JSON object, or NULL */
	char	   *system_prompt;
	char	   *state;			/* JSON object */
	bool		watched;
	int64_t		last_seq;		/* seq of the newest message, 0 if none (a fork: its fork point) */
} mnemo_session;

typedef struct mnemo_sessions
{
	size_t		count;
	mnemo_session *items;
} mnemo_sessions;

typedef struct mnemo_tokens
{
	int64_t		input;
	int64_t		output;
	int64_t		cache_read;
	int64_t		cache_write;
	int64_t		reasoning;
} mnemo_tokens;

/*
 * A stored part.  content is the part's JSON object as appended, with
 * "output"/"error_message" merged in by mnemo_part_update_status: exactly the
 * stored object from mnemo_parts_get; in a message's parts (the reads with
 * parts, expansions) without the status keys the server lays over it (id,
 * part_index, tool_state, compacted_at, started_at, completed_at,
 * token_estimate), whose values are the fields below.  The other fields are
 * read from the content or from the part's status columns.
 */
typedef struct mnemo_part
{
	char	   *id;
	char	   *message_id;
	int			part_index;
	char	   *type;			/* text, reasoning, tool, file_ref,
								 * compaction_marker, step_start, ... */
	char	   *content;		/* JSON object */
	char	   *text;			/* "text" of the content, or NULL */
	char	   *tool_name;		/* tool parts; else NULL */
	char	   *tool_call_id;	/* tool parts; else NULL */
	char	   *tool_state;		/* pending|running|completed|error, or NULL */
	char	   *tool_input;		/* JSON text of "input" as written (the
								 * part's "input_text" where jsonb would
								 * reorder its keys, or where the model's
								 * input was not a JSON object: then its
								 * text as written), or NULL */
	char	   *tool_output;	/* "output": the string itself, or the JSON
								 * text of a non-string value; or NULL */
	char	   *error_message;	/* or NULL */
	int64_t		compacted_at;	/* the tombstone; 0 when live */
	int64_t		started_at;
	int64_t		completed_at;
	int			token_estimate;
} mnemo_part;

typedef struct mnemo_parts
{
	size_t		count;
	mnemo_part *items;
} mnemo_parts;

typedef struct mnemo_message
{
	char	   *id;
	char	   *session_id;
	int64_t		seq;
	char	   *role;			/* user, assistant, system, tool */
	int64_t		created_at;
	char	   *agent;
	char	   *model_id;
	char	   *provider_id;
	char	   *run_id;			/* or NULL */
	bool		is_summary;
	mnemo_tokens tokens;
	double		cost;
	char	   *finish_reason;	/* or NULL */
	size_t		n_parts;		/* 0 and NULL for reads without parts */
	mnemo_part *parts;
} mnemo_message;

typedef struct mnemo_messages
{
	size_t		count;
	mnemo_message *items;
} mnemo_messages;

/* What an append returns: the message's id and its seq in the session. */
typedef struct mnemo_message_ref
{
	char		id[MNEMO_ID_MAX + 1];
	int64_t		seq;
} mnemo_message_ref;

MNEMO_API void mnemo_session_free(mnemo_session *s);
MNEMO_API void mnemo_sessions_free(mnemo_sessions *list);
MNEMO_API void mnemo_part_free(mnemo_part *p);
MNEMO_API void mnemo_parts_free(mnemo_parts *list);
MNEMO_API void mnemo_message_free(mnemo_message *m);
MNEMO_API void mnemo_messages_free(mnemo_messages *list);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_ROWS_H */
