/*
 * mnemo/chat.h
 *		Chat turns: mnemo_session_send and what it leaves to the caller.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_CHAT_H
#define MNEMO_API_CHAT_H

#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Chat turns
 *
 * mnemo_session_send() runs one turn of the seed's send() walkthrough:
 *	1. the user message and its parts are committed;
 *	2. if the assembled context (mnemo.context_report: what a turn would
 *	   send, which survives restarts, not a running sum of provider tokens)
 *	   is over the hard threshold (usable budget), a compaction runs
 *	   blocking and must bring it under before going on: the hook, or with
 *	   none the compaction engine (mnemo_compact, doc/compaction.md); a
 *	   context still over the budget (summaries alone) is never sent;
 *	3. the context comes from mnemo.build_context with the budget
 *	   usable = context_limit - max_output_tokens - compaction_output_budget
 *	   - the system prompt's and the tools' tokens;
 *	4. the assistant row is appended (no parts) and committed with the user
 *	   turn, before the provider is called, as the seed does: a request
 *	   refused (401, 429 after the retries, ...) or never answered leaves it
 *	   empty with finish reason "error";
 *	5. the reply streams: each text / reasoning delta and each completed tool
 *	   call reaches on_part as it arrives; the parts are appended as they
 *	   complete;
 *	6. usage, cost (from the price table) and the finish reason are written
 *	   with update_message_tokens;
 *	7. over the soft threshold the hook is called with blocking = false,
 *	   or with none the engine starts on a thread and connection of its own
 *	   (a background compaction, whose outcome a later call on this handle
 *	   publishes), and the turn says so;
 *	8. the same tool call (name and input) doom_loop_threshold times in a
 *	   row publishes MNEMO_EVENT_DOOM_LOOP_DETECTED.
 * While a turn streams, the session is held with an advisory lock, so that
 * mnemo_session_load() in any process can tell a dead turn (an assistant
 * message without finish reason and without its lock) from a live one.
 * A turn's statements go in four round trips (libpq pipeline mode) and two
 * commits: steps 1 to 4 in one transaction, 6 with the last part in another.
 * ------------------------------------------------------------------------ */

/* libcurl's global initialisation: call once before any thread sends, and
 * mnemo_global_cleanup() once at the end.  Errors: NOMEM (libcurl could
 * not initialise). */
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

/* A compaction hook, in place of the engine the turn runs by default:
 * blocking says the turn waits for it (hard threshold).  Non-zero fails the
 * turn (blocking) or publishes COMPACTION_FAILED (background).  A hook that
 * returns 0 and does nothing turns compaction off. */
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
	mnemo_compact_fn compact;	/* NULL: the compaction engine */
	void	   *compact_arg;
	int			recall;			/* the recall tools lcm_grep, lcm_describe,
								 * lcm_expand (mnemo/recall.h), run by the
								 * turn itself: 0 offered when the context
								 * holds a summary or a file reference, > 0
								 * always, < 0 never */
} mnemo_turn_options;

/* Initialises turn options: every field its default. */
#define MNEMO_TURN_OPTIONS_INIT { 0 }

/* One piece of the reply as it streams. */
typedef struct mnemo_stream_part
{
	const char *type;			/* "text", "reasoning" or "tool" */
	const char *delta;			/* text / reasoning: the new text */
	size_t		len;
	const char *tool_call_id;	/* tool: a complete call */
	const char *tool_name;
	const char *tool_input;		/* a JSON object's text, or the model's text
								 * as written when it is not one */
	const char *part_id;		/* tool: its stored part */
} mnemo_stream_part;

/* Valid only during the call.  Non-zero cancels the turn (CANCELLED).  It
 * must not use st, which is the turn's until it returns: a call on it is
 * refused (INVALID_ARGUMENT), but for the error readers and
 * mnemo_turn_cancel. */
typedef int (*mnemo_part_fn) (mnemo_store *st, const mnemo_stream_part *part, void *arg);

typedef struct mnemo_tool_call
{
	char	   *part_id;		/* for mnemo_session_tool_result */
	char	   *call_id;
	char	   *name;
	char	   *input;			/* as tool_input of mnemo_stream_part */
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

/* Free a turn result and the tool calls it holds. */
MNEMO_API void mnemo_turn_free(mnemo_turn *turn);

/*
 * One chat turn on a session: text (a user text part) or parts (n_parts of
 * them), not both; neither (NULL, 0) appends no user message, to let the
 * model go on after tool results.  on_part may be NULL.  *turn (may be
 * NULL) gets the result, also when the stream failed after it began (then
 * the error is returned and the turn holds what streamed, finish_reason
 * "error" or "cancelled").  opts may be NULL (MNEMO_TURN_OPTIONS_INIT).
 * Errors: SESSION_NOT_FOUND, SESSION_INACTIVE, NO_PROVIDER, INVALID_ARGUMENT,
 * AUTH, RATE_LIMITED, HTTP, NETWORK, TIMEOUT, STREAM, CANCELLED, NOMEM.
 */
MNEMO_API int mnemo_session_send(mnemo_store *st, const char *session_id,
								 const mnemo_turn_options *opts, const char *text,
								 const mnemo_new_part *parts, size_t n_parts,
								 mnemo_part_fn on_part, void *arg, mnemo_turn **turn);

/* A tool began running: its part goes to state running, started_at now.
 * Errors: PART_NOT_FOUND, INVALID_ARGUMENT (not a tool part). */
MNEMO_API int mnemo_session_tool_start(mnemo_store *st, const char *session_id,
									   const char *part_id);

/* A tool's output: state completed (or error, with output as the error
 * message), completed_at now; the next send includes it.
 * Errors: PART_NOT_FOUND, INVALID_ARGUMENT (not a tool part). */
MNEMO_API int mnemo_session_tool_result(mnemo_store *st, const char *session_id,
										const char *part_id, const char *output, bool is_error);

/* mnemo_session_get, after marking "interrupted" every assistant message of
 * the session left without a finish reason by a turn that died (one whose
 * turn lock no connection holds).  Errors: SESSION_NOT_FOUND. */
MNEMO_API int mnemo_session_load(mnemo_store *st, const char *id, mnemo_session **out);

/* Cancel the turn streaming on this handle, promptly: the one call that
 * may be made from another thread while the handle is in use.  The turn
 * then fails with CANCELLED, keeping what streamed.  A cancel that comes
 * when no turn has begun is forgotten when the next one begins. */
MNEMO_API void mnemo_turn_cancel(mnemo_store *st);

/* The name of mnemo_turn_cancel in 0.1 (it cancels the turn, not the store),
 * kept exported for programs built against 0.1. */
MNEMO_API MNEMO_DEPRECATED("use mnemo_turn_cancel") void mnemo_store_cancel(mnemo_store *st);

/* The HTTP status of the provider's last response on this handle; 0 if none. */
MNEMO_API int mnemo_http_status(const mnemo_store *st);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_CHAT_H */
