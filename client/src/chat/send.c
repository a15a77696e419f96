/*
 * send.c
 *		mnemo_session_send(): one chat turn, the seed's send() walkthrough,
 *		and mnemo_session_load(), which finds the turns that died.  The
 *		steps' work is in the other files of chat/ (chat.h); this file is
 *		their order, the transactions and the turn lock.
 *
 * The steps, as mnemo.h lists them: the user message is committed; the
 * assembled context's size (context_report, so it survives restarts) is
 * checked against the hard threshold and a blocking compaction hook runs
 * before the context is built; build_context gives the context for the
 * seed's budget; the provider's request is made of it (messages with tool
 * calls go in their structured form, read with get_messages_with_parts_by_ids);
 * the assistant row is appended before the provider is called; deltas
 * reach on_part as they stream and the parts are appended as they
 * complete; usage, cost and finish reason are written; the soft threshold
 * and the doom loop are checked.
 *
 * Round trips: a turn's statements are batched (mn_exec_batch, libpq's
 * pipeline mode), because on a local server the waits and the commits, not
 * the statements, are the cost: the session; then the lock, the user
 * message, the context's size and the context in one transaction; the
 * assistant row and COMMIT; the stream; the last part and the usage in one
 * transaction, with the context's size and the unlock behind it.  Four
 * round trips and two WAL flushes, where a statement at a time took eleven
 * and four.
 *
 * Locking: the whole turn holds a session-level advisory lock on
 * (MN_TURN_LOCK_SPACE, hashtext(session id)) on the store's connection.
 * Turns of one session from different handles therefore run one after the
 * other, and mnemo_session_load() can tell a live turn (the lock is held)
 * from a dead one (its connection, and so its lock, is gone): only when it
 * gets the lock does it mark assistant rows without finish reason
 * "interrupted".  A hash collision between two sessions only makes them
 * wait for each other, and makes load leave a dead row for a later load.
 *
 * Errors after the first commit do not undo it (the log is append-only):
 * the user turn stays, and the assistant row gets finish_reason "error" or
 * "cancelled" with what streamed, if anything did.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "chat/chat.h"
#include "events/events.h"
#include "stream/http.h"

/* the most rounds of one turn whose model calls only the recall tools */
#define MN_RECALL_ROUNDS 8

/* 'mnem': the first key of mnemo's advisory locks, kept apart from others */
#define MN_TURN_LOCK_SPACE "1835951469"

static const mn_stmt lock_stmt = {
	"mnemo_turn_lock",
	"SELECT pg_advisory_lock($1::int4, hashtext($2::text))", 2
};
static const mn_stmt unlock_stmt = {
	"mnemo_turn_unlock",
	"SELECT pg_advisory_unlock($1::int4, hashtext($2::text))", 2
};
static const mn_stmt try_lock_stmt = {
	"mnemo_turn_try_lock",
	"SELECT pg_try_advisory_lock($1::int4, hashtext($2::text)) AS locked", 2
};

static const mn_stmt begin_stmt = {"mnemo_begin", "BEGIN", 0};
static const mn_stmt commit_stmt = {"mnemo_commit", "COMMIT", 0};

static void
lock_call(mn_call *call, const mn_stmt *stmt, const char *sid)
{
	call->stmt = stmt;
	call->params[0] = MN_TURN_LOCK_SPACE;
	call->params[1] = sid;
}

static int
lock_session(mnemo_store *st, const mn_stmt *stmt, const char *sid, bool *got)
{
	mn_call		call = {0};
	int			rc;

	lock_call(&call, stmt, sid);
	if ((rc = mn_call_run(st, &call)) == MNEMO_OK && got != NULL)
		*got = PQntuples(call.res) == 1 && strcmp(PQgetvalue(call.res, 0, 0), "t") == 0;
	mn_call_clear(&call);
	return rc;
}

static void
clear_calls(mn_call *calls, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mn_call_clear(&calls[i]);
}

/*
 * Steps 1 to 3 in two round trips and one commit: the turn lock; then, in
 * one transaction, the user message, the context's size and the context;
 * then the assistant row and the commit, so that the user turn and the row
 * are durable before the provider is called.  Over the hard threshold the
 * user turn is committed alone, the blocking compaction hook runs, and the
 * context is read again before the row is written.
 */
static int
begin_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *o, const turn_cfg *c,
		   const mnemo_new_message *user, turn_state *ts, turn_context *tc)
{
	mn_call		a[3 + TURN_CONTEXT_CALLS] = {{0}};
	mn_call		b[2] = {{0}};
	mnemo_new_message row = {0};
	mnemo_message_ref user_ref = {0},
				row_ref;
	size_t		na = 0,
				i_user = 0;
	bool		in_txn = false;
	int64_t		size;
	int			rc;

	lock_call(&a[na++], &lock_stmt, sid);
	a[na++].stmt = &begin_stmt;
	if (user != NULL && (rc = mn_message_append_call(st, sid, user, &a[i_user = na++])) != MNEMO_OK)
		goto done;
	if ((rc = mn_turn_context_calls(st, sid, c->available, TURN_REPORT | TURN_CONTEXT,
									a, &na, tc)) != MNEMO_OK)
		goto done;
	rc = mn_exec_batch(st, a, na);
	ts->locked = a[0].res != NULL;
	if (rc != MNEMO_OK)
		goto done;
	in_txn = true;
	if ((user != NULL && (rc = mn_message_ref_of(st, &a[i_user], &user_ref)) != MNEMO_OK) ||
		(rc = mn_turn_context_read(st, tc)) != MNEMO_OK)
		goto done;
	if (user != NULL)
		memcpy(ts->turn->user_message_id, user_ref.id, sizeof(user_ref.id));
	size = mn_turn_context_size(tc);

	row.role = "assistant";
	row.model_id = c->model;
	row.provider_id = c->provider_name;
	if (mn_turn_over_hard(c, size))
	{
		int			hook;

		b[0].stmt = &commit_stmt;
		rc = mn_call_run(st, &b[0]);
		in_txn = false;
		if (rc != MNEMO_OK)
			goto done;
		if (user != NULL)
			mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, user_ref.id, user_ref.seq, NULL, false);
		user = NULL;
		hook = o->compact != NULL ? o->compact(st, sid, true, o->compact_arg)
			: mn_compact_turn(st, sid, o, c, true);
		if (hook != 0 && (st->conn == NULL || PQstatus(st->conn) != CONNECTION_OK))
		{
			/* the handle's connection went during the compaction: the
			 * turn's error is that, as any call's that finds it gone */
			rc = st->errcode == MNEMO_ERR_CONNECTION ? st->errcode
				: mn_fail(st, MNEMO_ERR_CONNECTION,
						  "the connection to the server was lost during the compaction");
			goto done;
		}
		if (hook == MNEMO_ERR_OVER_BUDGET)
		{
			/* the engine's own words: the floor and how far it got */
			rc = hook;
			goto done;
		}
		if (hook != 0)
		{
			rc = mn_fail(st, MNEMO_ERR_CANCELLED,
						 "the compaction failed (%d) with the context over its budget (%lld of %d tokens)",
						 hook, (long long) size, c->available);
			goto done;
		}
		clear_calls(a, na);
		clear_calls(b, 2);
		na = 0;
		if ((rc = mn_turn_context_calls(st, sid, c->available, TURN_CONTEXT, a, &na,
										tc)) != MNEMO_OK ||
			(rc = mn_exec_batch(st, a, na)) != MNEMO_OK ||
			(rc = mn_turn_context_read(st, tc)) != MNEMO_OK)
			goto done;
		/* summaries are always kept: more of them than the budget is a
		 * context that must not be sent */
		if (tc->report.included_tokens > c->available)
		{
			rc = mn_fail(st, MNEMO_ERR_CANCELLED,
						 "the context is still over its budget after compaction (%lld of %d tokens)",
						 (long long) tc->report.included_tokens, c->available);
			goto done;
		}
		if ((rc = mn_message_append_call(st, sid, &row, &b[0])) != MNEMO_OK ||
			(rc = mn_call_run(st, &b[0])) != MNEMO_OK)
			goto done;
	}
	else
	{
		if ((rc = mn_message_append_call(st, sid, &row, &b[0])) != MNEMO_OK)
			goto done;
		b[1].stmt = &commit_stmt;
		rc = mn_exec_batch(st, b, 2);
		in_txn = false;			/* committed, or rolled back by the batch */
		if (rc != MNEMO_OK)
			goto done;
	}
	if ((rc = mn_message_ref_of(st, &b[0], &row_ref)) != MNEMO_OK)
		goto done;
	if (user != NULL)
		mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, user_ref.id, user_ref.seq, NULL, false);
	memcpy(ts->turn->message_id, row_ref.id, sizeof(row_ref.id));
	ts->row_seq = row_ref.seq;
	mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, row_ref.id, row_ref.seq, NULL, false);

done:
	if (in_txn)
	{
		/* a result could not be read: nothing of the turn is kept */
		rc = mn_rollback(st);
	}
	clear_calls(a, na);
	clear_calls(b, 2);
	return rc;
}

/*
 * Step 6's writes in one round trip: the last part, then usage, cost and
 * finish reason, committed together; then, for a completed turn, its
 * checkpoint (mn_turn_checkpoint_call); then, in a last transaction, the
 * context's size for the soft threshold and the unlock.  What streamed is
 * kept whatever ended the stream (rc, the stream's outcome): the finish
 * reason is then "error" or "cancelled".  *size is -1 when unread.
 */
static int
finish_turn(mnemo_store *st, const mnemo_turn_options *o, const turn_cfg *c, turn_state *ts,
			mn_stream *stream, int rc, int64_t *size)
{
	mn_call		d[4 + TURN_CONTEXT_CALLS] = {{0}};
	mn_saved_error se = {0};
	mnemo_tokens tok = {0};
	turn_context after = {0};
	const char *finish;
	const char *raw = NULL;
	size_t		nd = 0;
	int			rc2,
				rc3;

	*size = -1;
	if (rc != MNEMO_OK)
		mn_error_save(st, rc, &se);
	rc2 = mn_turn_flush_part(ts, &d[nd]);
	if (d[nd].stmt != NULL)
		nd++;
	if (stream != NULL)
		mn_stream_usage(stream, &tok);
	ts->turn->tokens = tok;
	ts->turn->cost = mn_turn_cost(o, c->model, &tok);
	if (rc == MNEMO_OK)
		finish = mn_finish_name(mn_stream_finish(stream, &raw));
	else
		finish = rc == MNEMO_ERR_CANCELLED ? "cancelled" : "error";
	if (finish == NULL)
		finish = "stop";
	if ((ts->turn->finish_reason = strdup(finish)) == NULL && rc2 == MNEMO_OK)
		rc2 = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (rc2 == MNEMO_OK)
		rc2 = mn_message_update_tokens_call(st, ts->session_id, ts->turn->message_id, &tok,
											ts->turn->cost, finish,
											&d[nd++]);
	if (rc2 != MNEMO_OK)
	{
		/* the row keeps no finish reason: the next load marks it */
		clear_calls(d, nd);
		nd = 0;
	}
	else
		d[nd - 1].sync = true;
	/* a completed turn: its checkpoint, on its own (a clash fails only it) */
	if (rc2 == MNEMO_OK && rc == MNEMO_OK && mn_turn_checkpoint_call(ts, &d[nd]) == MNEMO_OK)
		d[nd++].sync = true;
	rc3 = mn_turn_context_calls(st, ts->session_id, c->available, TURN_REPORT, d, &nd, &after);
	lock_call(&d[nd++], &unlock_stmt, ts->session_id);
	if (rc3 == MNEMO_OK)
		rc3 = mn_exec_batch(st, d, nd);
	ts->locked = d[nd - 1].res == NULL;
	if (rc3 == MNEMO_OK)
		rc3 = mn_turn_context_read(st, &after);
	if (rc3 == MNEMO_OK)
		*size = mn_turn_context_size(&after);
	else if (rc2 == MNEMO_OK)
		rc2 = rc3;
	clear_calls(d, nd);
	if (rc != MNEMO_OK && rc != MNEMO_ERR_CONNECTION && rc3 == MNEMO_ERR_CONNECTION)
	{
		/* the stream failed, but the connection went too: nothing of the
		 * reply is stored, which the lost connection says (and the caller
		 * must reconnect), whatever ended the stream */
		free(se.msg);
		return rc3;
	}
	if (rc != MNEMO_OK)
		return mn_error_restore(st, &se);
	/* the stream ended well but its last writes failed: the turn failed */
	if (rc2 != MNEMO_OK && strcmp(finish, "error") != 0)
	{
		char	   *error = strdup("error");

		if (error != NULL)
		{
			free(ts->turn->finish_reason);
			ts->turn->finish_reason = error;
		}
	}
	return rc2;
}

/*
 * Make ts ready for the next round of a turn whose model called only the
 * recall tools: the turn result describes the last assistant message.
 */
static void
next_round(turn_state *ts)
{
	free(ts->turn->finish_reason);
	ts->turn->finish_reason = NULL;
	memset(&ts->turn->tokens, 0, sizeof(ts->turn->tokens));
	ts->turn->cost = 0;
	mn_buf_reset(&ts->text);
	mn_buf_reset(&ts->part);
	free(ts->signature);
	ts->signature = NULL;
	ts->open = false;
}

static int
run_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *o, const turn_cfg *c,
		 const mnemo_session *s, const char *text, const mnemo_new_part *parts, size_t n_parts,
		 turn_state *ts)
{
	mnemo_new_message user = {0};
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	turn_context tc = {0};
	mn_stream  *stream = NULL;
	char	   *with_recall = NULL;
	int64_t		size;
	int			round;
	int			rc;

	user.role = "user";
	if (text != NULL)
	{
		p.type = "text";
		p.text = text;
		user.parts = &p;
		user.n_parts = 1;
	}
	else
	{
		user.parts = parts;
		user.n_parts = n_parts;
	}

	for (round = 0;; round++)
	{
		int			ran = 0;

		/* 1 to 3: the user turn, the hard threshold, the context, the row */
		if ((rc = begin_turn(st, sid, o, c, round == 0 && (text != NULL || n_parts > 0) ? &user : NULL,
							 ts, &tc)) != MNEMO_OK)
			goto done;
		ts->tools = o->tools;
		if (mn_recall_wanted(o, c, &tc))
		{
			if (with_recall == NULL &&
				(rc = mn_recall_tools_with(st, o->tools, &with_recall)) != MNEMO_OK)
				goto done;
			ts->tools = with_recall;
		}

		/* 4 to 6 */
		if ((stream = mn_stream_new(c->provider, NULL, mn_turn_on_delta, ts)) == NULL)
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		else
			rc = mn_turn_request(st, c, s, &tc, ts, stream);
		if ((rc = finish_turn(st, o, c, ts, stream, rc, &size)) != MNEMO_OK)
			goto done;

		/* 7. over the soft threshold, compaction in the background */
		mn_turn_check_soft(st, sid, o, c, ts, size);

		/* 8. the doom loop */
		if ((rc = mn_turn_check_doom_loop(st, sid, c, ts)) != MNEMO_OK)
			goto done;

		/* the recall calls are the library's to answer (recall.c); a reply
		 * that called only those goes on, within MN_RECALL_ROUNDS */
		if (ts->tools != with_recall || with_recall == NULL ||
			(rc = mn_recall_answer(st, sid, c, ts->turn, &ran)) != MNEMO_OK ||
			ran == 0 || ts->turn->n_tool_calls > 0 || ts->turn->doom_loop ||
			round + 1 == MN_RECALL_ROUNDS)
			break;
		next_round(ts);
		mn_stream_free(stream);
		stream = NULL;
		mn_turn_context_free(&tc);
		memset(&tc, 0, sizeof(tc));
	}

done:
	if (ts->locked)
	{
		mn_saved_error se = {0};
		int			rc2;

		if (rc != MNEMO_OK)
			mn_error_save(st, rc, &se);
		rc2 = lock_session(st, &unlock_stmt, sid, NULL);
		ts->locked = false;
		rc = rc != MNEMO_OK ? mn_error_restore(st, &se) : rc2;
	}
	mn_stream_free(stream);
	mn_turn_context_free(&tc);
	free(with_recall);
	return rc;
}

MNEMO_API int
mnemo_session_send(mnemo_store *st, const char *session_id, const mnemo_turn_options *opts,
				   const char *text, const mnemo_new_part *parts, size_t n_parts,
				   mnemo_part_fn on_part, void *arg, mnemo_turn **turn)
{
	static const mnemo_turn_options defaults = {0};
	const mnemo_turn_options *o = opts ? opts : &defaults;
	mnemo_session *s = NULL;
	turn_cfg	c = {0};
	turn_state	ts = {0};
	int			rc;

	if (turn != NULL)
		*turn = NULL;
	if ((rc = mn_begin(st, session_id != NULL && !(text != NULL && n_parts > 0) &&
					   (n_parts == 0 || parts != NULL),
					   "mnemo_session_send: a session id, and text or parts (not both)")) != MNEMO_OK)
		return rc;
	/* a background compaction that ended since the last turn is heard of
	 * here, on the caller's thread */
	mn_compact_reap(st);
	if ((rc = mnemo_session_get(st, session_id, &s)) != MNEMO_OK)
		return rc;
	if ((rc = mn_turn_settings(st, o, s, &c)) != MNEMO_OK ||
		(rc = mn_http_begin(st)) != MNEMO_OK)
		goto out;
	if ((ts.turn = calloc(1, sizeof(*ts.turn))) == NULL)
	{
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		goto out;
	}
	ts.st = st;
	ts.session_id = session_id;
	ts.cfg = &c;
	ts.on_part = on_part;
	ts.arg = arg;

	rc = run_turn(st, session_id, o, &c, s, text, parts, n_parts, &ts);
	if ((ts.turn->text = strdup(ts.text.data ? ts.text.data : "")) == NULL && rc == MNEMO_OK)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	/* a turn whose stream began is the caller's, also when it failed */
	if (turn != NULL && ts.accepted && ts.turn->text != NULL)
	{
		*turn = ts.turn;
		ts.turn = NULL;
	}
out:
	mnemo_turn_free(ts.turn);
	mn_turn_state_clear(&ts);
	free(c.url);
	free(c.model);
	mnemo_session_free(s);
	return rc;
}

MNEMO_API int
mnemo_session_load(mnemo_store *st, const char *id, mnemo_session **out)
{
	mnemo_messages *msgs = NULL;
	bool		got = false;
	int			rc;
	size_t		i;

	if (out != NULL)
		*out = NULL;
	if ((rc = mn_begin(st, id != NULL && out != NULL, "mnemo_session_load: id and out are required")) != MNEMO_OK)
		return rc;
	/* without the lock a turn is streaming on this session somewhere: its
	 * row is alive */
	if ((rc = lock_session(st, &try_lock_stmt, id, &got)) != MNEMO_OK)
		return rc;
	if (got)
	{
		mn_saved_error se = {0};

		rc = mnemo_messages_get(st, id, NULL, false, &msgs);
		for (i = 0; rc == MNEMO_OK && i < msgs->count; i++)
		{
			const mnemo_message *m = &msgs->items[i];

			/* a fork's inherited messages are its ancestors' rows, not its to mark */
			if (strcmp(m->role, "assistant") == 0 && !m->is_summary && m->finish_reason == NULL &&
				strcmp(m->session_id, id) == 0)
				rc = mnemo_message_update_tokens(st, id, m->id, NULL, -1, "interrupted");
		}
		mnemo_messages_free(msgs);
		if (rc != MNEMO_OK)
			mn_error_save(st, rc, &se);
		if (lock_session(st, &unlock_stmt, id, NULL) != MNEMO_OK && rc == MNEMO_OK)
			return st->errcode;
		if (rc != MNEMO_OK)
			return mn_error_restore(st, &se);
	}
	return mnemo_session_get(st, id, out);
}
