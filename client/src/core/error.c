/*
 * error.c
 *		The last error of a handle: its code, message and SQLSTATE.
 *
 * Every public call clears the error first and sets it at most once, on the
 * way out, so mnemo_errcode() after a call describes that call.  Server
 * errors are mapped from their SQLSTATE (the extension's MN class one to one
 * onto -1 ... -12) and keep the server's primary message; errors the library
 * raises itself carry no SQLSTATE.  A handle that could not even be
 * allocated (mnemo_store_open returned NULL) reads as out of memory.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

MNEMO_API const char *
mnemo_strerror(int code)
{
	switch ((mnemo_err) code)
	{
		case MNEMO_OK:
			return "no error";
		case MNEMO_ERR_SESSION_NOT_FOUND:
			return "session not found";
		case MNEMO_ERR_MESSAGE_NOT_FOUND:
			return "message not found";
		case MNEMO_ERR_PART_NOT_FOUND:
			return "part not found";
		case MNEMO_ERR_DUPLICATE_ID:
			return "duplicate id";
		case MNEMO_ERR_IMMUTABLE_FIELD:
			return "immutable field";
		case MNEMO_ERR_INVALID_SWAP:
			return "invalid context swap";
		case MNEMO_ERR_RUN_ALREADY_CLAIMED:
			return "run already claimed";
		case MNEMO_ERR_RUN_ALREADY_COMPLETED:
			return "run already completed";
		case MNEMO_ERR_RUN_NOT_CLAIMED:
			return "run not claimed";
		case MNEMO_ERR_RUN_NOT_COMPLETED:
			return "run not completed";
		case MNEMO_ERR_CHECKPOINT_NOT_FOUND:
			return "checkpoint not found";
		case MNEMO_ERR_SESSION_INACTIVE:
			return "session inactive";
		case MNEMO_ERR_SESSION_AMBIGUOUS:
			return "session id names sessions of several tenants";
		case MNEMO_ERR_INVALID_ARGUMENT:
			return "invalid argument";
		case MNEMO_ERR_PERMISSION:
			return "permission denied";
		case MNEMO_ERR_RETRY:
			return "transaction conflict, retry";
		case MNEMO_ERR_SERVER:
			return "server error";
		case MNEMO_ERR_CONNECTION:
			return "connection failed or lost";
		case MNEMO_ERR_UNINITIALIZED:
			return "mnemo extension not installed in this database";
		case MNEMO_ERR_VERSION_MISMATCH:
			return "unsupported mnemo extension version";
		case MNEMO_ERR_NOMEM:
			return "out of memory";
		case MNEMO_ERR_IO:
			return "input/output error";
		case MNEMO_ERR_FORMAT:
			return "malformed input";
		case MNEMO_ERR_PROTOCOL:
			return "unexpected answer from the server";
		case MNEMO_ERR_NOT_FOUND:
			return "not found";
		case MNEMO_ERR_BINARY_FILE:
			return "binary file (not UTF-8 text)";
		case MNEMO_ERR_NO_PROVIDER:
			return "no LLM provider configured";
		case MNEMO_ERR_HTTP:
			return "the provider refused the request";
		case MNEMO_ERR_AUTH:
			return "the provider refused the key";
		case MNEMO_ERR_RATE_LIMITED:
			return "rate limited by the provider";
		case MNEMO_ERR_NETWORK:
			return "the provider could not be reached";
		case MNEMO_ERR_TIMEOUT:
			return "the provider timed out";
		case MNEMO_ERR_STREAM:
			return "the reply stream failed";
		case MNEMO_ERR_CANCELLED:
			return "cancelled";
		case MNEMO_ERR_OVER_BUDGET:
			return "the context cannot be compacted under the budget";
	}
	return "unknown error";
}

MNEMO_API int
mnemo_errcode(const mnemo_store *st)
{
	return st ? st->errcode : MNEMO_ERR_NOMEM;
}

MNEMO_API const char *
mnemo_errmsg(const mnemo_store *st)
{
	if (st == NULL)
		return "out of memory";
	return st->errmsg ? st->errmsg : "";
}

MNEMO_API const char *
mnemo_sqlstate(const mnemo_store *st)
{
	return st ? st->sqlstate : "";
}

void
mn_clear_error(mnemo_store *st)
{
	if (st == NULL)
		return;
	st->errcode = MNEMO_OK;
	free(st->errmsg);
	st->errmsg = NULL;
	st->sqlstate[0] = '\0';
}

/* Take msg (malloc'd or NULL) as the handle's message. */
static void
set_error(mnemo_store *st, int code, char *msg, const char *sqlstate)
{
	free(st->errmsg);
	st->errmsg = msg;
	st->errcode = code;
	if (sqlstate != NULL && strlen(sqlstate) == 5)
		memcpy(st->sqlstate, sqlstate, 6);
	else
		st->sqlstate[0] = '\0';
}

/* A copy of s without trailing whitespace (libpq ends messages with "\n"). */
static char *
trimmed_copy(const char *s)
{
	size_t		len = strlen(s);
	char	   *copy;

	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	copy = malloc(len + 1);
	if (copy != NULL)
	{
		memcpy(copy, s, len);
		copy[len] = '\0';
	}
	return copy;
}

int
mn_fail(mnemo_store *st, int code, const char *fmt,...)
{
	va_list		ap;
	int			len;
	char	   *msg = NULL;

	if (st == NULL)
		return code;
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len >= 0 && (msg = malloc((size_t) len + 1)) != NULL)
	{
		va_start(ap, fmt);
		vsnprintf(msg, (size_t) len + 1, fmt, ap);
		va_end(ap);
	}
	/* without memory for the text, the code alone still says what happened */
	set_error(st, code, msg, NULL);
	return code;
}

int
mn_code_of_sqlstate(const char *sqlstate)
{
	if (sqlstate == NULL || strlen(sqlstate) != 5)
		return MNEMO_ERR_SERVER;
	if (strncmp(sqlstate, "MN0", 3) == 0 &&
		sqlstate[3] >= '0' && sqlstate[3] <= '9' && sqlstate[4] >= '0' && sqlstate[4] <= '9')
	{
		int			n = (sqlstate[3] - '0') * 10 + (sqlstate[4] - '0');

		if (n >= 1 && n <= 13)
			return -n;
		return MNEMO_ERR_SERVER;
	}
	/* data exceptions: NULL where a value is required, bad values, bad JSON */
	if (strncmp(sqlstate, "22", 2) == 0)
		return MNEMO_ERR_INVALID_ARGUMENT;
	if (strcmp(sqlstate, "42501") == 0)
		return MNEMO_ERR_PERMISSION;
	/* undefined_object: a map that does not exist */
	if (strcmp(sqlstate, "42704") == 0)
		return MNEMO_ERR_NOT_FOUND;
	if (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0)
		return MNEMO_ERR_RETRY;
	/* connection exceptions, and the server going away under us */
	if (strncmp(sqlstate, "08", 2) == 0 || strcmp(sqlstate, "57P01") == 0 ||
		strcmp(sqlstate, "57P02") == 0 || strcmp(sqlstate, "57P03") == 0)
		return MNEMO_ERR_CONNECTION;
	return MNEMO_ERR_SERVER;
}

int
mn_fail_result(mnemo_store *st, const PGresult *res)
{
	const char *sqlstate;
	const char *primary;
	bool		broken;
	bool		probed = false;
	int			code;
	char	   *msg;

	if (st == NULL)
		return MNEMO_ERR_NOMEM;
	broken = st->conn == NULL || PQstatus(st->conn) == CONNECTION_BAD;
	if (!broken && (res == NULL || PQresultErrorField(res, PG_DIAG_SQLSTATE) == NULL))
	{
		/*
		 * An error of libpq's own while it still says CONNECTION_OK: after
		 * an immediate shutdown (or a crash) the socket is reset, libpq
		 * fails the call with "server closed the connection unexpectedly"
		 * but notices that the connection is gone only at its next read.
		 * Read now, so that this call, not the next, says CONNECTION.
		 * Reading is harmless on a live connection: input is buffered.
		 */
		const char *libpq = PQerrorMessage(st->conn);
		char	   *before = mn_strndup(libpq, strlen(libpq));

		(void) PQconsumeInput(st->conn);
		broken = probed = PQstatus(st->conn) == CONNECTION_BAD;
		if (broken && res == NULL && before != NULL && *before != '\0')
		{
			/* the first message, not the one the read added to it */
			set_error(st, MNEMO_ERR_CONNECTION, trimmed_copy(before), NULL);
			free(before);
			return MNEMO_ERR_CONNECTION;
		}
		free(before);
	}

	if (res == NULL)
	{
		/*
		 * libpq made no result: the connection is gone, memory ran out, or
		 * libpq refused to send (the connection is in a state we never put
		 * it in, such as COPY).
		 */
		const char *libpq = st->conn ? PQerrorMessage(st->conn) : "";

		if (broken)
			code = MNEMO_ERR_CONNECTION;
		else if (*libpq == '\0')
			code = MNEMO_ERR_NOMEM;
		else
			code = MNEMO_ERR_PROTOCOL;
		msg = trimmed_copy(*libpq ? libpq : (broken ? "no connection to the server" : "out of memory"));
		set_error(st, code, msg, NULL);
		return code;
	}

	switch (PQresultStatus(res))
	{
		case PGRES_FATAL_ERROR:
		case PGRES_NONFATAL_ERROR:
			break;
		default:
			return mn_fail(st, MNEMO_ERR_PROTOCOL, "unexpected result status %s",
						   PQresStatus(PQresultStatus(res)));
	}

	sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	/* libpq's own errors (connection lost mid-call) have no SQLSTATE */
	code = mn_code_of_sqlstate(sqlstate);
	if (broken)
		code = MNEMO_ERR_CONNECTION;
	if (primary != NULL)
		msg = trimmed_copy(primary);
	else if (probed && *PQresultErrorMessage(res) != '\0')
	{
		/* libpq's own message, once (the read above repeated it) */
		msg = trimmed_copy(PQresultErrorMessage(res));
	}
	else if (broken && st->conn != NULL && *PQerrorMessage(st->conn) != '\0')
	{
		/*
		 * libpq's own "server closed the connection unexpectedly": the
		 * connection's message also has the server's reason, when it sent
		 * one before it went (a FATAL that arrived while the connection was
		 * idle, such as pg_terminate_backend's), which the result lacks.
		 */
		msg = trimmed_copy(PQerrorMessage(st->conn));
	}
	else
		msg = trimmed_copy(PQresultErrorMessage(res));
	set_error(st, code, msg, sqlstate);
	return code;
}

void
mn_error_save(mnemo_store *st, int code, mn_saved_error *e)
{
	e->code = code;
	e->msg = st->errmsg;
	memcpy(e->sqlstate, st->sqlstate, sizeof(e->sqlstate));
	st->errmsg = NULL;
	mn_clear_error(st);
}

int
mn_error_restore(mnemo_store *st, mn_saved_error *e)
{
	mn_clear_error(st);
	st->errcode = e->code;
	st->errmsg = e->msg;
	memcpy(st->sqlstate, e->sqlstate, sizeof(st->sqlstate));
	e->msg = NULL;
	return e->code;
}
