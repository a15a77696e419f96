/*
 * mnemo/map.h
 *		LLMMap and AgenticMap: one prompt over many items, as durable maps
 *		that several processes can work at once.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_MAP_H
#define MNEMO_API_MAP_H

#include "chat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Maps (doc/maps.md)
 *
 * mnemo_map_create() stores a map in the database, owned by a session: the
 * template, the output schema, the options below marked "stored", and one
 * row per item.  mnemo_map_run() works it: its workers (threads, each with a
 * connection and a transport of its own) claim items under a lease, render
 * the template for each, call the model and record each outcome once.  Any
 * number of processes may run the same map; items a dead worker held are
 * claimed again when their lease expires, so a map finishes even after
 * every process working it died, when one runs it again.
 *
 * LLMMap (the default): one request per attempt, no session.  The reply's
 * markdown code fence, if any, is stripped; with a schema it must parse as
 * JSON (else error kind "validation") and match the schema (else
 * "schema_error"); after either, the next attempt appends the retry
 * guidance and the reason.  Attempts wait backoff_ms, doubling, between
 * them.  "timeout": no reply within timeout_ms; "llm_error": the provider
 * failed (after the transport's own retries of 429 / 5xx).
 *
 * AgenticMap: one sub-session per item (its parent_id the map's session, so
 * mnemo_session_list by parent finds them), a real multi-turn session
 * through mnemo_session_send with its own compaction.  The first turn is
 * the rendered template; it ends when a turn finishes (stop, length, a
 * content filter or refusal), with an empty continuation message, on a doom
 * loop ("doom_loop") or after max_turns turns ("max_turns").  Read-only by
 * default: no tools are offered, and a tool call the model makes anyway is
 * answered with an error result; with run_tool, turn.tools are offered and
 * run_tool answers each call.  Only the last turn's text is recorded: the parent
 * session's cost is one row per item, whatever the sub-session's length.
 *
 * Templates: "{{ item }}" is the item (a JSON string as its text, anything
 * else as JSON); "{{ item.NAME }}" a member of an object item (a nested
 * path "item.a.b" too).  A template must name the item at least once;
 * that is checked before any call (INVALID_ARGUMENT).
 *
 * Schemas (the subset of JSON Schema on json-c, doc/maps.md): "type"
 * (object, array, string, number, integer, boolean, null, or an array of
 * them), "properties", "required", "items", "enum", and
 * "additionalProperties": false.  Other keywords are refused when the map
 * is created, so a schema never silently validates less than it says.
 * ------------------------------------------------------------------------ */

/* One finished item, as the run that finished it saw it (strings valid
 * only during the callback). */
typedef struct mnemo_map_result
{
	int			ordinal;		/* the item's place in the input, from 0 */
	const char *item;			/* the item, JSON */
	bool		success;
	const char *output;			/* success: the validated JSON (with a
								 * schema) or the reply's text; else NULL */
	const char *error_kind;		/* timeout, validation, llm_error,
								 * schema_error, max_turns, doom_loop; or NULL */
	const char *error;			/* what went wrong, or NULL */
	int			attempts;		/* model calls (AgenticMap: turns) */
	const char *sub_session_id; /* AgenticMap: the item's session */
} mnemo_map_result;

/* Called as each item this process works is recorded, in completion order,
 * on the thread that called mnemo_map_run.  Non-zero stops the run after
 * the items in flight (the rest stay pending for a later run). */
typedef int (*mnemo_map_result_fn) (const mnemo_map_result *result, void *arg);

/* AgenticMap with tools: run one tool call of a sub-session (input is its
 * JSON) and set *output (malloc'd; the library frees it) to its result.
 * Return 0 for a result, non-zero for an error result (then *output, if
 * set, is the message).  Called on the worker threads, possibly several at
 * once: it must be thread-safe. */
typedef int (*mnemo_map_tool_fn) (const char *sub_session_id, const char *name, const char *input,
								  char **output, void *arg);

typedef struct mnemo_map_options
{
	/* create */
	const char *map_id;			/* NULL: the server makes a map_ id */
	const char *schema;			/* JSON Schema text of each output, or NULL */
	bool		agentic;		/* AgenticMap */
	/* stored with the map at create, and used by every run of it */
	int			max_retries;	/* LLMMap attempts after the first; 0: 3,
								 * < 0: none (at most 10) */
	int			timeout_ms;		/* one attempt (AgenticMap: one turn); 0: 60000 */
	int			backoff_ms;		/* before the first retry, doubling; 0: 500 */
	const char *system_prompt;	/* LLMMap; NULL: none */
	const char *retry_guidance; /* NULL: "Your previous reply was not valid.
								 * Reply with only JSON that matches the
								 * schema." */
	int			max_turns;		/* AgenticMap; 0: 20 */
	const char *continuation_message;	/* AgenticMap, later turns; NULL or
										 * "": one turn */
	/* run */
	int			concurrency;	/* workers in this process; 0: 16, AgenticMap
								 * 4; at most 128 */
	int			lease_ms;		/* an item's lease; 0: timeout_ms x
								 * (max_retries + 1) + 30000 (AgenticMap:
								 * x max_turns) */
	int			max_items;		/* stop after claiming this many; 0: none */
	const char *holder;			/* this process's name in leases; NULL:
								 * host, pid and a random suffix */
	mnemo_turn_options turn;	/* provider, model, base URL, key, context
								 * limit (sub-sessions), compaction hook;
								 * turn.tools is offered only with run_tool */
	mnemo_map_tool_fn run_tool; /* AgenticMap: NULL (the default) is
								 * read-only: no tools are offered */
	void	   *tool_arg;
	mnemo_map_result_fn on_result;
	void	   *arg;
} mnemo_map_options;

#define MNEMO_MAP_OPTIONS_INIT { 0 }

/* A map's progress (mnemo.map_status). */
typedef struct mnemo_map_status
{
	bool		agentic;
	int			items;
	int			done;
	int			failed;
	int			in_flight;		/* under a live lease */
	int			pending;		/* never claimed, or their lease expired */
	int64_t		created_at;		/* ms */
	int64_t		completed_at;	/* 0 until every item finished */
} mnemo_map_status;

/* What one mnemo_map_run did. */
typedef struct mnemo_map_run_stats
{
	int			done;			/* items this run recorded as done */
	int			failed;			/* ... as failed */
	int			lost;			/* finished here, but another worker had
								 * taken them over (not recorded) */
	int			attempts;		/* model calls */
} mnemo_map_run_stats;

/* Whether template names the item; INVALID_ARGUMENT saying why not. */
MNEMO_API int mnemo_map_check_template(mnemo_store *st, const char *template_text);

/* The template with item (JSON text) filled in, malloc'd into *out.
 * Errors: INVALID_ARGUMENT (a template without the item, item not JSON, a
 * {{ item.NAME }} the item lacks), NOMEM. */
MNEMO_API int mnemo_map_render(mnemo_store *st, const char *template_text, const char *item,
							   char **out);

/* Whether output (JSON text) matches schema (JSON text, the subset above).
 * Errors: INVALID_ARGUMENT with the path and the rule it breaks, or that
 * the schema uses a keyword outside the subset; FORMAT (output is not JSON). */
MNEMO_API int mnemo_map_validate(mnemo_store *st, const char *schema, const char *output);

/* Create a map owned by session_id over items (a JSON array of any values)
 * and publish MAP_STARTED; *map_id (malloc'd) gets its id.  Checks the
 * template and the schema first.  Errors: SESSION_NOT_FOUND,
 * SESSION_INACTIVE, DUPLICATE_ID, INVALID_ARGUMENT, NOMEM. */
MNEMO_API int mnemo_map_create(mnemo_store *st, const char *session_id, const char *template_text,
							   const char *items, const mnemo_map_options *opts, char **map_id);

/* Work the map until every item is finished (waiting out the leases of
 * other processes' workers, to take over those that die), on_result stops
 * it, or max_items were claimed.  Publishes MAP_ITEM_COMPLETED for each
 * item recorded here and MAP_COMPLETED if this run finished the map, on st
 * (on the calling thread, after each item committed).
 * stats may be NULL.  Errors: SESSION_NOT_FOUND, NOT_FOUND (no such map),
 * NO_PROVIDER, CONNECTION, NOMEM; an item's failure is its result, not an
 * error of the run. */
MNEMO_API int mnemo_map_run(mnemo_store *st, const char *session_id, const char *map_id,
							const mnemo_map_options *opts, mnemo_map_run_stats *stats);

/* Errors: SESSION_NOT_FOUND, NOT_FOUND. */
MNEMO_API int mnemo_map_get_status(mnemo_store *st, const char *session_id, const char *map_id,
								   mnemo_map_status *out);

/* The session that owns map_id (malloc'd), read from mnemo.maps (needs
 * SELECT on it, as every tenant role has).  Errors: NOT_FOUND. */
MNEMO_API int mnemo_map_session(mnemo_store *st, const char *map_id, char **session_id);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_MAP_H */
