/*
 * t_lifecycle.c
 *		Checkpoints, runs, the pending request and state through libmnemo:
 *		the typed wrappers, their rows, and each error with its SQLSTATE.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

static void
test_checkpoints(mnemo_store *st)
{
	mnemo_checkpoint *c = NULL;
	mnemo_checkpoints *list = NULL;
	mnemo_new_message msg = {0};

	new_session(st, "cp");
	is_int(mnemo_checkpoint_add(st, "cp", "start", false, &c), MNEMO_OK, "add a checkpoint to an empty session");
	ok(c != NULL && strcmp(c->session_id, "cp") == 0 && strcmp(c->label, "start") == 0 &&
	   c->seq == 0 && !c->is_auto && c->created_at > 1600000000000LL,
	   "its row: session, label, seq 0, manual, created_at in ms");
	mnemo_checkpoint_free(c);
	c = NULL;

	msg.role = "user";
	append_text_message(st, "cp", &msg, "one");
	msg.role = "assistant";
	append_text_message(st, "cp", &msg, "two");
	is_int(mnemo_checkpoint_add(st, "cp", "turn-2", true, NULL), MNEMO_OK, "add one without out");
	is_int(mnemo_checkpoint_add(st, "cp", "turn-2", false, &c), MNEMO_ERR_DUPLICATE_ID,
		   "a label taken in the session: MNEMO_ERR_DUPLICATE_ID");
	is_str(mnemo_sqlstate(st), "MN004", "SQLSTATE MN004");
	ok(c == NULL, "*out untouched on error");
	is_err(st, mnemo_checkpoint_add(st, "cp", "", false, NULL), MNEMO_ERR_INVALID_ARGUMENT, "22023",
		   "an empty label");
	is_err(st, mnemo_checkpoint_add(st, "cp_none", "x", false, NULL), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "a missing session");
	is_int(mnemo_checkpoint_add(st, "cp", NULL, false, NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "a NULL label is refused before sending");

	is_int(mnemo_checkpoints_list(st, "cp", &list), MNEMO_OK, "list the checkpoints");
	ok(list != NULL && list->count == 2 && strcmp(list->items[0].label, "start") == 0 &&
	   strcmp(list->items[1].label, "turn-2") == 0 && list->items[1].seq == 2 && list->items[1].is_auto,
	   "in log order: start at 0, turn-2 at 2 (auto)");
	mnemo_checkpoints_free(list);
	list = NULL;
	new_session(st, "cp_empty");
	is_int(mnemo_checkpoints_list(st, "cp_empty", &list), MNEMO_OK, "list a session without checkpoints");
	ok(list != NULL && list->count == 0 && list->items == NULL, "an empty list");
	mnemo_checkpoints_free(list);
	is_err(st, mnemo_checkpoints_list(st, "cp_none", &list), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "list of a missing session");
	mnemo_checkpoint_free(NULL);
	mnemo_checkpoints_free(NULL);
	ok(1, "the checkpoint frees take NULL");
}

static void
test_fork_resume(mnemo_store *st)
{
	mnemo_session *s = NULL;
	mnemo_messages *msgs = NULL;
	mnemo_new_message msg = {0};
	int64_t		discarded = -1;
	char		buf[4096];
	FILE	   *f;
	size_t		n;

	new_session(st, "fk");
	msg.role = "user";
	append_text_message(st, "fk", &msg, "one");
	msg.role = "assistant";
	append_text_message(st, "fk", &msg, "two");
	is_int(mnemo_checkpoint_add(st, "fk", "two", false, NULL), MNEMO_OK, "a checkpoint after two");
	msg.role = "user";
	append_text_message(st, "fk", &msg, "three");

	is_int(mnemo_session_fork(st, "fk", "two", "fk_child", &s), MNEMO_OK, "fork at the checkpoint");
	ok(s != NULL && strcmp(s->id, "fk_child") == 0 && s->parent_id != NULL &&
	   strcmp(s->parent_id, "fk") == 0 && s->last_seq == 2,
	   "the new session: its id, the source as parent, last_seq the fork point");
	mnemo_session_free(s);
	s = NULL;
	is_int(mnemo_messages_get(st, "fk_child", NULL, true, &msgs), MNEMO_OK, "read the fork");
	ok(msgs != NULL && msgs->count == 2 && msgs->items[1].seq == 2 && msgs->items[1].n_parts == 1 &&
	   strstr(msgs->items[1].parts[0].content, "\"two\"") != NULL,
	   "it reads the inherited messages, not the source's third");
	mnemo_messages_free(msgs);
	msgs = NULL;
	is_int(mnemo_session_fork(st, "fk", "1", NULL, &s), MNEMO_OK, "fork at a seq, with a generated id");
	ok(s != NULL && strncmp(s->id, "sess_", 5) == 0 && s->last_seq == 1, "a sess_ id, fork point 1");
	mnemo_session_free(s);
	s = NULL;
	is_err(st, mnemo_session_fork(st, "fk", "two", "fk_child", &s), MNEMO_ERR_DUPLICATE_ID, "MN004",
		   "fork onto an existing id");
	ok(s == NULL, "*out untouched on error");
	is_err(st, mnemo_session_fork(st, "fk", "nope", "fk_x", &s), MNEMO_ERR_CHECKPOINT_NOT_FOUND, "MN011",
		   "fork at an unknown checkpoint");
	is_err(st, mnemo_session_fork(st, "fk", "9", "fk_x", &s), MNEMO_ERR_INVALID_ARGUMENT, "22023",
		   "fork past the end");
	is_err(st, mnemo_session_fork(st, "fk", "run:r", "fk_x", &s), MNEMO_ERR_RUN_NOT_COMPLETED, "MN010",
		   "fork after a run that is not completed");
	is_err(st, mnemo_session_fork(st, "fk_none", "1", "fk_x", &s), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "fork of a missing session");
	is_int(mnemo_session_fork(st, "fk", NULL, "fk_x", &s), MNEMO_ERR_INVALID_ARGUMENT,
		   "a NULL fork point is refused before sending");

	is_int(mnemo_session_resume(st, "fk", "two", &discarded), MNEMO_OK, "resume at the checkpoint");
	is_int((int) discarded, 1, "one message discarded");
	is_int(mnemo_discarded_list(st, "fk", &msgs), MNEMO_OK, "list the discarded");
	ok(msgs != NULL && msgs->count == 1 && msgs->items[0].seq == 3, "the third message, seq 3");
	mnemo_messages_free(msgs);
	msgs = NULL;
	append_text_message(st, "fk", &msg, "four");
	is_int(mnemo_messages_get(st, "fk", NULL, false, &msgs), MNEMO_OK, "read the resumed session");
	ok(msgs != NULL && msgs->count == 3 && msgs->items[2].seq == 4,
	   "the live line: seqs 1, 2 and a fresh 4");
	mnemo_messages_free(msgs);
	msgs = NULL;
	is_int(mnemo_session_resume(st, "fk", "two", NULL), MNEMO_OK, "resume again, discarded NULL");
	is_err(st, mnemo_session_resume(st, "fk", "nope", NULL), MNEMO_ERR_CHECKPOINT_NOT_FOUND, "MN011",
		   "resume at an unknown checkpoint");
	is_int(mnemo_session_resume(st, "fk_child", "two", &discarded), MNEMO_OK,
		   "a fork resumes at its fork point (the inherited checkpoint)");
	is_int((int) discarded, 0, "nothing of its own to discard");
	new_session(st, "fk_other");
	append_text_message(st, "fk_other", &msg, "x");
	is_int(mnemo_checkpoint_add(st, "fk_other", "one", false, NULL), MNEMO_OK, "a checkpoint at seq 1");
	append_text_message(st, "fk_other", &msg, "y");
	is_int(mnemo_session_fork(st, "fk_other", "2", "fk_other_child", &s), MNEMO_OK,
		   "fork it at seq 2");
	mnemo_session_free(s);
	s = NULL;
	is_err(st, mnemo_session_resume(st, "fk_other_child", "one", NULL), MNEMO_ERR_INVALID_ARGUMENT, "22023",
		   "a fork resuming before its fork point");
	is_err(st, mnemo_discarded_list(st, "fk_none", &msgs), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "discarded of a missing session");

	/* the discarded suffix as JSONL: the header, then seqs 3 and 4 */
	f = tmpfile();
	is_int(mnemo_export_discarded_jsonl(st, "fk", f), MNEMO_OK, "export the discarded");
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ok(strstr(buf, "\"mnemo.session\"") != NULL && strstr(buf, "three") != NULL &&
	   strstr(buf, "four") != NULL && strstr(buf, "\"one\"") == NULL,
	   "a header line and the discarded messages only");
}

static void
test_runs(mnemo_store *st)
{
	mnemo_run  *r = NULL;
	mnemo_messages *snap = NULL;
	mnemo_new_message msg = {0};

	new_session(st, "rn");
	is_int(mnemo_run_claim(st, "rn", "run_a", &r), MNEMO_OK, "claim a run");
	ok(r != NULL && strcmp(r->run_id, "run_a") == 0 && strcmp(r->session_id, "rn") == 0 &&
	   r->claimed_at > 0 && r->completed_at == 0 && r->completion_seq == 0,
	   "in flight: claimed_at set, completed_at and completion_seq 0");
	mnemo_run_free(r);
	r = NULL;
	is_int(mnemo_run_claim(st, "rn", "run_b", NULL), MNEMO_OK, "claim another, out NULL");
	is_err(st, mnemo_run_claim(st, "rn", "run_a", NULL), MNEMO_ERR_RUN_ALREADY_CLAIMED, "MN007",
		   "a second claim of a run in flight");

	msg.role = "user";
	append_text_message(st, "rn", &msg, "no run");
	msg.run_id = "run_a";
	append_text_message(st, "rn", &msg, "of a");
	msg.run_id = "run_b";
	append_text_message(st, "rn", &msg, "of b");
	msg.run_id = NULL;

	is_err(st, mnemo_run_snapshot(st, "rn", "run_a", &snap), MNEMO_ERR_RUN_NOT_COMPLETED, "MN010",
		   "a snapshot after a run in flight");
	is_int(mnemo_run_complete(st, "rn", "run_b", &r), MNEMO_OK, "complete run_b");
	ok(r != NULL && r->completion_seq == 1 && r->completed_at >= r->claimed_at,
	   "run_b completed first: completion_seq 1");
	mnemo_run_free(r);
	r = NULL;
	is_int(mnemo_run_complete(st, "rn", "run_b", &r), MNEMO_OK, "complete it again: idempotent");
	ok(r != NULL && r->completion_seq == 1, "still completion_seq 1");
	mnemo_run_free(r);
	r = NULL;
	is_err(st, mnemo_run_claim(st, "rn", "run_b", NULL), MNEMO_ERR_RUN_ALREADY_COMPLETED, "MN008",
		   "a claim of a completed run");
	is_err(st, mnemo_run_complete(st, "rn", "run_never", NULL), MNEMO_ERR_RUN_NOT_CLAIMED, "MN009",
		   "completing a run never claimed");

	is_int(mnemo_run_snapshot(st, "rn", "run_b", &snap), MNEMO_OK, "snapshot after run_b");
	ok(snap != NULL && snap->count == 2 &&
	   strcmp(snap->items[0].parts[0].text, "no run") == 0 && snap->items[0].run_id == NULL &&
	   strcmp(snap->items[1].parts[0].text, "of b") == 0 && strcmp(snap->items[1].run_id, "run_b") == 0,
	   "the message without a run and run_b's, with their parts; run_a (in flight) left out");
	mnemo_messages_free(snap);
	snap = NULL;
	is_int(mnemo_run_complete(st, "rn", "run_a", NULL), MNEMO_OK, "complete run_a");
	is_int(mnemo_run_snapshot(st, "rn", "run_a", &snap), MNEMO_OK, "snapshot after run_a");
	ok(snap != NULL && snap->count == 3 && snap->items[0].seq < snap->items[1].seq &&
	   snap->items[1].seq < snap->items[2].seq, "all three, in seq order");
	mnemo_messages_free(snap);
	snap = NULL;
	is_int(mnemo_run_snapshot(st, "rn", "run_b", &snap), MNEMO_OK, "snapshot after run_b again");
	ok(snap != NULL && snap->count == 2, "run_a completed after run_b: still left out");
	mnemo_messages_free(snap);

	is_err(st, mnemo_run_claim(st, "rn", "", NULL), MNEMO_ERR_INVALID_ARGUMENT, "22023", "an empty run id");
	is_int(mnemo_run_claim(st, "rn", NULL, NULL), MNEMO_ERR_INVALID_ARGUMENT, "a NULL run id");
	is_int(mnemo_run_snapshot(st, "rn", "run_a", NULL), MNEMO_ERR_INVALID_ARGUMENT, "a NULL out");
	is_err(st, mnemo_run_claim(st, "rn_none", "x", NULL), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "a claim on a missing session");
	mnemo_run_free(NULL);
	ok(1, "mnemo_run_free(NULL) is a no-op");
}

static void
test_pending(mnemo_store *st)
{
	mnemo_pending *p = NULL;
	bool		cleared = false;

	new_session(st, "hl");
	is_int(mnemo_pending_load(st, "hl", &p), MNEMO_OK, "load with nothing pending");
	ok(p == NULL, "*out NULL: nothing pending");
	is_int(mnemo_pending_set(st, "hl", "{\"kind\": \"approve\", \"tool\": \"rm\"}", "run_1"), MNEMO_OK,
		   "set a request with its run");
	is_int(mnemo_pending_load(st, "hl", &p), MNEMO_OK, "load it");
	ok(p != NULL && strcmp(p->request, "{\"kind\": \"approve\", \"tool\": \"rm\"}") == 0 &&
	   p->run_id != NULL && strcmp(p->run_id, "run_1") == 0 && p->created_at > 0,
	   "request and run id together");
	mnemo_pending_free(p);
	p = NULL;
	is_int(mnemo_pending_set(st, "hl", "{\"kind\": \"input\"}", NULL), MNEMO_OK, "replace it, no run");
	is_int(mnemo_pending_load(st, "hl", &p), MNEMO_OK, "load again");
	ok(p != NULL && strcmp(p->request, "{\"kind\": \"input\"}") == 0 && p->run_id == NULL,
	   "the new request, and the old run id gone with the old request");
	mnemo_pending_free(p);
	p = NULL;
	is_err(st, mnemo_pending_set(st, "hl", "[1]", NULL), MNEMO_ERR_INVALID_ARGUMENT, "22023",
		   "a request that is not an object");
	is_err(st, mnemo_pending_set(st, "hl", "{oops", NULL), MNEMO_ERR_INVALID_ARGUMENT, "22P02",
		   "a request that is not JSON");
	is_int(mnemo_pending_set(st, "hl", NULL, NULL), MNEMO_ERR_INVALID_ARGUMENT, "a NULL request");
	is_int(mnemo_pending_clear(st, "hl", &cleared), MNEMO_OK, "clear");
	ok(cleared, "one was pending");
	is_int(mnemo_pending_clear(st, "hl", &cleared), MNEMO_OK, "clear again");
	ok(!cleared, "nothing was pending");
	is_int(mnemo_pending_load(st, "hl", &p), MNEMO_OK, "load after clear");
	ok(p == NULL, "nothing pending");
	is_err(st, mnemo_pending_load(st, "hl_none", &p), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "load of a missing session");
	mnemo_pending_free(NULL);
	ok(1, "mnemo_pending_free(NULL) is a no-op");
}

static void
test_state(mnemo_store *st)
{
	char	   *state = NULL;

	new_session(st, "st");
	is_int(mnemo_state_get(st, "st", &state), MNEMO_OK, "get a new session's state");
	is_str(state, "{}", "{} until the first update");
	mnemo_state_free(state);
	state = NULL;
	is_int(mnemo_state_update(st, "st", "{\"mood\": \"calm\", \"topic\": \"billing\"}", NULL), MNEMO_OK,
		   "merge a patch, merged NULL");
	is_int(mnemo_state_update(st, "st", "{\"mood\": \"frustrated\"}", &state), MNEMO_OK, "merge another");
	is_str(state, "{\"mood\": \"frustrated\", \"topic\": \"billing\"}", "the merged state comes back");
	mnemo_state_free(state);
	state = NULL;
	is_int(mnemo_state_get(st, "st", &state), MNEMO_OK, "get it");
	is_str(state, "{\"mood\": \"frustrated\", \"topic\": \"billing\"}", "the same state");
	mnemo_state_free(state);
	state = NULL;
	is_err(st, mnemo_state_update(st, "st", "[]", &state), MNEMO_ERR_INVALID_ARGUMENT, "22023",
		   "a patch that is not an object");
	ok(state == NULL, "*merged untouched on error");
	is_err(st, mnemo_state_update(st, "st_none", "{}", NULL), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "update of a missing session");
	is_int(mnemo_session_soft_delete(st, "st"), MNEMO_OK, "soft-delete the session");
	is_err(st, mnemo_state_update(st, "st", "{\"late\": 1}", NULL), MNEMO_ERR_SESSION_INACTIVE, "MN012",
		   "update of an inactive session");
	is_int(mnemo_state_get(st, "st", NULL), MNEMO_ERR_INVALID_ARGUMENT, "a NULL out");
	mnemo_state_free(NULL);
	ok(1, "mnemo_state_free(NULL) is a no-op");
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_checkpoints(st);
	test_fork_resume(st);
	test_runs(st);
	test_pending(st);
	test_state(st);
	mnemo_store_close(st);
	return tap_done();
}
