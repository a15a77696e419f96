/*
 * t_batch.c
 *		mn_exec_batch() (client/src/core/stmt.c), the pipeline a chat turn's
 *		statements go through: one round trip, each sync point ending a
 *		transaction, a failure rolling back its own transaction and no
 *		other, session-level effects kept, an open transaction ended, the
 *		connection usable after, and statements that vanished (DISCARD ALL)
 *		prepared again.  Against the real server, in a fresh database.
 */
#include <string.h>

#include "../../client/src/store/store.h"
#include "tap.h"
#include "helpers.h"

static const mn_stmt append_stmt = {
	"t_batch_append",
	"SELECT id, seq FROM mnemo.append_message($1::text, 'user', "
	"'[{\"type\": \"text\", \"text\": \"hi\"}]')", 1
};
static const mn_stmt count_stmt = {
	"t_batch_count", "SELECT count(*) FROM mnemo.messages WHERE session_id = $1::text", 1
};
static const mn_stmt lock_stmt = {
	"t_batch_lock", "SELECT pg_advisory_lock(4242, hashtext($1::text))", 1
};
static const mn_stmt locks_stmt = {
	"t_batch_locks",
	"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()", 0
};
static const mn_stmt begin_stmt = {"t_batch_begin", "BEGIN", 0};
static const mn_stmt commit_stmt = {"t_batch_commit", "COMMIT", 0};

static void
set(mn_call *c, const mn_stmt *stmt, const char *arg)
{
	memset(c, 0, sizeof(*c));
	c->stmt = stmt;
	c->params[0] = arg;
}

static void
clear(mn_call *calls, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mn_call_clear(&calls[i]);
}

/* A one-value statement's value, by itself. */
static long
value(mnemo_store *st, const mn_stmt *stmt, const char *arg)
{
	const char *params[1] = {arg};
	PGresult   *res = mn_exec(st, stmt, params);
	long		v;

	if (res == NULL)
		bail_out("%s: %s", stmt->name, mnemo_errmsg(st));
	v = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return v;
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);
	mn_call		c[4];
	int			rc;

	new_session(st, "b1");

	/* one transaction, read in it */
	set(&c[0], &append_stmt, "b1");
	set(&c[1], &append_stmt, "b1");
	set(&c[2], &count_stmt, "b1");
	rc = mn_exec_batch(st, c, 3);
	is_int(rc, MNEMO_OK, "three calls in one batch (%s)", mnemo_errmsg(st));
	ok(c[0].res && c[1].res && c[2].res, "each call has its result");
	is_str(c[2].res ? PQgetvalue(c[2].res, 0, 0) : NULL, "2", "a read in the batch sees its writes");
	ok(c[1].res && strcmp(PQgetvalue(c[1].res, 0, 1), "2") == 0, "the second append is seq 2");
	clear(c, 3);
	is_int((int) value(st, &count_stmt, "b1"), 2, "both appends are committed");

	/* a failure rolls its transaction back */
	set(&c[0], &append_stmt, "b1");
	set(&c[1], &append_stmt, "nope");
	set(&c[2], &count_stmt, "b1");
	rc = mn_exec_batch(st, c, 3);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "an append to a missing session fails the batch");
	ok(c[0].res != NULL && c[1].res == NULL && c[2].res == NULL,
	   "the call before the failure has its result, the failed and skipped ones none");
	clear(c, 3);
	is_int((int) value(st, &count_stmt, "b1"), 2, "the append before the failure was rolled back");
	is_int(PQtransactionStatus(st->conn), PQTRANS_IDLE, "no transaction is left open");

	/* a sync point ends a transaction: what came before stays */
	set(&c[0], &append_stmt, "b1");
	c[0].sync = true;
	set(&c[1], &append_stmt, "nope");
	set(&c[2], &count_stmt, "b1");
	rc = mn_exec_batch(st, c, 3);
	is_int(rc, MNEMO_ERR_SESSION_NOT_FOUND, "a failure after a sync point fails the batch");
	clear(c, 3);
	is_int((int) value(st, &count_stmt, "b1"), 3, "the transaction before the sync point is committed");

	/* ... and what comes after a failed transaction runs */
	set(&c[0], &append_stmt, "nope");
	c[0].sync = true;
	set(&c[1], &count_stmt, "b1");
	rc = mn_exec_batch(st, c, 2);
	is_int(rc, MNEMO_ERR_SESSION_NOT_FOUND, "the first transaction fails");
	is_str(c[1].res ? PQgetvalue(c[1].res, 0, 0) : NULL, "3", "the call after its sync point ran");
	clear(c, 2);

	/* session-level effects outlive the rollback */
	set(&c[0], &lock_stmt, "b1");
	set(&c[1], &append_stmt, "nope");
	rc = mn_exec_batch(st, c, 2);
	ok(rc != MNEMO_OK && c[0].res != NULL, "the lock was taken before the failure");
	clear(c, 2);
	is_int((int) value(st, &locks_stmt, NULL), 1, "the advisory lock is still held");
	if (mn_exec_command(st, "SELECT pg_advisory_unlock_all()") != MNEMO_OK)
		bail_out("unlock: %s", mnemo_errmsg(st));

	/* an explicit transaction stays open, or is ended when it failed */
	set(&c[0], &begin_stmt, NULL);
	set(&c[1], &append_stmt, "b1");
	rc = mn_exec_batch(st, c, 2);
	is_int(rc, MNEMO_OK, "BEGIN and an append");
	is_int(PQtransactionStatus(st->conn), PQTRANS_INTRANS, "the transaction stays open");
	clear(c, 2);
	set(&c[0], &append_stmt, "b1");
	set(&c[1], &commit_stmt, NULL);
	rc = mn_exec_batch(st, c, 2);
	is_int(rc, MNEMO_OK, "another append and COMMIT in a second batch");
	clear(c, 2);
	is_int((int) value(st, &count_stmt, "b1"), 5, "both are committed");
	set(&c[0], &begin_stmt, NULL);
	set(&c[1], &append_stmt, "b1");
	set(&c[2], &append_stmt, "nope");
	rc = mn_exec_batch(st, c, 3);
	is_int(rc, MNEMO_ERR_SESSION_NOT_FOUND, "a failure after BEGIN");
	clear(c, 3);
	is_int(PQtransactionStatus(st->conn), PQTRANS_IDLE, "the failed transaction was ended");
	is_int((int) value(st, &count_stmt, "b1"), 5, "and its append rolled back");

	/* statements that vanished between transactions are prepared again */
	if (mn_exec_command(st, "DISCARD ALL") != MNEMO_OK)
		bail_out("DISCARD ALL: %s", mnemo_errmsg(st));
	set(&c[0], &append_stmt, "b1");
	set(&c[1], &count_stmt, "b1");
	rc = mn_exec_batch(st, c, 2);
	is_int(rc, MNEMO_OK, "after DISCARD ALL the batch runs (%s)", mnemo_errmsg(st));
	is_int(mnemo_errcode(st), MNEMO_OK, "and the handle holds no error from the first try");
	is_str(c[1].res ? PQgetvalue(c[1].res, 0, 0) : NULL, "6", "once: one more message");
	clear(c, 2);

	/* the connection lost: the batch says so, and a reconnect goes on */
	{
		mnemo_store *other = open_store(NULL);
		char		sql[96];

		snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)", PQbackendPID(st->conn));
		if (mn_exec_command(other, sql) != MNEMO_OK)
			bail_out("terminate: %s", mnemo_errmsg(other));
		mnemo_store_close(other);
		set(&c[0], &append_stmt, "b1");
		set(&c[1], &count_stmt, "b1");
		rc = mn_exec_batch(st, c, 2);
		is_int(rc, MNEMO_ERR_CONNECTION, "a batch on a terminated backend: CONNECTION (%s)",
			   mnemo_errmsg(st));
		clear(c, 2);
		is_int(mnemo_store_reconnect(st), MNEMO_OK, "the handle reconnects");
		set(&c[0], &append_stmt, "b1");
		set(&c[1], &count_stmt, "b1");
		rc = mn_exec_batch(st, c, 2);
		is_int(rc, MNEMO_OK, "and batches again (%s)", mnemo_errmsg(st));
		is_str(c[1].res ? PQgetvalue(c[1].res, 0, 0) : NULL, "7", "the lost batch wrote nothing");
		clear(c, 2);
	}

	/* and the handle goes on */
	{
		mnemo_session *s = NULL;

		is_int(mnemo_session_get(st, "b1", &s), MNEMO_OK, "a public call after all of it");
		mnemo_session_free(s);
	}
	mnemo_store_close(st);
	return tap_done();
}
