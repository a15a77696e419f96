/*
 * stmt.c
 *		The statement runner: every statement the library sends goes
 *		through mn_exec() or, for constant commands, mn_exec_command().
 *
 * A statement is prepared by name the first time a connection runs it and
 * kept for the life of that connection; the handle remembers which mn_stmt
 * values it has prepared (by address: they are static constants of the
 * modules).  A reconnect starts a new server session with nothing prepared,
 * so the reconnect forgets the list (mn_stmt_reset).  Parameters are text,
 * NULL meaning SQL NULL, and results come back in text format.
 *
 * A prepared statement can also vanish without a reconnect (DISCARD ALL by a
 * pooler between two transactions): when the server says so outside a
 * transaction block, the statement is prepared again and run once more.
 *
 * mn_exec_batch() sends several calls in one round trip, in libpq's pipeline
 * mode: a chat turn's writes and reads cost one network wait, and the writes
 * up to a sync point one commit, instead of one of each per statement.
 */
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "core/core.h"

static bool
is_prepared(const mnemo_store *st, const mn_stmt *stmt)
{
	for (size_t i = 0; i < st->n_prepared; i++)
		if (st->prepared[i] == stmt)
			return true;
	return false;
}

static void
forget(mnemo_store *st, const mn_stmt *stmt)
{
	for (size_t i = 0; i < st->n_prepared; i++)
		if (st->prepared[i] == stmt)
		{
			st->prepared[i] = st->prepared[--st->n_prepared];
			return;
		}
}

/* Room for one more entry, taken before PQprepare so that a statement the
 * server has is never missing from the list (preparing it twice fails). */
static int
reserve(mnemo_store *st)
{
	const mn_stmt **grown;
	size_t		cap;

	if (st->n_prepared < st->cap_prepared)
		return MNEMO_OK;
	cap = st->cap_prepared ? st->cap_prepared * 2 : 32;
	grown = realloc(st->prepared, cap * sizeof(*grown));
	if (grown == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	st->prepared = grown;
	st->cap_prepared = cap;
	return MNEMO_OK;
}

static bool
connected(mnemo_store *st)
{
	if (st->conn == NULL)
	{
		mn_fail(st, MNEMO_ERR_CONNECTION,
				"not connected to the server (mnemo_store_reconnect connects again)");
		return false;
	}
	if (PQstatus(st->conn) != CONNECTION_OK)
	{
		mn_fail_result(st, NULL);
		return false;
	}
	return true;
}

static int
prepare(mnemo_store *st, const mn_stmt *stmt)
{
	PGresult   *res;
	int			rc;

	if ((rc = reserve(st)) != MNEMO_OK)
		return rc;
	res = PQprepare(st->conn, stmt->name, stmt->sql, stmt->nparams, NULL);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		rc = mn_fail_result(st, res);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	st->prepared[st->n_prepared++] = stmt;
	return MNEMO_OK;
}

static bool
ok_status(const PGresult *res)
{
	ExecStatusType s = PQresultStatus(res);

	return s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK;
}

PGresult *
mn_exec(mnemo_store *st, const mn_stmt *stmt, const char *const *params)
{
	PGresult   *res;

	if (!connected(st))
		return NULL;
	for (int attempt = 0;; attempt++)
	{
		const char *sqlstate;

		if (!is_prepared(st, stmt) && prepare(st, stmt) != MNEMO_OK)
			return NULL;
		res = PQexecPrepared(st->conn, stmt->name, stmt->nparams, params, NULL, NULL, 0);
		if (res != NULL && ok_status(res))
			return res;
		sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		if (attempt == 0 && sqlstate != NULL && strcmp(sqlstate, "26000") == 0 &&
			PQtransactionStatus(st->conn) == PQTRANS_IDLE)
		{
			PQclear(res);
			forget(st, stmt);
			continue;
		}
		mn_fail_result(st, res);
		PQclear(res);
		return NULL;
	}
}

/*
 * mn_exec() in two halves, so that the caller works while the server runs
 * the statement: mn_send() sends it (preparing it first if need be) and
 * returns at once; mn_receive() waits for its result.  Nothing else may be
 * sent in between.  Meant inside a transaction, where a vanished statement
 * cannot be retried anyway.
 */
int
mn_send(mnemo_store *st, const mn_stmt *stmt, const char *const *params)
{
	if (!connected(st))
		return st->errcode;
	if (!is_prepared(st, stmt) && prepare(st, stmt) != MNEMO_OK)
		return st->errcode;
	if (!PQsendQueryPrepared(st->conn, stmt->name, stmt->nparams, params, NULL, NULL, 0))
		return mn_fail_result(st, NULL);
	return MNEMO_OK;
}

PGresult *
mn_receive(mnemo_store *st)
{
	PGresult   *res = PQgetResult(st->conn);
	PGresult   *extra;

	/* the NULL that ends the statement's results, so the connection is free */
	while ((extra = PQgetResult(st->conn)) != NULL)
		PQclear(extra);
	if (res != NULL && ok_status(res))
		return res;
	mn_fail_result(st, res);
	PQclear(res);
	return NULL;
}

/* Read the next result of a pipeline: the call's own, then the NULL that
 * ends it (a sync point's result has no NULL after it). */
static PGresult *
next_result(PGconn *conn, bool is_sync)
{
	PGresult   *res = PQgetResult(conn);
	PGresult   *extra;

	if (res == NULL || is_sync)
		return res;
	while ((extra = PQgetResult(conn)) != NULL)
		PQclear(extra);
	return res;
}

/* Leave pipeline mode after a failure midway: a sync, then every result
 * up to it.  A broken connection is left as it is (a reconnect replaces it). */
static void
leave_pipeline(PGconn *conn)
{
	int			guard = 0;

	if (PQpipelineStatus(conn) == PQ_PIPELINE_OFF || PQstatus(conn) != CONNECTION_OK)
		return;
	PQpipelineSync(conn);
	while (PQexitPipelineMode(conn) != 1 && PQstatus(conn) == CONNECTION_OK && guard++ < 100000)
		PQclear(PQgetResult(conn));
}

/*
 * One pass over the batch: send everything, then read every result, so that
 * the connection leaves pipeline mode in step whatever happened.  The first
 * failure is recorded on the handle and its index put in *failed.
 */
static int
run_pipeline(mnemo_store *st, mn_call *calls, size_t n, size_t *failed)
{
	PGconn	   *conn = st->conn;
	int			rc = MNEMO_OK;
	size_t		i;

	*failed = n;
	if (PQenterPipelineMode(conn) != 1)
		return mn_fail_result(st, NULL);
	for (i = 0; i < n; i++)
	{
		const mn_stmt *stmt = calls[i].stmt;

		if (PQsendQueryPrepared(conn, stmt->name, stmt->nparams, calls[i].params,
								NULL, NULL, 0) != 1 ||
			((calls[i].sync || i == n - 1) && PQpipelineSync(conn) != 1))
		{
			rc = mn_fail_result(st, NULL);
			*failed = i;
			leave_pipeline(conn);
			return rc;
		}
	}
	for (i = 0; i < n; i++)
	{
		PGresult   *res = next_result(conn, false);

		if (res != NULL && ok_status(res))
			calls[i].res = res;
		else
		{
			/* the server skips the rest of a failed transaction's calls
			 * (PGRES_PIPELINE_ABORTED): the first failure is the story */
			if (rc == MNEMO_OK)
			{
				rc = mn_fail_result(st, res);
				*failed = i;
			}
			PQclear(res);
			if (res == NULL && PQstatus(conn) == CONNECTION_BAD)
				return rc;		/* nothing more will come */
		}
		if (calls[i].sync || i == n - 1)
		{
			res = next_result(conn, true);
			if (res == NULL || PQresultStatus(res) != PGRES_PIPELINE_SYNC)
			{
				if (rc == MNEMO_OK)
				{
					rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "a pipeline lost step with its results");
					*failed = i;
				}
				PQclear(res);
				leave_pipeline(conn);
				return rc;
			}
			PQclear(res);
		}
	}
	if (PQexitPipelineMode(conn) != 1 && rc == MNEMO_OK)
		rc = mn_fail_result(st, NULL);
	return rc;
}

int
mn_exec_batch(mnemo_store *st, mn_call *calls, size_t n)
{
	size_t		i,
				failed;

	for (int attempt = 0;; attempt++)
	{
		int			rc;

		if (!connected(st))
			return st->errcode;
		for (i = 0; i < n; i++)
			if (!is_prepared(st, calls[i].stmt) && prepare(st, calls[i].stmt) != MNEMO_OK)
				return st->errcode;
		rc = run_pipeline(st, calls, n, &failed);
		if (rc == MNEMO_OK)
			return MNEMO_OK;
		/* a transaction a failed call left open and aborted is ended, so
		 * that the connection is usable; what it wrote is gone */
		if (PQstatus(st->conn) == CONNECTION_OK &&
			PQpipelineStatus(st->conn) == PQ_PIPELINE_OFF &&
			PQtransactionStatus(st->conn) == PQTRANS_INERROR)
			PQclear(PQexec(st->conn, "ROLLBACK"));
		if (attempt == 0 && failed == 0 && strcmp(st->sqlstate, "26000") == 0 &&
			PQtransactionStatus(st->conn) == PQTRANS_IDLE)
		{
			/* the statements vanished (DISCARD ALL), nothing ran: again */
			for (i = 0; i < n; i++)
				forget(st, calls[i].stmt);
			mn_clear_error(st);
			continue;
		}
		return rc;
	}
}

int
mn_call_run(mnemo_store *st, mn_call *call)
{
	call->res = mn_exec(st, call->stmt, call->params);
	return call->res != NULL ? MNEMO_OK : st->errcode;
}

void
mn_call_clear(mn_call *call)
{
	PQclear(call->res);
	call->res = NULL;
	json_object_put(call->json);
	call->json = NULL;
	free(call->heap);
	call->heap = NULL;
}

int
mn_exec_command(mnemo_store *st, const char *sql)
{
	PGresult   *res;
	int			rc = MNEMO_OK;

	if (!connected(st))
		return st->errcode;
	res = PQexec(st->conn, sql);
	if (res == NULL || !ok_status(res))
		rc = mn_fail_result(st, res);
	PQclear(res);
	return rc;
}

void
mn_stmt_reset(mnemo_store *st)
{
	st->n_prepared = 0;
}

int
mn_rollback(mnemo_store *st)
{
	mn_saved_error e;

	mn_error_save(st, st->errcode, &e);
	(void) mn_exec_command(st, "ROLLBACK");
	return mn_error_restore(st, &e);
}
const char *
mn_i64_param(char *buf, int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
	return buf;
}
