/*
 * mnemo/store.h
 *		Errors, the store handle and its connection, utilities.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_STORE_H
#define MNEMO_API_STORE_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Errors
 *
 * -1 ... -13 mirror the extension's SQLSTATEs MN001 ... MN013 one to one.
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
	MNEMO_ERR_SESSION_AMBIGUOUS = -13,	/* MN013: set mnemo.tenant */

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
	MNEMO_ERR_BINARY_FILE = -45,		/* mnemo_file_handle: not UTF-8 text */

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
	MNEMO_ERR_CANCELLED = -57,			/* mnemo_turn_cancel() or the part
										 * callback stopped the turn */

	/* compaction */
	MNEMO_ERR_OVER_BUDGET = -60			/* the context could not be brought
										 * under the budget: below its floor
										 * (doc/compaction.md) */
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

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_STORE_H */
