/*
 * stream.h
 *		The streaming layer of libmnemo: server-sent events, the providers'
 *		event decoders, request bodies and HTTP error bodies.
 *
 * Nothing here does I/O.  The transport (libcurl) hands the response body
 * to mn_stream_feed() in whatever pieces it receives; the stream
 * (stream.c) parses the server-sent events (sse.c), a provider decoder
 * (openai_stream.c, anthropic_stream.c) turns each event into deltas of
 * one normalized vocabulary, and the caller's callback receives them in
 * order:
 *
 *		mn_stream  *s = mn_stream_new(MN_PROVIDER_OPENAI, NULL, on_delta, arg);
 *		while (bytes arrive)
 *			if (mn_stream_feed(s, buf, n) != MN_STREAM_OPEN)
 *				break;						(stop reading: the turn is over)
 *		state = mn_stream_end(s);			(at end of body, or after a break)
 *		... mn_stream_usage(s), mn_stream_finish(s), mn_stream_error_of(s) ...
 *		mn_stream_free(s);
 *
 * The request side (provider_request.c) builds the exact JSON body of a
 * turn for each provider, and http_error.c reads the JSON body of an HTTP
 * error response.
 *
 * Owns: stream/ (sse.c, stream.c, names.c, openai_stream.c,
 * anthropic_stream.c, text_chunk.c, provider_request.c, http_error.c; and
 * the transport, http.c, declared in http.h).  May call: core/ only (the
 * buffer and JSON helpers of core/json.h; http.c the handle's errors):
 * nothing here knows the SQL API, so the decoders and the SSE parser build
 * and are fuzzed without a database.
 *
 * All symbols are internal (mn_ prefix, hidden).  Nothing is thread-safe:
 * one stream belongs to one transfer.  Every string the stream hands out is
 * NUL-terminated and also has a length (provider text may hold U+0000,
 * which JSON allows as \u0000); pointers in a delta are good only until the
 * callback returns.  Text is valid UTF-8: the SSE layer replaces invalid
 * bytes with U+FFFD as the WHATWG decoder does.  doc/wire-formats.md
 * describes what is accepted from the wire.
 */
#ifndef MNEMO_STREAM_H
#define MNEMO_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

struct json_object;

/* ========================================================================
 * Server-sent events (sse.c)
 *
 * An incremental parser of the WHATWG "event stream" format
 * (text/event-stream): bytes in any chunking (a line, a CRLF pair or a
 * UTF-8 sequence may be split anywhere), lines ending in LF, CRLF or a lone
 * CR, a UTF-8 BOM at the very start ignored, "field: value" with one
 * optional space after the colon (a line without a colon is a field with
 * an empty value), fields event / data / id / retry (others ignored; names
 * are case-sensitive), several data lines joined with LF, lines starting
 * with ':' are comments, and a blank line dispatches the event.  An event
 * whose data buffer is empty (no data line at all) is not dispatched.  An
 * event left incomplete when the stream ends is discarded.
 *
 * Memory is bounded by max_event: the event being assembled (data, type
 * and the line in progress) may not grow past it.  Comment lines are
 * skipped as they stream and cost nothing, however long.
 * ======================================================================== */

typedef struct mn_sse mn_sse;

typedef struct mn_sse_event
{
	const char *type;			/* the event field, "message" when none */
	size_t		type_len;
	const char *data;			/* the data lines joined with LF, without the
								 * final LF; may be "" (a bare "data:") */
	size_t		len;
	const char *id;				/* the last event ID so far, "" when none */
} mn_sse_event;

/*
 * Called for each dispatched event.  Return 0 to go on; any other value
 * stops the parser: mn_sse_feed() returns it at once, without looking at
 * the rest of its bytes, and every later feed returns it again.
 */
typedef int (*mn_sse_event_fn) (void *arg, const mn_sse_event *ev);

/* Errors of mn_sse_feed(); a callback should not return these values. */
#define MN_SSE_TOO_LARGE	(-1)	/* an event grew past max_event */
#define MN_SSE_NOMEM		(-2)

/* The default maximum size of one event (8 MiB). */
#define MN_SSE_DEFAULT_MAX_EVENT ((size_t) 8 * 1024 * 1024)

/* A parser; max_event 0 means the default.  NULL when out of memory. */
mn_sse	   *mn_sse_new(size_t max_event, mn_sse_event_fn cb, void *arg);

/*
 * Feed the next bytes of the stream.  Returns 0, MN_SSE_TOO_LARGE,
 * MN_SSE_NOMEM or the callback's non-zero value.  Errors are sticky: a
 * parser that failed or was stopped stays so.
 */
int			mn_sse_feed(mn_sse *p, const char *bytes, size_t len);

/* Whether an event or line was in progress (bytes that a blank line has not
 * dispatched yet): at the end of the stream, they are lost. */
bool		mn_sse_pending(const mn_sse *p);

/* The last "retry" value (milliseconds), or -1 when the stream sent none. */
int64_t		mn_sse_retry(const mn_sse *p);

/* The last event ID (as at the last dispatch), "" when none. */
const char *mn_sse_last_id(const mn_sse *p);

/* Whether the event's type is name (a type may hold a NUL: compared by
 * length, not as a C string). */
bool		mn_sse_type_is(const mn_sse_event *ev, const char *name);

void		mn_sse_free(mn_sse *p);

/* ========================================================================
 * Deltas: what a provider's response is made of, normalized
 * ======================================================================== */

typedef enum mn_provider
{
	MN_PROVIDER_OPENAI = 1,		/* Chat Completions and compatible servers */
	MN_PROVIDER_ANTHROPIC = 2	/* Messages */
} mn_provider;

/*
 * Why the model stopped, in one vocabulary for both providers (the
 * provider's own word is kept beside it):
 *
 *	STOP			natural end: OpenAI stop, Anthropic end_turn, stop_sequence
 *	LENGTH			cut by the output limit: OpenAI length, Anthropic
 *					max_tokens, model_context_window_exceeded
 *	TOOL_CALLS		the model called tools: OpenAI tool_calls, function_call,
 *					Anthropic tool_use, and any other reason given with tool
 *					calls that would otherwise read STOP (OpenRouter sends
 *					stop with tool calls)
 *	CONTENT_FILTER	OpenAI content_filter
 *	REFUSAL			Anthropic refusal; OpenAI stop after a refusal delta
 *	PAUSE			Anthropic pause_turn (a server tool paused the turn)
 *	OTHER			a reason this code does not know
 */
typedef enum mn_finish
{
	MN_FINISH_NONE = 0,			/* no finish reason (yet) */
	MN_FINISH_STOP,
	MN_FINISH_LENGTH,
	MN_FINISH_TOOL_CALLS,
	MN_FINISH_CONTENT_FILTER,
	MN_FINISH_REFUSAL,
	MN_FINISH_PAUSE,
	MN_FINISH_OTHER
} mn_finish;

/* "stop", "length", "tool_calls", "content_filter", "refusal", "pause",
 * "other"; NULL for MN_FINISH_NONE. */
const char *mn_finish_name(mn_finish f);

/* What kind of failure an error is, for HTTP errors and mid-stream provider
 * errors alike (the caller maps it to its error code and retry policy). */
typedef enum mn_errclass
{
	MN_ERRCLASS_OTHER = 0,
	MN_ERRCLASS_BAD_REQUEST,	/* 400, 422 and other 4xx */
	MN_ERRCLASS_CONTEXT_OVERFLOW,	/* the prompt is longer than the model's
									 * context (a 400 the caller can fix by
									 * compacting) */
	MN_ERRCLASS_AUTH,			/* 401: missing or wrong key */
	MN_ERRCLASS_PERMISSION,		/* 403 */
	MN_ERRCLASS_NOT_FOUND,		/* 404: unknown model or path */
	MN_ERRCLASS_TOO_LARGE,		/* 413 */
	MN_ERRCLASS_RATE_LIMIT,		/* 429 that passes with time */
	MN_ERRCLASS_QUOTA,			/* 402, 429 insufficient_quota or a spend
								 * limit: retrying does not help */
	MN_ERRCLASS_TIMEOUT,		/* 408, 504 */
	MN_ERRCLASS_OVERLOADED,		/* 529, 503, overloaded_error */
	MN_ERRCLASS_SERVER			/* 500 and other 5xx, api_error,
								 * server_error */
} mn_errclass;

/* "other", "bad_request", "context_overflow", "auth", ... */
const char *mn_errclass_name(mn_errclass c);

/* What went wrong in a stream. */
typedef enum mn_stream_err
{
	MN_STREAM_ERR_NONE = 0,
	MN_STREAM_ERR_PROVIDER,		/* the provider sent an error in the stream */
	MN_STREAM_ERR_MALFORMED,	/* an event's data is not the JSON expected */
	MN_STREAM_ERR_TOO_LARGE,	/* an event, a tool input or the number of
								 * tool calls is over its limit */
	MN_STREAM_ERR_NOMEM
} mn_stream_err;

typedef struct mn_stream_error
{
	mn_stream_err kind;
	mn_errclass errclass;		/* PROVIDER: from error.type and code */
	const char *message;		/* never NULL; the provider's message for
								 * PROVIDER */
	const char *type;			/* PROVIDER: error.type, or NULL */
	const char *code;			/* PROVIDER: error.code as text (an integer
								 * code in decimal), or NULL */
} mn_stream_error;

typedef enum mn_delta_kind
{
	MN_DELTA_START = 1,			/* the response began: id, model (either may
								 * be NULL); at most once, first */
	MN_DELTA_TEXT,				/* text, len, block */
	MN_DELTA_REASONING,			/* text, len, block: thinking (Anthropic
								 * thinking_delta; reasoning_content or
								 * reasoning from OpenAI-compatible servers) */
	MN_DELTA_REASONING_SIGNATURE,	/* text, len, block: Anthropic's
									 * signature of the thinking block, to send
									 * back with it */
	MN_DELTA_REFUSAL,			/* text, len, block: OpenAI's refusal text */
	MN_DELTA_TOOL_START,		/* tool, provider_index, id, name */
	MN_DELTA_TOOL_INPUT,		/* tool, provider_index, id, name, text, len:
								 * the next piece of the input JSON text */
	MN_DELTA_TOOL_END,			/* tool, provider_index, id, name, text, len:
								 * the whole input; input, input_valid */
	MN_DELTA_USAGE,				/* usage: the totals so far (the last one
								 * delivered is the turn's) */
	MN_DELTA_FINISH,			/* finish, raw_finish; at most once */
	MN_DELTA_ERROR,				/* error; the last delta of the stream */
	MN_DELTA_DONE				/* the terminal event arrived after a finish
								 * reason: the reply is complete; the last
								 * delta of the stream */
} mn_delta_kind;

/*
 * One delta.  Fields not listed for a kind are 0/NULL.
 *
 * Tool calls: each call goes TOOL_START, TOOL_INPUT..., TOOL_END, in that
 * order; calls may interleave (OpenAI's parallel calls), told apart by
 * `tool`, the call's number in this reply (0, 1, ... in the order of their
 * TOOL_START, whatever indexes the provider used).  id is the provider's
 * call id (OpenAI call_..., Anthropic toolu_...), or "call_<tool>" when the
 * server gave none.  The input of TOOL_END is the concatenated fragments
 * ("{}" when there were none, or only blanks); input is it parsed by json-c
 * in strict mode (borrowed: valid during the callback) when it is one JSON
 * object, else NULL with input_valid false: models do emit invalid JSON, and
 * it is the caller's to report to the model, not a stream error.  Calls
 * end at Anthropic's content_block_stop, at OpenAI's finish_reason (all
 * open calls, in the order they first appeared) or, failing that, at the
 * terminal event; a call still open when the stream fails, stops or is
 * interrupted gets no TOOL_END (its input is incomplete).
 *
 * block: for text, reasoning and refusal, the content block the text
 * belongs to (Anthropic's block index; 0 for OpenAI): a change of block
 * starts a new part.
 */
typedef struct mn_delta
{
	mn_delta_kind kind;
	int			block;
	int			tool;
	int64_t		provider_index;
	const char *text;
	size_t		len;
	const char *id;
	const char *name;
	const char *model;
	struct json_object *input;
	bool		input_valid;
	const mnemo_tokens *usage;
	mn_finish	finish;
	const char *raw_finish;		/* FINISH: the provider's own word */
	const mn_stream_error *error;
} mn_delta;

/*
 * Called for each delta, in stream order.  Return 0 to go on; any other
 * value stops the stream (state MN_STREAM_STOPPED, mn_stream_stop_value()
 * gives the value), e.g. when the caller could not persist a part or the
 * turn was cancelled.  The callback must not feed, end or free the stream
 * it is called from.
 */
typedef int (*mn_delta_fn) (void *arg, const mn_delta *d);

/* ========================================================================
 * The stream (stream.c): bytes in, deltas out
 * ======================================================================== */

typedef struct mn_stream mn_stream;

/*
 * Usage normalized across providers, as mnemo stores it: input counts the
 * prompt tokens neither read from nor written to the cache, so that input +
 * cache_read + cache_write is the whole prompt (OpenAI's prompt_tokens
 * includes its cached_tokens; they are subtracted); output is the reply,
 * reasoning included; reasoning is the part of output the provider reports
 * as reasoning (OpenAI completion_tokens_details.reasoning_tokens; 0 when
 * not reported).  Anthropic's counts are cumulative: message_start gives the
 * input and cache counts, message_delta the output so far (and, when it
 * says so, new input and cache counts).
 */

/* Limits that keep a hostile or broken server from exhausting memory. */
typedef struct mn_stream_limits
{
	size_t		max_event;		/* one SSE event; 0: MN_SSE_DEFAULT_MAX_EVENT */
	size_t		max_tool_input; /* one tool call's input; 0: 16 MiB */
	size_t		max_tool_calls; /* tool calls in one reply; 0: 1024 */
	bool		json_only;		/* every event through json-c, none through
								 * text_chunk.c: the fuzzers' reference */
} mn_stream_limits;

typedef enum mn_stream_state
{
	MN_STREAM_OPEN = 0,			/* wants more bytes */
	MN_STREAM_COMPLETE,			/* the terminal event ([DONE], message_stop)
								 * came after a finish reason; DONE delivered */
	MN_STREAM_FAILED,			/* an ERROR delta was delivered (provider
								 * error, malformed or oversized event, out of
								 * memory) */
	MN_STREAM_STOPPED,			/* the callback returned non-zero */
	MN_STREAM_INTERRUPTED		/* the stream ended without its terminal
								 * event (mn_stream_end() while open), or the
								 * terminal event came with no finish reason
								 * (a gateway that hides a failure behind a
								 * clean [DONE]): a truncated reply, never a
								 * finished one */
} mn_stream_state;

/* "open", "complete", "failed", "stopped", "interrupted" */
const char *mn_stream_state_name(mn_stream_state s);

/* A stream for provider's responses; limits NULL: the defaults.  NULL when
 * out of memory or the provider is unknown. */
mn_stream  *mn_stream_new(mn_provider provider, const mn_stream_limits *limits,
						  mn_delta_fn cb, void *arg);

/*
 * Feed the next bytes of the response body; returns the state after them.
 * Anything but MN_STREAM_OPEN means the turn is over and later bytes are
 * ignored (vLLM's [DONE] after an error, a proxy's trailing bytes).
 */
mn_stream_state mn_stream_feed(mn_stream *s, const char *bytes, size_t len);

/*
 * The body ended (or the caller stopped reading): returns the final state,
 * MN_STREAM_INTERRUPTED when the stream was still open.  Feeding after it
 * does nothing.
 */
mn_stream_state mn_stream_end(mn_stream *s);

mn_stream_state mn_stream_state_of(const mn_stream *s);

/* The value the callback returned to stop the stream, 0 when it did not. */
int			mn_stream_stop_value(const mn_stream *s);

/* The last usage delivered; false (and zeros) when the stream had none. */
bool		mn_stream_usage(const mn_stream *s, mnemo_tokens *out);

/* The finish reason delivered, MN_FINISH_NONE when none; *raw (may be
 * NULL) gets the provider's word, owned by the stream. */
mn_finish	mn_stream_finish(const mn_stream *s, const char **raw);

/* The error delivered (state FAILED), owned by the stream; else NULL. */
const mn_stream_error *mn_stream_error_of(const mn_stream *s);

/* Tool calls started (TOOL_START delivered) so far. */
size_t		mn_stream_tool_calls(const mn_stream *s);

/* The SSE parser's last retry value and event id (see mn_sse_retry). */
int64_t		mn_stream_retry(const mn_stream *s);

void		mn_stream_free(mn_stream *s);

/* ------------------------------------------------------------------------
 * Between the stream and the provider decoders (not for callers)
 *
 * A decoder gets each SSE event; it reports what it found through the
 * helpers below, which deliver deltas and keep the stream's state.  Each
 * helper returns 0 to go on, non-zero when the stream is over (stopped by
 * the callback or failed): the decoder then returns that value at once.
 * ------------------------------------------------------------------------ */

typedef struct mn_decoder
{
	const char *name;
	void	   *(*create) (void);	/* NULL: out of memory */
	int			(*event) (mn_stream *s, void *state, const mn_sse_event *ev);
	void		(*destroy) (void *state);
} mn_decoder;

extern const mn_decoder mn_openai_decoder;	/* openai_stream.c */
extern const mn_decoder mn_anthropic_decoder;	/* anthropic_stream.c */

/* Parse text[0..len) (NUL-terminated) as one JSON value with nothing but
 * blanks around it; a new reference, or NULL when it is not. */
struct json_object *mn_stream_parse_json(mn_stream *s, const char *text, size_t len,
										 bool strict);

/*
 * The chunk that only adds text, recognised without json-c (text_chunk.c):
 * true with its text (in scratch, NUL-terminated) and, for Anthropic, its
 * block; false for anything else, which
 * the decoder then parses.
 */
struct mn_buf;
bool		mn_text_chunk_openai(const char *data, size_t len, struct mn_buf *scratch,
								 const char **text, size_t *tlen);
bool		mn_text_chunk_anthropic(const char *data, size_t len, struct mn_buf *scratch,
									int *block, const char **text, size_t *tlen);

/* For the decoders: the scratch buffer of the text-chunk path, or NULL when
 * the stream is json_only; whether START was delivered (or can no longer
 * be); the text of a chunk read that way, counted.  The count is for tests. */
struct mn_buf *mn_stream_text_scratch(mn_stream *s);
bool		mn_stream_started(const mn_stream *s);
int			mn_stream_chunk_text(mn_stream *s, int block, const char *text, size_t len);
size_t		mn_stream_chunk_count(const mn_stream *s);

/* Deliver a delta (START, TEXT, REASONING, REASONING_SIGNATURE, REFUSAL,
 * USAGE); empty text is not delivered. */
int			mn_stream_emit(mn_stream *s, const mn_delta *d);
int			mn_stream_start(mn_stream *s, const char *id, const char *model);
int			mn_stream_text(mn_stream *s, mn_delta_kind kind, int block,
						   const char *text, size_t len);

/* Merge counts into the stream's usage and deliver it; a field < 0 keeps
 * its value. */
int			mn_stream_set_usage(mn_stream *s, const mnemo_tokens *u);

/* The finish reason (the first one counts; later ones are ignored).  STOP
 * becomes TOOL_CALLS when the reply has tool calls. */
int			mn_stream_set_finish(mn_stream *s, mn_finish f, const char *raw);

/*
 * The terminal event: ends any open tool call, then delivers DONE and
 * completes the stream if a finish reason came, else interrupts it.
 * Returns non-zero (the stream is over either way).
 */
int			mn_stream_terminal(mn_stream *s);

/* Fail the stream: deliver an ERROR delta.  type and code may be NULL.
 * Returns non-zero. */
int			mn_stream_fail(mn_stream *s, mn_stream_err kind, mn_errclass errclass,
						   const char *type, const char *code, const char *fmt,...)
			__attribute__((format(printf, 6, 7)));

/*
 * Tool calls, keyed by the provider's index (OpenAI tool_calls[].index,
 * Anthropic's block index).  tool_open starts a call (id or name may be
 * NULL or "" and come later through tool_set); TOOL_START is delivered
 * once the name is known, and input that came before it follows at once.
 */
typedef struct mn_tool mn_tool;

/* The open call with this provider index, or NULL. */
mn_tool    *mn_stream_tool_find(mn_stream *s, int64_t provider_index);

/* Start a call; *out gets it (NULL only with a non-zero return). */
int			mn_stream_tool_open(mn_stream *s, int64_t provider_index, const char *id,
								const char *name, mn_tool **out);

/* Set the id and/or name of a call that has none yet (NULL or "": leave). */
int			mn_stream_tool_set(mn_stream *s, mn_tool *t, const char *id, const char *name);

/* The call's id as it stands ("" when none yet). */
const char *mn_stream_tool_id(const mn_tool *t);

/* Input used when no fragment arrives (Anthropic's content_block_start
 * input), JSON text. */
int			mn_stream_tool_default_input(mn_stream *s, mn_tool *t, const char *json,
										 size_t len);
int			mn_stream_tool_input(mn_stream *s, mn_tool *t, const char *frag, size_t len);
int			mn_stream_tool_end(mn_stream *s, mn_tool *t);

/* End every open call, in order of first appearance. */
int			mn_stream_tools_end_all(mn_stream *s);

/* The class of a provider error from its type, code and HTTP status (0 for a
 * mid-stream error). */
mn_errclass mn_errclass_of(int status, const char *type, const char *code,
						   const char *message);

/* ========================================================================
 * Requests and HTTP errors (provider_request.c)
 * ======================================================================== */

typedef enum mn_req_role
{
	MN_REQ_USER = 1,			/* text */
	MN_REQ_ASSISTANT,			/* text, reasoning, tool_calls */
	MN_REQ_TOOL_RESULT			/* tool_call_id, text (the output), is_error */
} mn_req_role;

typedef struct mn_req_tool_call
{
	const char *id;				/* the provider's call id */
	const char *name;
	const char *input;			/* the input JSON object as text; NULL, "",
								 * or not a JSON object: sent as {} to
								 * Anthropic (which needs an object) and as
								 * written ("{}" for NULL) to OpenAI */
} mn_req_tool_call;

/* An image of a user message: base64 data with its media type, or a URL. */
typedef struct mn_req_image
{
	const char *media_type;		/* NULL: image/png is assumed for data */
	const char *data;			/* base64, or NULL */
	const char *url;			/* when data is NULL */
} mn_req_image;

typedef struct mn_req_message
{
	mn_req_role role;
	const char *text;			/* NULL reads as "" */
	const char *reasoning;		/* ASSISTANT, Anthropic only: a thinking
								 * block, sent back only with its signature */
	const char *reasoning_signature;
	const mn_req_tool_call *tool_calls; /* ASSISTANT */
	size_t		n_tool_calls;
	const char *tool_call_id;	/* TOOL_RESULT */
	bool		is_error;		/* TOOL_RESULT: Anthropic's is_error (OpenAI
								 * has no such field) */
	const mn_req_image *images; /* USER: sent after the text, as OpenAI's
								 * image_url and Anthropic's image blocks */
	size_t		n_images;
} mn_req_message;

typedef struct mn_request
{
	const char *model;			/* required */
	const char *system;			/* NULL or "": none */
	const mn_req_message *messages;
	size_t		n_messages;
	const char *tools;			/* NULL, or a JSON array of tool definitions,
								 * each {"name", "description", "parameters"}
								 * ("input_schema" is read as "parameters",
								 * and OpenAI's {"type":"function",
								 * "function":{...}} is accepted too) */
	int64_t		max_output_tokens;	/* > 0; required for Anthropic, for
									 * OpenAI 0 leaves it out */
	bool		has_temperature;
	double		temperature;
	bool		legacy_max_tokens;	/* OpenAI: max_tokens instead of
									 * max_completion_tokens (old servers) */
	int64_t		thinking_budget;	/* Anthropic: > 0 turns extended thinking
									 * on with this budget */
} mn_request;

/*
 * The request body for provider, malloc'd and NUL-terminated in *body
 * (*len its length; len may be NULL).  Returns MNEMO_OK,
 * MNEMO_ERR_INVALID_ARGUMENT with *errmsg (malloc'd, caller frees; errmsg
 * may be NULL) saying what is wrong, or MNEMO_ERR_NOMEM.
 *
 * OpenAI: {"model", "messages" (the system prompt first as a system
 * message; assistant tool calls as tool_calls with arguments the input
 * text; tool results as role tool), "tools" ([{"type":"function",
 * "function":{"name","description","parameters"}}]), "max_completion_tokens"
 * (or "max_tokens"), "temperature", "stream": true, "stream_options":
 * {"include_usage": true}}.
 *
 * Anthropic: {"model", "max_tokens", "system" (a top-level string),
 * "messages" (consecutive user-side messages, tool results included, are
 * merged into one user message whose content blocks keep their order;
 * assistant turns become thinking / text / tool_use blocks; empty text
 * blocks, which the API refuses, are left out), "tools" ([{"name",
 * "description","input_schema"}]), "temperature", "thinking", "stream":
 * true}.
 *
 * JSON the caller gives (tool definitions, tool inputs) is checked with
 * json-c and copied as written, numbers and all.
 */
int			mn_request_body(mn_provider provider, const mn_request *req, char **body,
							size_t *len, char **errmsg);

/*
 * What mn_request_body would refuse in the parts of a request that come from
 * a turn's options (the model's name, the tool definitions), checked alone:
 * a turn checks them before it writes anything.  MNEMO_OK,
 * MNEMO_ERR_INVALID_ARGUMENT with *errmsg as above, or MNEMO_ERR_NOMEM.
 */
int			mn_request_check_options(const char *model, const char *tools, char **errmsg);

/* An HTTP error response, read. */
typedef struct mn_http_error
{
	int			status;
	mn_errclass errclass;
	bool		retryable;		/* 408, 409, 429 and 5xx, except QUOTA; the
								 * transport also honours retry-after and
								 * x-should-retry */
	char	   *message;		/* the provider's message, else "HTTP <status>
								 * <reason>" and the start of the body;
								 * never NULL after a successful parse */
	char	   *type;			/* error.type, or NULL */
	char	   *code;			/* error.code as text, or NULL */
} mn_http_error;

/*
 * Read the body of a response with status >= 400: OpenAI's {"error":
 * {"message","type","param","code"}} (code a string, an integer or null),
 * llama.cpp's and vLLM's variants of it (also vLLM's old top-level
 * {"object":"error",...}), Anthropic's {"type":"error","error":{"type",
 * "message"}}; anything else (an HTML page from a proxy, nothing) gives a
 * message from the status.  One reader serves both providers: the shapes
 * do not collide, and OpenAI-compatible servers borrow Anthropic's type
 * names.  MNEMO_OK or MNEMO_ERR_NOMEM; free with mn_http_error_clear().
 */
int			mn_http_error_parse(int status, const char *body, size_t len,
								mn_http_error *out);
void		mn_http_error_clear(mn_http_error *e);

#endif							/* MNEMO_STREAM_H */
