/*
 * chat.h
 *		The chat room: one turn of mnemo_session_send, in the files of its
 *		concerns.
 *
 * Owns: chat/ (send.c, the turn's control flow and mnemo_session_load;
 * ask.c, one prompt outside a session (compaction levels, LLMMap);
 * settings.c, the turn's settings from its options, the session and the
 * environment; context.c, the one place the turn reads its context;
 * request.c, the provider request made of it, sent; persist.c, the stream's
 * deltas into parts and the usage; thresholds.c, the hard and soft context
 * thresholds and the doom loop; turn.c, what a turn leaves to the caller).
 * May call: stream/ (the transport and the decoders), store/ (the typed
 * wrappers and the calls a turn batches), events/, core/.  Nothing below
 * calls into chat/.
 */
#ifndef MNEMO_CHAT_H
#define MNEMO_CHAT_H

#include "core/json.h"
#include "store/store.h"
#include "stream/stream.h"

/* ---- the turn's settings (settings.c) ---- */

typedef struct turn_cfg
{
	mn_provider provider;
	const char *provider_name;
	char	   *model;
	char	   *url;
	const char *api_key;		/* borrowed: options or environment */
	int			context_limit;
	int			max_output;
	int			compaction_budget;
	double		soft;
	int			connect_ms;
	int			idle_ms;
	int			retries;
	int			doom;
	int			available;		/* the context budget of the turn */
} turn_cfg;

/* The settings of a turn on session s: the options, else the session, else
 * the environment, else the defaults.  MNEMO_OK, or NO_PROVIDER (no
 * provider or no API key), INVALID_ARGUMENT (no model, no room for
 * context), NOMEM; the caller frees c->url and c->model either way. */
int			mn_turn_settings(mnemo_store *st, const mnemo_turn_options *o,
							 const mnemo_session *s, turn_cfg *c);

/* ---- one prompt outside a session (ask.c) ---- */

typedef struct mn_ask_request
{
	const char *system;			/* NULL: none */
	const char *prompt;			/* the one user message */
	int			max_output;		/* 0: the settings' */
	bool		has_temperature;
	double		temperature;
	int			timeout_ms;		/* > 0: the whole request's bound (error
								 * TIMEOUT); 0: the settings' idle timeout */
} mn_ask_request;

/* The model's reply to a->prompt appended to *reply.  MNEMO_OK, or the
 * transport's error (AUTH, HTTP, RATE_LIMITED, NETWORK, TIMEOUT, STREAM:
 * also a reply cut short), NOMEM, set on the handle. */
int			mn_ask(mnemo_store *st, const turn_cfg *cfg, const mn_ask_request *a, mn_buf *reply);

/* ---- the turn's context (context.c) ---- */

/* What a turn reads of its context (flags of mn_turn_context_calls). */
#define TURN_REPORT		0x1		/* the budget report: the context's size */
#define TURN_CONTEXT	0x2		/* the assembled context, with the parts of
								 * its assistant messages (and the report) */

/*
 * The turn's context as the server assembles it for the budget.  Every read
 * of it goes through mn_turn_context_calls, so the statements behind it are
 * chosen in one place.
 */
typedef struct turn_context
{
	unsigned	what;			/* TURN_* read by the last calls */
	mn_call    *calls;			/* those calls, in the caller's batch */
	mnemo_context_budget report;	/* TURN_REPORT */
	mnemo_context *ctx;			/* TURN_CONTEXT: the entries */
	mnemo_messages *msgs;		/* TURN_CONTEXT: its assistant messages,
								 * with their parts, in context order */
} turn_context;

/* The most calls mn_turn_context_calls adds to a batch. */
#define TURN_CONTEXT_CALLS 1

/*
 * Add the calls that read what (TURN_*) of session sid's context within
 * budget tokens to a batch, at calls[*n] onward, advancing *n; tc
 * remembers them for mn_turn_context_read.  MNEMO_OK or the argument error.
 */
int			mn_turn_context_calls(mnemo_store *st, const char *sid, int budget, unsigned what,
								  mn_call *calls, size_t *n, turn_context *tc);

/* Read the results of the batch's context calls into tc (replacing what it
 * held); MNEMO_OK, or PROTOCOL / NOMEM set on the handle. */
int			mn_turn_context_read(mnemo_store *st, turn_context *tc);

/* The assembled context's size: what a turn would send, summaries too. */
int64_t		mn_turn_context_size(const turn_context *tc);

void		mn_turn_context_free(turn_context *tc);

/* ---- the turn's state while it streams (persist.c) ---- */

typedef struct turn_state
{
	mnemo_store *st;
	const char *session_id;
	const turn_cfg *cfg;
	mnemo_turn *turn;
	mnemo_part_fn on_part;
	void	   *arg;
	bool		locked;			/* the session's turn lock is held */
	int64_t		row_seq;
	bool		accepted;		/* the provider accepted the request */
	/* the text or reasoning part being streamed */
	bool		open;
	mn_delta_kind open_kind;
	int			open_block;
	mn_buf		part;
	char	   *signature;
	mn_buf		text;			/* the whole reply's text */
	size_t		cap_calls;
	const char *tools;			/* what the request offers: the caller's, or
								 * those with the recall tools (recall.c) */
} turn_state;

/* The stream's callback (mn_delta_fn): arg is the turn_state.  Parts are
 * appended as they complete, tool calls as pending tool parts; on_part
 * hears every delta.  MNEMO_OK or the error that stops the stream. */
int			mn_turn_on_delta(void *arg, const mn_delta *d);

/*
 * The text or reasoning part in progress: appended at once when into is
 * NULL, else made into *into, a call of the turn's last batch (into->stmt
 * stays NULL when there is none).
 */
int			mn_turn_flush_part(turn_state *ts, mn_call *into);

/* The add_checkpoint call of a completed turn, made into *call. */
int			mn_turn_checkpoint_call(turn_state *ts, mn_call *call);

/* The cost of the tokens at the options' price of the model (0: none). */
double		mn_turn_cost(const mnemo_turn_options *o, const char *model, const mnemo_tokens *t);

void		mn_turn_state_clear(turn_state *ts);

/* ---- the provider request (request.c) ---- */

/*
 * Steps 4 to 6: the provider request made of the context, sent, its stream
 * read to the end.  Deltas reach mn_turn_on_delta through the stream.
 * MNEMO_OK when the stream completed, else the error set on the handle
 * (what mn_http_send returns, STREAM for a failed or cut stream).
 */
int			mn_turn_request(mnemo_store *st, const turn_cfg *c,
							const mnemo_session *s, const turn_context *tc, turn_state *ts,
							mn_stream *stream);

/* ---- the recall tools (recall.c) ---- */

/* The recall tools' definitions, a JSON array in the tools option's form. */
extern const char *const mn_recall_tools;

/* Whether name is one of the recall tools. */
bool		mn_recall_is_tool(const char *name);

/* Whether the turn offers the recall tools: the option (> 0: always, their
 * definitions reserved in c->available), else whether the context it sends
 * holds a summary or a file reference and they fit beside it. */
bool		mn_recall_wanted(const mnemo_turn_options *o, const turn_cfg *c,
							 const turn_context *tc);

/* The caller's tools (NULL: none) with the recall tools after them, in a
 * malloc'd *out.  MNEMO_OK or NOMEM. */
int			mn_recall_tools_with(mnemo_store *st, const char *tools, char **out);

/*
 * Answer the recall calls of turn: each runs, its result stored on its part
 * (a failed call's error as its result), and leaves turn->tool_calls, which
 * keeps the caller's; *ran counts them.  MNEMO_OK, or the error that stops
 * the turn (CONNECTION, NOMEM, a write that failed).
 */
int			mn_recall_answer(mnemo_store *st, const char *sid, const turn_cfg *c,
							 mnemo_turn *turn, int *ran);

/* ---- thresholds (thresholds.c) ---- */

/* Whether the context is over the hard threshold: the budget (and a
 * blocking compaction must run before the provider is called). */
bool		mn_turn_over_hard(const turn_cfg *c, int64_t size);

/* Step 7: over the soft threshold, trigger compaction in the background
 * (the options' hook, not blocking the turn's outcome). */
void		mn_turn_check_soft(mnemo_store *st, const char *sid, const mnemo_turn_options *o,
							   const turn_cfg *c, turn_state *ts, int64_t size);

/*
 * The compaction engine a turn runs when its options set no hook
 * (compact/hook.c): blocking, on this connection until the context is under
 * the turn's budget; else on a thread of its own until it is under the soft
 * threshold.  0, or the blocking compaction's error.
 */
int			mn_compact_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *t,
							const turn_cfg *c, bool blocking);

/* Join this handle's background compaction if it has finished, publishing
 * its COMPACTION_COMPLETED or _FAILED here (compact/hook.c). */
void		mn_compact_reap(mnemo_store *st);

/* Step 8: the same tool call doom_loop_threshold times in a row marks the
 * turn and publishes DOOM_LOOP_DETECTED.  MNEMO_OK or the read's error. */
int			mn_turn_check_doom_loop(mnemo_store *st, const char *sid, const turn_cfg *c,
									turn_state *ts);

#endif							/* MNEMO_CHAT_H */
