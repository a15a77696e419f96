/*
 * core.h
 *		The ground floor of libmnemo: the store handle, its connection, the
 *		statement runner, errors, and the byte-level helpers every room uses
 *		(json.h: the one buffer and the one JSON walker; the clock; the
 *		digits and UTF-8 tests).
 *
 * Owns: core/ (store.c: open, check, reconnect, close; stmt.c: prepared
 * statements, batches, transactions; error.c; json.c; text.c; clock.c).
 * May call: libpq, json-c, mnemo.h.  Nothing in core/ calls up into the
 * other folders: a room that keeps state on the handle (events/, the feed,
 * stream/'s transport) registers an mn_attachment, which close and
 * reconnect call without knowing whose it is.
 *
 * The rooms above it, and the one way their dependencies point:
 *	chat/        the turn (mnemo_session_send)      -> stream, store, events, core
 *	files/       large files (mnemo_file_handle)    -> store, core
 *	transcript/  JSONL import and export, readers    -> store, events, core
 *	store/       typed wrappers of the SQL API       -> events, core
 *	stream/      HTTP, SSE, provider decoders         -> core
 *	events/      in-process bus, cross-process feed   -> core
 * client/cli/ sees only the public header, mnemo.h.
 *
 * A module declares its SQL as static const mn_stmt values beside the
 * functions that use them and runs them with mn_exec(): each is prepared once
 * per connection, on first use, and again after a reconnect.  Errors are set
 * on the handle with mn_fail() or mapped from a server result by mn_exec()
 * itself, so a public call's error path is "return mn_fail(...)" or
 * "return st->errcode".
 */
#ifndef MNEMO_CORE_H
#define MNEMO_CORE_H

#include <libpq-fe.h>
#include <stdatomic.h>

#include "mnemo.h"

/* The number of elements of an array (not a pointer). */
#define mn_lengthof(a) (sizeof(a) / sizeof((a)[0]))

struct json_object;

/* A parameterised statement, prepared once per connection by name. */
typedef struct mn_stmt
{
	const char *name;			/* unique in the library: "mnemo_<what>" */
	const char *sql;			/* $1..$n, never built from arguments */
	int			nparams;
} mn_stmt;

/*
 * State a room keeps on the handle (the event bus, the feed, the provider
 * transport), registered with mn_attach() when the room first makes it.
 * mnemo_store_close calls release; mnemo_store_reconnect calls resume (may
 * be NULL) after the new connection passed its check.
 */
typedef struct mn_attachment
{
	void		(*release) (mnemo_store *st);
	int			(*resume) (mnemo_store *st);
} mn_attachment;

#define MN_MAX_ATTACHMENTS 4

struct mn_events;				/* events/events.c */
struct mn_http;					/* stream/http.c */
struct mn_feed;					/* events/feed.c */
struct mn_compactor;			/* compact/hook.c */

struct mnemo_store
{
	PGconn	   *conn;
	char	   *conninfo;		/* as given, "" for the environment */
	char	   *server_version;	/* mnemo.version(), after a good connect */

	/* the last error */
	int			errcode;
	char	   *errmsg;			/* malloc'd; NULL reads as "" */
	char		sqlstate[6];

	/* statements prepared on this connection (reset by a reconnect) */
	const mn_stmt **prepared;
	size_t		n_prepared;
	size_t		cap_prepared;

	/* the rooms' state, in order of attachment */
	const mn_attachment *attached[MN_MAX_ATTACHMENTS];
	size_t		n_attached;

	struct mn_events *events;	/* subscriptions; NULL until the first */
	struct mn_feed *feed;		/* followed sessions; NULL until the first */
	struct mn_http *http;		/* the provider transport, NULL until the
								 * first turn; outlives reconnects, so
								 * mnemo_turn_cancel never reads the
								 * connection another thread may replace */
	struct mn_compactor *compactor; /* a background compaction, NULL until
									 * the first */
	char		compact_holder[128];	/* the claim holder of this handle's
										 * compactions ("" until the first):
										 * the same for all, so that one whose
										 * connection was lost, and which could
										 * not release its claim, does not lock
										 * out the next on the handle */
	const atomic_bool *stop;	/* NULL, or a flag another thread sets to
								 * stop this handle's work for it: a
								 * background compaction's store points it
								 * at its compactor's, which closing the
								 * owner's handle sets; the provider
								 * transport reads it as a cancel */
	bool		in_callback;	/* a turn's part callback is running: the
								 * handle is the turn's, and a call on it
								 * would nest a turn in the turn (or use its
								 * transfer), so mn_begin refuses it */
};

/* Register a room's state on the handle (store.c); once per attachment,
 * later calls with the same one do nothing. */
void		mn_attach(mnemo_store *st, const mn_attachment *a);

/* ---- errors (error.c) ---- */

/* Record an error on the handle and return code (printf-style message). */
int			mn_fail(mnemo_store *st, int code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Clear the last error: every public call starts with it. */
void		mn_clear_error(mnemo_store *st);

/* Map a failed result (or a broken connection when res is NULL) to the
 * handle's error and return the code. */
int			mn_fail_result(mnemo_store *st, const PGresult *res);

/* The mnemo_err of a SQLSTATE. */
int			mn_code_of_sqlstate(const char *sqlstate);

/* ---- statements (stmt.c) ---- */

/*
 * Run stmt with text parameters (NULL is SQL NULL), preparing it first if
 * this connection has not.  Returns the result (PGRES_TUPLES_OK or
 * PGRES_COMMAND_OK), which the caller PQclear()s, or NULL with the error set
 * on the handle.
 */
PGresult   *mn_exec(mnemo_store *st, const mn_stmt *stmt, const char *const *params);

/*
 * mn_exec() split: mn_send() sends the statement and returns without waiting
 * (MNEMO_OK or the error); mn_receive() then waits for its result, as
 * mn_exec() returns it.  No other statement may run in between.
 */
int			mn_send(mnemo_store *st, const mn_stmt *stmt, const char *const *params);
PGresult   *mn_receive(mnemo_store *st);

/*
 * A call: a statement with its parameters and, once run, its result.  The
 * parameters may point into the call itself (num, heap, json), so a call is
 * filled where it will run and never copied.  Modules that take part in a
 * batch export a builder (mn_<what>_call) and a reader of the result.
 */
#define MN_CALL_PARAMS 9
typedef struct mn_call
{
	const mn_stmt *stmt;
	const char *params[MN_CALL_PARAMS];
	char		num[32];		/* a numeric parameter's text */
	char	   *heap;			/* a malloc'd parameter, freed by mn_call_clear */
	struct json_object *json;	/* a JSON parameter's object, put likewise */
	bool		sync;			/* mn_exec_batch: a transaction ends after it */
	PGresult   *res;			/* the result, once run; NULL if it failed */
} mn_call;

/*
 * Run calls in one round trip (libpq pipeline mode).  The calls up to each
 * sync point (a call with sync set, and the last) run as one transaction,
 * unless the batch opened one with BEGIN: then it stays open after the
 * batch.  MNEMO_OK when every call succeeded.  Otherwise the first failure's
 * error is set on the handle, the failed call's transaction is rolled back
 * (an open one ended with ROLLBACK), the other calls of that transaction are
 * skipped, and the calls that succeeded keep their results: session-level
 * effects, such as an advisory lock, outlive the rollback.
 */
int			mn_exec_batch(mnemo_store *st, mn_call *calls, size_t n);
/* Run one call alone (mn_exec): MNEMO_OK with call->res set, or the error. */
int			mn_call_run(mnemo_store *st, mn_call *call);
/* Release what a call holds: its result and its parameters' storage. */
void		mn_call_clear(mn_call *call);
/* Run a constant command with no parameters (BEGIN, COMMIT, LISTEN mnemo);
 * MNEMO_OK or the error, set on the handle. */
int			mn_exec_command(mnemo_store *st, const char *sql);

/* Forget the prepared statements (after the connection was replaced). */
void		mn_stmt_reset(mnemo_store *st);

/* An error set aside while cleanup calls (which clear the handle's error)
 * run, to be put back after them. */
typedef struct mn_saved_error
{
	int			code;
	char	   *msg;
	char		sqlstate[6];
} mn_saved_error;

/* Take the handle's error (its code is code) into *e, leaving none set. */
void		mn_error_save(mnemo_store *st, int code, mn_saved_error *e);

/* Put the saved error back on the handle, replacing any later one, and
 * return its code. */
int			mn_error_restore(mnemo_store *st, mn_saved_error *e);

/* Roll back the open transaction after a failure and return the failure's
 * code, keeping its message and SQLSTATE rather than the rollback's. */
int			mn_rollback(mnemo_store *st);

/* Text of an integer / bool parameter in buf (at least 24 bytes). */
const char *mn_i64_param(char *buf, int64_t v);

/* ---- the clock and text tests (clock.c, text.c) ---- */

/* Milliseconds of the monotonic clock: for timeouts and waits. */
int64_t		mn_now_ms(void);

/* Milliseconds since the Unix epoch: for times that are stored. */
int64_t		mn_unix_ms(void);

/* A malloc'd NUL-terminated copy of s[0..n); NULL when out of memory. */
char	   *mn_strndup(const char *s, size_t n);

/* text[0..len) as a strict decimal integer into *v; false if it is not one
 * or out of range. */
bool		mn_parse_i64(const char *text, size_t len, int64_t *v);

/* Whether s[0..n) is one or more ASCII digits. */
bool		mn_all_digits(const char *s, size_t n);

/* Whether s[0..len) is valid UTF-8 (PostgreSQL refuses anything else). */
bool		mn_utf8_valid(const char *s, size_t len);

#endif							/* MNEMO_CORE_H */
