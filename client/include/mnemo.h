/*
 * mnemo.h
 *		libmnemo: the C client of the mnemo PostgreSQL extension.
 *
 * The one public header.  It includes only standard headers: no libpq, curl
 * or json-c type appears here.  Every exported symbol starts with mnemo_.
 *
 * Conventions, which hold for every call below unless its comment says
 * otherwise:
 *
 *	- A store handle (mnemo_store) owns one libpq connection.  It may be used
 *	  by one thread at a time; different handles from different threads.
 *	  There is no global state.
 *	- Calls return int: MNEMO_OK (0) on success, a negative mnemo_err on
 *	  failure.  The last error's code, message and SQLSTATE are then readable
 *	  with mnemo_errcode(), mnemo_errmsg() and mnemo_sqlstate() until the next
 *	  call on the same handle.  A failed call leaves its out-parameters as
 *	  they were (pointers: NULL) and writes nothing to the database.
 *	- Strings passed in are UTF-8 and NUL-terminated; JSON arguments are JSON
 *	  text.  The library copies what it keeps; nothing passed in is retained.
 *	- Everything returned through an out-parameter is owned by the caller and
 *	  freed by exactly one matching _free call; freeing a parent frees its
 *	  children (a message's parts, a list's items); _free(NULL) does nothing.
 *	- Times are unix milliseconds (int64_t); 0 means "not set".
 *	- Nothing is sent as SQL text built from arguments: every statement is
 *	  parameterised and the hot ones are prepared once per connection.
 */
#ifndef MNEMO_H
#define MNEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version; the soname and mnemo.pc are scraped from these. */
#define MNEMO_VERSION_MAJOR 0
#define MNEMO_VERSION_MINOR 2
#define MNEMO_VERSION_PATCH 0

#if defined(MNEMO_BUILDING_LIBRARY) && defined(__GNUC__)
#define MNEMO_API __attribute__((visibility("default")))
#else
#define MNEMO_API
#endif

/* The longest id the extension accepts, in bytes (without the NUL). */
#define MNEMO_ID_MAX 256

/*
 * How deep a part may nest: the part object is level 1, each array or object
 * or scalar inside a level deeper ({"type": "text", "text": "hi"} is 2 deep,
 * so a tool's input may nest one level less than its part).  The
 * server refuses deeper parts (22023); the library refuses them before
 * sending (MNEMO_ERR_FORMAT), and a mnemo JSONL line, which holds its parts
 * two levels down, may nest MNEMO_MAX_JSON_DEPTH + 2 levels.
 */
#define MNEMO_MAX_JSON_DEPTH 512

/* ------------------------------------------------------------------------
 * Errors
 *
 * -1 ... -12 mirror the extension's SQLSTATEs MN001 ... MN012 one to one.
 * ------------------------------------------------------------------------ */
typedef enum mnemo_err
{
	MNEMO_OK = 0,
	MNEMO_ERR_SESSION_NOT_FOUND = -1,	/* MN001 */
	MNEMO_ERR_MESSAGE_NOT_FOUND = -2,	/* MN002 */
	MNEMO_ERR_PART_NOT_FOUND = -3,		/* MN003 */
	MNEMO_ERR_DUPLICATE_ID = -4,		/* MN004 */
	MNEMO_ERR_IMMUTABLE_FIELD = -5,		/* MN005 */
	MNEMO_ERR_INVALID_SWAP = -6,		/* MN006: another compactor won */
	MNEMO_ERR_RUN_ALREADY_CLAIMED = -7, /* MN007 */
	MNEMO_ERR_RUN_ALREADY_COMPLETED = -8,	/* MN008 */
	MNEMO_ERR_RUN_NOT_CLAIMED = -9,		/* MN009 */
	MNEMO_ERR_RUN_NOT_COMPLETED = -10,	/* MN010 */
	MNEMO_ERR_CHECKPOINT_NOT_FOUND = -11,	/* MN011 */
	MNEMO_ERR_SESSION_INACTIVE = -12,	/* MN012 */

	MNEMO_ERR_INVALID_ARGUMENT = -20,	/* 22004, 22023, 22P02, or refused by
										 * the client before sending */
	MNEMO_ERR_PERMISSION = -21,			/* 42501: grants missing */
	MNEMO_ERR_RETRY = -22,				/* 40001, 40P01: retry the call */
	MNEMO_ERR_SERVER = -23,				/* any other server error; see
										 * mnemo_sqlstate() */

	MNEMO_ERR_CONNECTION = -30,			/* cannot connect, or the connection
										 * was lost: mnemo_store_reconnect() */
	MNEMO_ERR_UNINITIALIZED = -31,		/* the database has no mnemo extension */
	MNEMO_ERR_VERSION_MISMATCH = -32,	/* the extension's version is not one
										 * this library supports */

	MNEMO_ERR_NOMEM = -40,				/* out of memory */
	MNEMO_ERR_IO = -41,					/* reading or writing a file failed */
	MNEMO_ERR_FORMAT = -42,				/* malformed input: a JSONL line, a
										 * JSON argument */
	MNEMO_ERR_PROTOCOL = -43,			/* the server answered with something
										 * this library did not expect */
	MNEMO_ERR_NOT_FOUND = -44,			/* a lookup found nothing (e.g. an
										 * unknown subscription) */

	/* chat turns: the provider side (mnemo_session_send) */
	MNEMO_ERR_NO_PROVIDER = -50,		/* no provider, key or base URL set */
	MNEMO_ERR_HTTP = -51,				/* the provider refused the request:
										 * mnemo_http_status() and errmsg
										 * give its status and message */
	MNEMO_ERR_AUTH = -52,				/* 401 / 403: the key */
	MNEMO_ERR_RATE_LIMITED = -53,		/* 429 (or 529 overloaded) still after
										 * the retries */
	MNEMO_ERR_NETWORK = -54,			/* the provider could not be reached,
										 * or the connection dropped */
	MNEMO_ERR_TIMEOUT = -55,			/* connect or idle timeout */
	MNEMO_ERR_STREAM = -56,				/* an error event mid-stream, or a
										 * stream ended without its last
										 * event: what streamed is kept */
	MNEMO_ERR_CANCELLED = -57			/* mnemo_store_cancel() or the part
										 * callback stopped the turn */
} mnemo_err;

/* A short constant description of a code ("session not found"). */
MNEMO_API const char *mnemo_strerror(int code);

/* ------------------------------------------------------------------------
 * The store handle
 * ------------------------------------------------------------------------ */
typedef struct mnemo_store mnemo_store;

/*
 * Connect with a libpq connection string or URI (NULL or "" uses the PG*
 * environment variables), then check that the database has the extension and
 * that its mnemo.version() has this library's major and minor version.
 * Returns a handle even on failure (NULL only when out of memory): check
 * mnemo_errcode(), which is MNEMO_ERR_CONNECTION, MNEMO_ERR_UNINITIALIZED or
 * MNEMO_ERR_VERSION_MISMATCH when it did not work.  Close it either way.
 */
MNEMO_API mnemo_store *mnemo_store_open(const char *conninfo);

/* Close the connection and free the handle and everything it holds. */
MNEMO_API void mnemo_store_close(mnemo_store *st);

/*
 * Reconnect with the same parameters, after MNEMO_ERR_CONNECTION: prepared
 * statements are prepared again on use, and followed sessions are watched
 * and listened to again and caught up (see mnemo_feed_poll).
 */
MNEMO_API int mnemo_store_reconnect(mnemo_store *st);

/* The extension's version string as the server reported it, e.g. "0.1.0". */
MNEMO_API const char *mnemo_store_server_version(const mnemo_store *st);

/* The last error on this handle: code (0 when the last call succeeded). */
MNEMO_API int mnemo_errcode(const mnemo_store *st);

/* Its message: the server's primary message for server errors; "" if none. */
MNEMO_API const char *mnemo_errmsg(const mnemo_store *st);

/* Its five-character SQLSTATE when the server raised it; "" otherwise. */
MNEMO_API const char *mnemo_sqlstate(const mnemo_store *st);

/* ------------------------------------------------------------------------
 * Utilities
 * ------------------------------------------------------------------------ */

/* The token estimate mnemo uses everywhere: 0 for "", else max(1, chars/4)
 * counting UTF-8 characters; the same as the server's estimate_tokens(). */
MNEMO_API int mnemo_estimate_tokens(const char *text);

/* A new id from the server's mnemo.new_id(prefix), e.g. "msg_01J...". */
MNEMO_API int mnemo_new_id(mnemo_store *st, const char *prefix,
						   char id[MNEMO_ID_MAX + 1]);

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
	int64_t		updated_at;
	char	   *model_id;
	char	   *provider_id;
	char	   *agent;
	char	   *title;			/* or NULL */
	bool		is_active;
	char	   *metadata;		/* JSON object, or NULL */
	char	   *system_prompt;
	char	   *state;			/* JSON object */
	bool		watched;
	int64_t		last_seq;		/* seq of the newest message, 0 if none */
	int64_t		last_position;
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
	char	   *tool_input;		/* JSON text of "input", or NULL */
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
} mnemo_new_session;

/* Create a session (spec may be NULL).  Errors: DUPLICATE_ID,
 * SESSION_NOT_FOUND (the parent), INVALID_ARGUMENT. */
MNEMO_API int mnemo_session_create(mnemo_store *st, const mnemo_new_session *spec,
								   mnemo_session **out);

/* The existing session with spec->id (unchanged), or a new one. */
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

/* Newest first.  filter may be NULL (active sessions, the first 100). */
MNEMO_API int mnemo_session_list(mnemo_store *st, const mnemo_session_filter *filter,
								 mnemo_sessions **out);

/* Mark inactive; its rows stay readable and appends then fail with
 * SESSION_INACTIVE. */
MNEMO_API int mnemo_session_soft_delete(mnemo_store *st, const char *id);

/* Erase the session and every row it owns (needs EXECUTE on
 * mnemo.purge_session, which PUBLIC lacks).  *deleted: messages removed. */
MNEMO_API int mnemo_session_purge(mnemo_store *st, const char *id, int64_t *deleted);

/* Start / stop NOTIFY mnemo for the session's committed writes. */
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

/* Errors: SESSION_NOT_FOUND, PART_NOT_FOUND, INVALID_ARGUMENT (state,
 * negative time, tool fields on a non-tool part). */
MNEMO_API int mnemo_part_update_status(mnemo_store *st, const char *session_id,
									   const char *part_id, const mnemo_part_status *status);

/*
 * Record usage on a message: the five counts are written as given (tokens
 * NULL keeps them), cost when >= 0, finish_reason when not NULL.
 * Errors: SESSION_NOT_FOUND, MESSAGE_NOT_FOUND, INVALID_ARGUMENT.
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

/* The last `limit` messages with parts, oldest first; limit < 0: all. */
MNEMO_API int mnemo_history(mnemo_store *st, const char *session_id, int limit,
							mnemo_messages **out);

/* A message's parts in part_index order.  Errors: SESSION_NOT_FOUND,
 * MESSAGE_NOT_FOUND. */
MNEMO_API int mnemo_parts_get(mnemo_store *st, const char *session_id, const char *message_id,
							  mnemo_parts **out);

/* The newest summary message; *out is NULL (and MNEMO_OK) when none. */
MNEMO_API int mnemo_summary_last(mnemo_store *st, const char *session_id,
								 mnemo_message **out);

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
} mnemo_new_summary;

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

/* Full-text search over the whole log; limit < 0: 50. */
MNEMO_API int mnemo_search(mnemo_store *st, const char *session_id, const char *query,
						   int limit, mnemo_search_hits **out);

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

MNEMO_API void mnemo_file_ref_free(mnemo_file_ref *f);

/* Insert, or replace the row with the same content id.  out may be NULL. */
MNEMO_API int mnemo_file_ref_store(mnemo_store *st, const mnemo_new_file_ref *f,
								   mnemo_file_ref **out);

/* *out is NULL (and MNEMO_OK) when there is no such file. */
MNEMO_API int mnemo_file_ref_get(mnemo_store *st, const char *content_id,
								 mnemo_file_ref **out);
MNEMO_API int mnemo_file_ref_get_by_path(mnemo_store *st, const char *path,
										 mnemo_file_ref **out);

/* ------------------------------------------------------------------------
 * Events
 *
 * In-process: handlers subscribed on a handle are called inline, in
 * subscription order, by the call that publishes (the library's own calls,
 * mnemo_event_publish, or mnemo_feed_poll).  A handler returning non-zero
 * has failed: the failure is counted and the caller carries on.  Handlers
 * may subscribe and unsubscribe from inside a handler.
 *
 * Cross-process: mnemo_feed_follow() watches a session, LISTENs on channel
 * mnemo, and mnemo_feed_poll() turns the extension's notifications into the
 * same events, catching up by seq so that no message is missed or delivered
 * twice, across reconnects too.
 * ------------------------------------------------------------------------ */
typedef enum mnemo_event_type
{
	MNEMO_EVENT_ANY = 0,		/* subscribe only: every type */
	MNEMO_EVENT_SESSION_CREATED,
	MNEMO_EVENT_SESSION_CLOSED,
	MNEMO_EVENT_MESSAGE_CREATED,
	MNEMO_EVENT_COMPACTION_TRIGGERED,
	MNEMO_EVENT_COMPACTION_COMPLETED,
	MNEMO_EVENT_COMPACTION_FAILED,
	MNEMO_EVENT_DOOM_LOOP_DETECTED,
	MNEMO_EVENT_MAP_STARTED,
	MNEMO_EVENT_MAP_ITEM_COMPLETED,
	MNEMO_EVENT_MAP_COMPLETED,
	/* write notifications of the extension, delivered by the feed */
	MNEMO_EVENT_PART_CREATED,
	MNEMO_EVENT_PART_UPDATED,
	MNEMO_EVENT_MESSAGE_UPDATED,
	MNEMO_EVENT_CONTEXT_SWAPPED,
	MNEMO_EVENT_PARTS_PRUNED,
	MNEMO_EVENT_TYPE_COUNT_
} mnemo_event_type;

typedef struct mnemo_event
{
	mnemo_event_type type;
	const char *session_id;
	const char *id;				/* the message, part or summary; or NULL */
	int64_t		seq;			/* the message's seq; 0 when none */
	const char *data;			/* JSON object with the details, or NULL */
	bool		remote;			/* delivered by the feed */
} mnemo_event;

/* Valid only during the call; copy what you keep. */
typedef int (*mnemo_event_fn) (mnemo_store *st, const mnemo_event *event, void *arg);

/* The name of an event type: "message_created", ...; NULL if unknown. */
MNEMO_API const char *mnemo_event_name(mnemo_event_type type);

/* Returns a subscription id (> 0), or a negative error. */
MNEMO_API int mnemo_event_subscribe(mnemo_store *st, mnemo_event_type type,
									mnemo_event_fn fn, void *arg);

/* Errors: NOT_FOUND for an unknown subscription id. */
MNEMO_API int mnemo_event_unsubscribe(mnemo_store *st, int subscription);

/* Call the handlers subscribed to event->type (and to ANY). */
MNEMO_API int mnemo_event_publish(mnemo_store *st, const mnemo_event *event);

/* How many handler calls have failed on this handle so far. */
MNEMO_API uint64_t mnemo_event_failures(const mnemo_store *st);

/*
 * Follow a session from another process: mnemo.watch() it, LISTEN mnemo,
 * and deliver MESSAGE_CREATED for every message with seq > after_seq (the
 * ones already there first, then new ones as they commit), plus the other
 * write notifications for it.  Errors: SESSION_NOT_FOUND.
 */
MNEMO_API int mnemo_feed_follow(mnemo_store *st, const char *session_id, int64_t after_seq);

/* Stop following (the session stays watched for other followers). */
MNEMO_API int mnemo_feed_unfollow(mnemo_store *st, const char *session_id);

/*
 * Wait up to timeout_ms (0: do not wait, < 0: forever) for notifications
 * and deliver them as events.  Returns the number of events delivered, or a
 * negative error; after MNEMO_ERR_CONNECTION, mnemo_store_reconnect() and
 * poll again: the feed catches up from the last seq it delivered.
 */
MNEMO_API int mnemo_feed_poll(mnemo_store *st, int timeout_ms);

/* The connection's socket, for the caller's own poll()/select(); -1 if none. */
MNEMO_API int mnemo_feed_socket(const mnemo_store *st);

/* ------------------------------------------------------------------------
 * JSONL transcripts
 *
 * The export format is mnemo's take on mantis JSONL: one message a line,
 * a JSON object with the message's fields and its parts, keys in a fixed
 * order, so that export(import(export(s))) == export(s) byte for byte.
 * Import also reads Claude Code session logs (one record a line, linked by
 * uuid) and detects the format from the first record.
 * ------------------------------------------------------------------------ */

/* Write every message of the session, with parts, to out. */
MNEMO_API int mnemo_export_jsonl(mnemo_store *st, const char *session_id, FILE *out);

typedef struct mnemo_import_options
{
	const char *session_id;		/* NULL: the transcript's own, else a new id */
	/* called after each batch: bytes read so far of total (0 if unknown) */
	void		(*progress) (uint64_t done, uint64_t total, void *arg);
	void	   *progress_arg;	/* passed to both callbacks */
	/* mnemo exports: leave out the file's message and part ids and let the
	 * server make new ones, to copy a session within one database */
	bool		new_ids;
	/* called for each record left out (Claude Code's progress, system, ...
	 * lines; blocks of unknown types): its line number and kind */
	void		(*skipped) (int64_t line, const char *kind, void *arg);
} mnemo_import_options;

/*
 * Read a transcript from in and append it to a new session, in batches, all
 * in one transaction: an error leaves nothing behind.  session_id_out (may
 * be NULL) gets the session's id, *imported (may be NULL) the message count.
 * Errors: FORMAT (with the line number in the message), DUPLICATE_ID, IO.
 */
MNEMO_API int mnemo_import_jsonl(mnemo_store *st, FILE *in, const mnemo_import_options *opts,
								 char session_id_out[MNEMO_ID_MAX + 1], int64_t *imported);

/* ------------------------------------------------------------------------
 * Chat turns
 *
 * mnemo_session_send() runs one turn of the seed's send() walkthrough:
 *	1. the user message and its parts are committed;
 *	2. if the assembled context (mnemo.context_report: what a turn would
 *	   send, which survives restarts, not a running sum of provider tokens)
 *	   is over the hard threshold (usable budget), the compaction hook is
 *	   called with blocking = true and must bring it under before going on;
 *	3. the context comes from mnemo.build_context with the budget
 *	   usable = context_limit - max_output_tokens - compaction_output_budget
 *	   - the system prompt's tokens;
 *	4. the assistant row is appended (no parts) and committed with the user
 *	   turn, before the provider is called, as the seed does: a request
 *	   refused (401, 429 after the retries, ...) or never answered leaves it
 *	   empty with finish reason "error";
 *	5. the reply streams: each text / reasoning delta and each completed tool
 *	   call reaches on_part as it arrives; the parts are appended as they
 *	   complete;
 *	6. usage, cost (from the price table) and the finish reason are written
 *	   with update_message_tokens;
 *	7. over the soft threshold the hook is called with blocking = false (a
 *	   background compaction), and the turn says so;
 *	8. the same tool call (name and input) doom_loop_threshold times in a
 *	   row publishes MNEMO_EVENT_DOOM_LOOP_DETECTED.
 * While a turn streams, the session is held with an advisory lock, so that
 * mnemo_session_load() in any process can tell a dead turn (an assistant
 * message without finish reason and without its lock) from a live one.
 * A turn's statements go in four round trips (libpq pipeline mode) and two
 * commits: steps 1 to 4 in one transaction, 6 with the last part in another.
 * ------------------------------------------------------------------------ */

/* libcurl's global initialisation: call once before any thread sends, and
 * mnemo_global_cleanup() once at the end. */
MNEMO_API int mnemo_global_init(void);
MNEMO_API void mnemo_global_cleanup(void);

/* The price of a model, per million tokens (cost = sum of count x price). */
typedef struct mnemo_price
{
	const char *model;
	double		input;
	double		output;
	double		cache_read;
	double		cache_write;
} mnemo_price;

/* A compaction hook (until the compaction engine exists): blocking says the
 * turn waits for it (hard threshold).  Non-zero fails the turn (blocking)
 * or publishes COMPACTION_FAILED (background). */
typedef int (*mnemo_compact_fn) (mnemo_store *st, const char *session_id, bool blocking,
								 void *arg);

/* How to run a turn; a NULL or zero field takes the default. */
typedef struct mnemo_turn_options
{
	const char *provider;		/* "openai" or "anthropic"; NULL: the
								 * session's provider_id, else the one whose
								 * key is in the environment */
	const char *model;			/* NULL: the session's model_id */
	const char *base_url;		/* NULL: OPENAI_BASE_URL / ANTHROPIC_BASE_URL,
								 * else the provider's public API */
	const char *api_key;		/* NULL: OPENAI_API_KEY / ANTHROPIC_API_KEY;
								 * never written to logs or errors */
	int			context_limit;	/* the model's window, tokens; 0: 128000 */
	int			max_output_tokens;	/* 0: 4096 */
	int			compaction_output_budget;	/* 0: 4000 */
	double		soft_threshold; /* fraction of usable; 0: 0.6 */
	const char *tools;			/* JSON array of {"name", "description",
								 * "parameters"}, or NULL */
	int			connect_timeout_ms; /* 0: 10000 */
	int			idle_timeout_ms;	/* no byte for this long ends the
									 * stream; 0: 60000 */
	int			max_retries;	/* 429 / 5xx before the first byte; 0: 3,
								 * < 0: none */
	int			doom_loop_threshold;	/* 0: 3 */
	const mnemo_price *prices;
	size_t		n_prices;
	mnemo_compact_fn compact;	/* or NULL */
	void	   *compact_arg;
} mnemo_turn_options;

/* One piece of the reply as it streams. */
typedef struct mnemo_stream_part
{
	const char *type;			/* "text", "reasoning" or "tool" */
	const char *delta;			/* text / reasoning: the new text */
	size_t		len;
	const char *tool_call_id;	/* tool: a complete call */
	const char *tool_name;
	const char *tool_input;		/* JSON */
	const char *part_id;		/* tool: its stored part */
} mnemo_stream_part;

/* Valid only during the call.  Non-zero cancels the turn (CANCELLED). */
typedef int (*mnemo_part_fn) (mnemo_store *st, const mnemo_stream_part *part, void *arg);

typedef struct mnemo_tool_call
{
	char	   *part_id;		/* for mnemo_session_tool_result */
	char	   *call_id;
	char	   *name;
	char	   *input;			/* JSON */
} mnemo_tool_call;

typedef struct mnemo_turn
{
	char		user_message_id[MNEMO_ID_MAX + 1];
	char		message_id[MNEMO_ID_MAX + 1];	/* the assistant's */
	char	   *text;			/* the reply's text, "" when none */
	size_t		n_tool_calls;
	mnemo_tool_call *tool_calls;
	mnemo_tokens tokens;
	double		cost;
	char	   *finish_reason;	/* stop, length, tool_calls, content_filter,
								 * refusal, error, cancelled, ... */
	bool		compaction_triggered;
	bool		doom_loop;
} mnemo_turn;

MNEMO_API void mnemo_turn_free(mnemo_turn *turn);

/*
 * One chat turn on a session: text (a user text part) or parts (n_parts of
 * them), not both; neither (NULL, 0) appends no user message, to let the
 * model go on after tool results.  on_part may be NULL.  *turn (may be
 * NULL) gets the result, also when the stream failed after it began (then
 * the error is returned and the turn holds what streamed, finish_reason
 * "error" or "cancelled").  opts may be NULL.
 */
MNEMO_API int mnemo_session_send(mnemo_store *st, const char *session_id,
								 const mnemo_turn_options *opts, const char *text,
								 const mnemo_new_part *parts, size_t n_parts,
								 mnemo_part_fn on_part, void *arg, mnemo_turn **turn);

/* A tool began running: its part goes to state running, started_at now. */
MNEMO_API int mnemo_session_tool_start(mnemo_store *st, const char *session_id,
									   const char *part_id);

/* A tool's output: state completed (or error, with output as the error
 * message), completed_at now; the next send includes it. */
MNEMO_API int mnemo_session_tool_result(mnemo_store *st, const char *session_id,
										const char *part_id, const char *output, bool is_error);

/* mnemo_session_get, after marking "interrupted" every assistant message of
 * the session left without a finish reason by a turn that died. */
MNEMO_API int mnemo_session_load(mnemo_store *st, const char *id, mnemo_session **out);

/* Stop the turn streaming on this handle, promptly: the one call that may
 * be made from another thread while the handle is in use.  A cancel that
 * comes when no turn has begun is forgotten when the next one begins. */
MNEMO_API void mnemo_store_cancel(mnemo_store *st);

/* The HTTP status of the provider's last response on this handle; 0 if none. */
MNEMO_API int mnemo_http_status(const mnemo_store *st);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_H */
