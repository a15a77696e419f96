/*
 * t_api_misuse.c
 *		The public API as a careless caller uses it: a NULL for every pointer
 *		argument that is required, a NULL for every out-parameter documented
 *		as optional, every _free of NULL, and the error the handle keeps after
 *		each failure (set, useful, replaced by the next one, cleared by a
 *		success).  doc/c-api.md#conventions is the contract checked.
 *
 * Values that are wrong rather than missing (empty, long, blank ids,
 * invalid UTF-8, JSON that is not JSON) and a server that goes away are in
 * t_api_misuse_values.c.
 */
#include <stdio.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define SID "misuse-s"
#define MID "misuse-m1"
#define PID "misuse-p1"

/*
 * A call refused for a missing argument: INVALID_ARGUMENT, with a message,
 * and no SQLSTATE (the client refused it; the server would have said 22004).
 */
#define refused(st, call, what) \
	do { \
		int			rc_ = (call); \
		\
		is_int(rc_, MNEMO_ERR_INVALID_ARGUMENT, "%s: INVALID_ARGUMENT", (what)); \
		ok(mnemo_errcode(st) == rc_ && *mnemo_errmsg(st) != '\0' && \
		   *mnemo_sqlstate(st) == '\0', "%s: the handle says why (%s), no SQLSTATE", \
		   (what), mnemo_errmsg(st)); \
	} while (0)

#define no_handle(call, what) \
	is_int((call), MNEMO_ERR_INVALID_ARGUMENT, "%s with a NULL handle: INVALID_ARGUMENT", (what))

static int
on_event(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) ev;
	(void) arg;
	return 0;
}

/* Every call that takes a handle, with NULL for it: no crash, no handle to
 * keep a message, so the code alone. */
static void
test_null_handle(void)
{
	char		id[MNEMO_ID_MAX + 1];
	const char *ids[1] = {MID};
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_part_status status = MNEMO_PART_STATUS_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_file_ref file = MNEMO_NEW_FILE_REF_INIT;
	mnemo_context_budget budget;
	mnemo_event ev = {MNEMO_EVENT_DOOM_LOOP_DETECTED, SID, NULL, 0, NULL, false};
	void	   *out = NULL;
	int64_t		n;
	bool		b;

	msg.role = "user";
	part.type = "text";
	part.text = "x";
	summary.content = "s";
	file.content_id = "c";
	file.path = "p";
	no_handle(mnemo_new_id(NULL, "msg", id), "mnemo_new_id");
	is_int(mnemo_store_reconnect(NULL), MNEMO_ERR_NOMEM,
		   "mnemo_store_reconnect with a NULL handle: NOMEM, as mnemo_errcode(NULL) reads");
	no_handle(mnemo_session_create(NULL, NULL, (mnemo_session **) &out), "mnemo_session_create");
	no_handle(mnemo_session_get_or_create(NULL, &(mnemo_new_session) {.id = SID},
										  (mnemo_session **) &out), "mnemo_session_get_or_create");
	no_handle(mnemo_session_get(NULL, SID, (mnemo_session **) &out), "mnemo_session_get");
	no_handle(mnemo_session_list(NULL, NULL, (mnemo_sessions **) &out), "mnemo_session_list");
	no_handle(mnemo_session_soft_delete(NULL, SID), "mnemo_session_soft_delete");
	no_handle(mnemo_session_purge(NULL, SID, &n), "mnemo_session_purge");
	no_handle(mnemo_session_watch(NULL, SID), "mnemo_session_watch");
	no_handle(mnemo_session_unwatch(NULL, SID), "mnemo_session_unwatch");
	no_handle(mnemo_message_append(NULL, SID, &msg, NULL), "mnemo_message_append");
	no_handle(mnemo_messages_append(NULL, SID, &msg, 1, NULL), "mnemo_messages_append");
	no_handle(mnemo_part_append(NULL, SID, MID, &part, NULL), "mnemo_part_append");
	no_handle(mnemo_part_update_status(NULL, SID, PID, &status), "mnemo_part_update_status");
	no_handle(mnemo_message_update_tokens(NULL, SID, MID, NULL, -1, NULL),
			  "mnemo_message_update_tokens");
	no_handle(mnemo_part_tombstone(NULL, SID, PID, NULL), "mnemo_part_tombstone");
	no_handle(mnemo_message_get(NULL, SID, MID, (mnemo_message **) &out), "mnemo_message_get");
	no_handle(mnemo_messages_get(NULL, SID, NULL, true, (mnemo_messages **) &out),
			  "mnemo_messages_get");
	no_handle(mnemo_messages_get_by_ids(NULL, SID, ids, 1, (mnemo_messages **) &out),
			  "mnemo_messages_get_by_ids");
	no_handle(mnemo_history(NULL, SID, -1, (mnemo_messages **) &out), "mnemo_history");
	no_handle(mnemo_parts_get(NULL, SID, MID, (mnemo_parts **) &out), "mnemo_parts_get");
	no_handle(mnemo_summary_last(NULL, SID, (mnemo_message **) &out), "mnemo_summary_last");
	no_handle(mnemo_context_items_get(NULL, SID, (mnemo_context_items **) &out),
			  "mnemo_context_items_get");
	no_handle(mnemo_context_build(NULL, SID, 100, (mnemo_context **) &out), "mnemo_context_build");
	no_handle(mnemo_context_report(NULL, SID, 100, &budget), "mnemo_context_report");
	no_handle(mnemo_context_swap(NULL, SID, ids, 1, "sum", NULL), "mnemo_context_swap");
	no_handle(mnemo_summary_commit(NULL, SID, &summary, NULL, NULL), "mnemo_summary_commit");
	no_handle(mnemo_summary_nodes_get(NULL, SID, true, (mnemo_summary_nodes **) &out),
			  "mnemo_summary_nodes_get");
	no_handle(mnemo_summary_expand(NULL, SID, "sum", true, (mnemo_expansion **) &out),
			  "mnemo_summary_expand");
	no_handle(mnemo_checkpoint_add(NULL, SID, "cp", false, NULL), "mnemo_checkpoint_add");
	no_handle(mnemo_checkpoints_list(NULL, SID, (mnemo_checkpoints **) &out),
			  "mnemo_checkpoints_list");
	no_handle(mnemo_session_fork(NULL, SID, "1", NULL, (mnemo_session **) &out),
			  "mnemo_session_fork");
	no_handle(mnemo_session_resume(NULL, SID, "cp", NULL), "mnemo_session_resume");
	no_handle(mnemo_discarded_list(NULL, SID, (mnemo_messages **) &out), "mnemo_discarded_list");
	no_handle(mnemo_run_claim(NULL, SID, "r", NULL), "mnemo_run_claim");
	no_handle(mnemo_run_complete(NULL, SID, "r", NULL), "mnemo_run_complete");
	no_handle(mnemo_run_snapshot(NULL, SID, "r", (mnemo_messages **) &out), "mnemo_run_snapshot");
	no_handle(mnemo_pending_set(NULL, SID, "{}", NULL), "mnemo_pending_set");
	no_handle(mnemo_pending_clear(NULL, SID, &b), "mnemo_pending_clear");
	no_handle(mnemo_pending_load(NULL, SID, (mnemo_pending **) &out), "mnemo_pending_load");
	no_handle(mnemo_state_update(NULL, SID, "{}", NULL), "mnemo_state_update");
	no_handle(mnemo_state_get(NULL, SID, (char **) &out), "mnemo_state_get");
	no_handle(mnemo_prune_tool_outputs(NULL, SID, NULL, NULL), "mnemo_prune_tool_outputs");
	no_handle(mnemo_search(NULL, SID, "x", -1, (mnemo_search_hits **) &out), "mnemo_search");
	no_handle(mnemo_file_ref_store(NULL, &file, NULL), "mnemo_file_ref_store");
	no_handle(mnemo_file_ref_get(NULL, "c", (mnemo_file_ref **) &out), "mnemo_file_ref_get");
	no_handle(mnemo_file_ref_get_by_path(NULL, "p", (mnemo_file_ref **) &out),
			  "mnemo_file_ref_get_by_path");
	no_handle(mnemo_file_handle(NULL, "/etc/hostname", NULL, (mnemo_file_result **) &out),
			  "mnemo_file_handle");
	no_handle(mnemo_event_subscribe(NULL, MNEMO_EVENT_ANY, on_event, NULL), "mnemo_event_subscribe");
	no_handle(mnemo_event_unsubscribe(NULL, 1), "mnemo_event_unsubscribe");
	no_handle(mnemo_event_publish(NULL, &ev), "mnemo_event_publish");
	no_handle(mnemo_feed_follow(NULL, SID, 0), "mnemo_feed_follow");
	no_handle(mnemo_feed_unfollow(NULL, SID), "mnemo_feed_unfollow");
	no_handle(mnemo_feed_poll(NULL, 0), "mnemo_feed_poll");
	no_handle(mnemo_compact_hook(NULL, SID, true, NULL), "mnemo_compact_hook, blocking");
	no_handle(mnemo_compact_hook(NULL, SID, false, NULL), "mnemo_compact_hook, in the background");
	is_int(mnemo_feed_socket(NULL), -1, "mnemo_feed_socket with a NULL handle: -1");
	is_int(mnemo_event_failures(NULL), 0, "mnemo_event_failures with a NULL handle: 0");
	ok(out == NULL, "no out-parameter was written by any of them");
}

/* Each required pointer argument NULL in turn, the others good. */
static void
test_null_arguments(mnemo_store *st)
{
	char		id[MNEMO_ID_MAX + 1] = "untouched";
	const char *ids[2] = {MID, NULL};
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_message norole = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_message noparts = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_part untyped = MNEMO_NEW_PART_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_summary nocontent = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_summary noitems = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_summary nullpart = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_file_ref nopath = MNEMO_NEW_FILE_REF_INIT;
	mnemo_new_file_ref noid = MNEMO_NEW_FILE_REF_INIT;
	mnemo_prune_options prune = MNEMO_PRUNE_OPTIONS_INIT;
	mnemo_event ev = {(mnemo_event_type) 999, SID, NULL, 0, NULL, false};
	mnemo_session *s = NULL;

	msg.role = "user";
	noparts.role = "user";
	noparts.n_parts = 2;		/* and parts NULL */
	part.type = "text";
	part.text = "x";
	untyped.text = "no type";
	summary.content = "s";
	summary.remove_item_ids = ids;
	summary.n_remove = 1;
	nocontent.remove_item_ids = ids;
	nocontent.n_remove = 1;
	noitems.content = "s";
	noitems.n_remove = 1;		/* and remove_item_ids NULL */
	nullpart.content = "s";
	nullpart.remove_item_ids = ids;
	nullpart.n_remove = 1;
	nullpart.part_ids = ids;	/* its second id is NULL */
	nopath.content_id = "c";
	noid.path = "p";
	prune.protected_tools = ids;
	prune.n_protected_tools = 2;	/* the second NULL */

	refused(st, mnemo_new_id(st, "msg", NULL), "mnemo_new_id, id NULL");
	refused(st, mnemo_compact_hook(st, NULL, true, NULL), "mnemo_compact_hook, session_id NULL");
	is_int(mnemo_new_id(st, NULL, id), MNEMO_ERR_INVALID_ARGUMENT,
		   "mnemo_new_id, prefix NULL: INVALID_ARGUMENT (the server's 22004)");
	is_str(mnemo_sqlstate(st), "22004", "mnemo_new_id, prefix NULL: SQLSTATE 22004, as documented");
	is_str(id, "untouched", "mnemo_new_id: the id is left as it was");

	refused(st, mnemo_session_create(st, NULL, NULL), "mnemo_session_create, out NULL");
	refused(st, mnemo_session_get_or_create(st, NULL, &s), "mnemo_session_get_or_create, spec NULL");
	refused(st, mnemo_session_get_or_create(st, &(mnemo_new_session) {0}, &s),
			"mnemo_session_get_or_create, spec->id NULL");
	refused(st, mnemo_session_get_or_create(st, &(mnemo_new_session) {.id = SID}, NULL),
			"mnemo_session_get_or_create, out NULL");
	refused(st, mnemo_session_get(st, NULL, &s), "mnemo_session_get, id NULL");
	refused(st, mnemo_session_get(st, SID, NULL), "mnemo_session_get, out NULL");
	refused(st, mnemo_session_list(st, NULL, NULL), "mnemo_session_list, out NULL");
	refused(st, mnemo_session_soft_delete(st, NULL), "mnemo_session_soft_delete, id NULL");
	refused(st, mnemo_session_purge(st, NULL, NULL), "mnemo_session_purge, id NULL");
	refused(st, mnemo_session_watch(st, NULL), "mnemo_session_watch, id NULL");
	refused(st, mnemo_session_unwatch(st, NULL), "mnemo_session_unwatch, id NULL");
	ok(s == NULL, "no session was returned by any of them");

	refused(st, mnemo_message_append(st, NULL, &msg, NULL), "mnemo_message_append, session NULL");
	refused(st, mnemo_message_append(st, SID, NULL, NULL), "mnemo_message_append, msg NULL");
	refused(st, mnemo_message_append(st, SID, &norole, NULL), "mnemo_message_append, role NULL");
	refused(st, mnemo_message_append(st, SID, &noparts, NULL),
			"mnemo_message_append, n_parts 2 and parts NULL");
	msg.parts = &untyped;
	msg.n_parts = 1;
	refused(st, mnemo_message_append(st, SID, &msg, NULL),
			"mnemo_message_append, a part with neither type nor content");
	msg.parts = NULL;
	msg.n_parts = 0;
	refused(st, mnemo_messages_append(st, NULL, &msg, 1, NULL), "mnemo_messages_append, session NULL");
	refused(st, mnemo_messages_append(st, SID, NULL, 1, NULL), "mnemo_messages_append, n 1 and msgs NULL");
	refused(st, mnemo_messages_append(st, SID, &norole, 1, NULL), "mnemo_messages_append, role NULL");
	refused(st, mnemo_part_append(st, NULL, MID, &part, NULL), "mnemo_part_append, session NULL");
	refused(st, mnemo_part_append(st, SID, NULL, &part, NULL), "mnemo_part_append, message NULL");
	refused(st, mnemo_part_append(st, SID, MID, NULL, NULL), "mnemo_part_append, part NULL");
	refused(st, mnemo_part_update_status(st, NULL, PID, &(mnemo_part_status) {0}),
			"mnemo_part_update_status, session NULL");
	refused(st, mnemo_part_update_status(st, SID, NULL, &(mnemo_part_status) {0}),
			"mnemo_part_update_status, part NULL");
	refused(st, mnemo_part_update_status(st, SID, PID, NULL), "mnemo_part_update_status, status NULL");
	refused(st, mnemo_message_update_tokens(st, NULL, MID, NULL, -1, NULL),
			"mnemo_message_update_tokens, session NULL");
	refused(st, mnemo_message_update_tokens(st, SID, NULL, NULL, -1, NULL),
			"mnemo_message_update_tokens, message NULL");
	refused(st, mnemo_part_tombstone(st, NULL, PID, NULL), "mnemo_part_tombstone, session NULL");
	refused(st, mnemo_part_tombstone(st, SID, NULL, NULL), "mnemo_part_tombstone, part NULL");

	refused(st, mnemo_message_get(st, NULL, MID, &(mnemo_message *) {NULL}), "mnemo_message_get, session NULL");
	refused(st, mnemo_message_get(st, SID, NULL, &(mnemo_message *) {NULL}), "mnemo_message_get, id NULL");
	refused(st, mnemo_message_get(st, SID, MID, NULL), "mnemo_message_get, out NULL");
	refused(st, mnemo_messages_get(st, NULL, NULL, false, &(mnemo_messages *) {NULL}),
			"mnemo_messages_get, session NULL");
	refused(st, mnemo_messages_get(st, SID, NULL, true, NULL), "mnemo_messages_get, out NULL");
	refused(st, mnemo_messages_get_by_ids(st, SID, NULL, 1, &(mnemo_messages *) {NULL}),
			"mnemo_messages_get_by_ids, n 1 and ids NULL");
	refused(st, mnemo_messages_get_by_ids(st, SID, ids, 2, &(mnemo_messages *) {NULL}),
			"mnemo_messages_get_by_ids, a NULL id in the array");
	refused(st, mnemo_messages_get_by_ids(st, SID, ids, 1, NULL), "mnemo_messages_get_by_ids, out NULL");
	refused(st, mnemo_history(st, NULL, -1, &(mnemo_messages *) {NULL}), "mnemo_history, session NULL");
	refused(st, mnemo_history(st, SID, -1, NULL), "mnemo_history, out NULL");
	refused(st, mnemo_parts_get(st, SID, NULL, &(mnemo_parts *) {NULL}), "mnemo_parts_get, message NULL");
	refused(st, mnemo_parts_get(st, SID, MID, NULL), "mnemo_parts_get, out NULL");
	refused(st, mnemo_summary_last(st, NULL, &(mnemo_message *) {NULL}), "mnemo_summary_last, session NULL");
	refused(st, mnemo_summary_last(st, SID, NULL), "mnemo_summary_last, out NULL");

	refused(st, mnemo_context_items_get(st, SID, NULL), "mnemo_context_items_get, out NULL");
	refused(st, mnemo_context_build(st, NULL, 10, &(mnemo_context *) {NULL}), "mnemo_context_build, session NULL");
	refused(st, mnemo_context_build(st, SID, 10, NULL), "mnemo_context_build, out NULL");
	refused(st, mnemo_context_report(st, SID, 10, NULL), "mnemo_context_report, out NULL");
	refused(st, mnemo_context_swap(st, SID, NULL, 1, "sum", NULL), "mnemo_context_swap, n 1 and ids NULL");
	refused(st, mnemo_context_swap(st, SID, ids, 2, "sum", NULL), "mnemo_context_swap, a NULL id");
	refused(st, mnemo_context_swap(st, SID, ids, 1, NULL, NULL), "mnemo_context_swap, summary id NULL");
	refused(st, mnemo_summary_commit(st, NULL, &summary, NULL, NULL), "mnemo_summary_commit, session NULL");
	refused(st, mnemo_summary_commit(st, SID, NULL, NULL, NULL), "mnemo_summary_commit, summary NULL");
	refused(st, mnemo_summary_commit(st, SID, &nocontent, NULL, NULL), "mnemo_summary_commit, content NULL");
	refused(st, mnemo_summary_commit(st, SID, &noitems, NULL, NULL),
			"mnemo_summary_commit, n_remove 1 and remove_item_ids NULL");
	refused(st, mnemo_summary_commit(st, SID, &nullpart, NULL, NULL),
			"mnemo_summary_commit, a NULL part id");
	refused(st, mnemo_summary_nodes_get(st, SID, false, NULL), "mnemo_summary_nodes_get, out NULL");
	refused(st, mnemo_summary_expand(st, SID, NULL, false, &(mnemo_expansion *) {NULL}),
			"mnemo_summary_expand, summary NULL");
	refused(st, mnemo_summary_expand(st, SID, "sum", false, NULL), "mnemo_summary_expand, out NULL");

	refused(st, mnemo_checkpoint_add(st, NULL, "cp", false, NULL), "mnemo_checkpoint_add, session NULL");
	refused(st, mnemo_checkpoint_add(st, SID, NULL, false, NULL), "mnemo_checkpoint_add, label NULL");
	refused(st, mnemo_checkpoints_list(st, SID, NULL), "mnemo_checkpoints_list, out NULL");
	refused(st, mnemo_session_fork(st, NULL, "1", NULL, &s), "mnemo_session_fork, source NULL");
	refused(st, mnemo_session_fork(st, SID, NULL, NULL, &s), "mnemo_session_fork, at NULL");
	refused(st, mnemo_session_fork(st, SID, "1", NULL, NULL), "mnemo_session_fork, out NULL");
	refused(st, mnemo_session_resume(st, SID, NULL, NULL), "mnemo_session_resume, checkpoint NULL");
	refused(st, mnemo_discarded_list(st, SID, NULL), "mnemo_discarded_list, out NULL");
	refused(st, mnemo_run_claim(st, SID, NULL, NULL), "mnemo_run_claim, run NULL");
	refused(st, mnemo_run_complete(st, NULL, "r", NULL), "mnemo_run_complete, session NULL");
	refused(st, mnemo_run_snapshot(st, SID, NULL, &(mnemo_messages *) {NULL}), "mnemo_run_snapshot, run NULL");
	refused(st, mnemo_run_snapshot(st, SID, "r", NULL), "mnemo_run_snapshot, out NULL");
	refused(st, mnemo_pending_set(st, SID, NULL, NULL), "mnemo_pending_set, request NULL");
	refused(st, mnemo_pending_clear(st, NULL, NULL), "mnemo_pending_clear, session NULL");
	refused(st, mnemo_pending_load(st, SID, NULL), "mnemo_pending_load, out NULL");
	refused(st, mnemo_state_update(st, SID, NULL, NULL), "mnemo_state_update, patch NULL");
	refused(st, mnemo_state_get(st, SID, NULL), "mnemo_state_get, out NULL");

	refused(st, mnemo_prune_tool_outputs(st, NULL, NULL, NULL), "mnemo_prune_tool_outputs, session NULL");
	refused(st, mnemo_prune_tool_outputs(st, SID, &prune, NULL),
			"mnemo_prune_tool_outputs, a NULL protected tool");
	refused(st, mnemo_search(st, SID, NULL, -1, &(mnemo_search_hits *) {NULL}), "mnemo_search, query NULL");
	refused(st, mnemo_search(st, SID, "x", -1, NULL), "mnemo_search, out NULL");
	refused(st, mnemo_file_ref_store(st, NULL, NULL), "mnemo_file_ref_store, spec NULL");
	refused(st, mnemo_file_ref_store(st, &nopath, NULL), "mnemo_file_ref_store, path NULL");
	refused(st, mnemo_file_ref_store(st, &noid, NULL), "mnemo_file_ref_store, content id NULL");
	refused(st, mnemo_file_ref_get(st, NULL, &(mnemo_file_ref *) {NULL}), "mnemo_file_ref_get, id NULL");
	refused(st, mnemo_file_ref_get(st, "c", NULL), "mnemo_file_ref_get, out NULL");
	refused(st, mnemo_file_ref_get_by_path(st, NULL, &(mnemo_file_ref *) {NULL}),
			"mnemo_file_ref_get_by_path, path NULL");
	refused(st, mnemo_file_handle(st, NULL, NULL, &(mnemo_file_result *) {NULL}),
			"mnemo_file_handle, path NULL");
	refused(st, mnemo_file_handle(st, "/etc/hostname", NULL, NULL), "mnemo_file_handle, out NULL");

	refused(st, mnemo_event_subscribe(st, MNEMO_EVENT_ANY, NULL, NULL), "mnemo_event_subscribe, fn NULL");
	refused(st, mnemo_event_subscribe(st, (mnemo_event_type) 999, on_event, NULL),
			"mnemo_event_subscribe, an unknown type");
	refused(st, mnemo_event_publish(st, NULL), "mnemo_event_publish, event NULL");
	refused(st, mnemo_event_publish(st, &ev), "mnemo_event_publish, an unknown type");
	ev.type = MNEMO_EVENT_ANY;
	refused(st, mnemo_event_publish(st, &ev), "mnemo_event_publish, type ANY");
	refused(st, mnemo_feed_follow(st, NULL, 0), "mnemo_feed_follow, session NULL");
	refused(st, mnemo_feed_follow(st, SID, -1), "mnemo_feed_follow, a negative after_seq");
	refused(st, mnemo_feed_unfollow(st, NULL), "mnemo_feed_unfollow, session NULL");
	is_code(st, mnemo_event_unsubscribe(st, 0), MNEMO_ERR_NOT_FOUND, "mnemo_event_unsubscribe(0)");
	is_code(st, mnemo_feed_unfollow(st, SID), MNEMO_ERR_NOT_FOUND,
			"mnemo_feed_unfollow of a session never followed");
	ok(mnemo_event_name((mnemo_event_type) -1) == NULL && mnemo_event_name((mnemo_event_type) 999) == NULL,
	   "mnemo_event_name of an unknown type: NULL");

	/* the session is untouched by all of the above */
	{
		char	   *count = sql_value("SELECT count(*) FROM mnemo.messages WHERE session_id = $1", SID);

		is_str(count, "1", "none of the refused calls wrote anything");
		free(count);
	}
}

/* Out-parameters the doc calls optional ("may be NULL"), NULL: MNEMO_OK. */
static void
test_optional_outs(mnemo_store *st)
{
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_part tool = MNEMO_NEW_PART_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_file_ref file = MNEMO_NEW_FILE_REF_INIT;
	const char *items[1] = {"misuse-m2"};

	msg.role = "user";
	msg.id = "misuse-m2";
	part.type = "text";
	part.text = "two";
	msg.parts = &part;
	msg.n_parts = 1;
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_OK, "mnemo_message_append, ref NULL");
	msg.id = NULL;
	is_code(st, mnemo_messages_append(st, SID, &msg, 1, NULL), MNEMO_OK,
			"mnemo_messages_append, refs NULL");
	is_code(st, mnemo_messages_append(st, SID, NULL, 0, NULL), MNEMO_OK,
			"mnemo_messages_append, n 0 and msgs NULL");
	tool.type = "tool";
	tool.id = "misuse-p2";
	tool.tool_name = "grep";
	tool.tool_call_id = "call-1";
	tool.tool_state = "pending";
	tool.tool_input = "{\"q\": \"x\"}";
	is_code(st, mnemo_part_append(st, SID, MID, &tool, NULL), MNEMO_OK, "mnemo_part_append, part_index NULL");
	is_code(st, mnemo_message_update_tokens(st, SID, MID, NULL, -1, NULL), MNEMO_OK,
			"mnemo_message_update_tokens, tokens and finish reason NULL");
	is_code(st, mnemo_part_tombstone(st, SID, "misuse-p2", NULL), MNEMO_OK,
			"mnemo_part_tombstone, compacted_at NULL");
	is_code(st, mnemo_checkpoint_add(st, SID, "misuse-cp", false, NULL), MNEMO_OK,
			"mnemo_checkpoint_add, out NULL");
	is_code(st, mnemo_run_claim(st, SID, "misuse-r", NULL), MNEMO_OK, "mnemo_run_claim, out NULL");
	is_code(st, mnemo_run_complete(st, SID, "misuse-r", NULL), MNEMO_OK, "mnemo_run_complete, out NULL");
	is_code(st, mnemo_pending_set(st, SID, "{\"ask\": 1}", NULL), MNEMO_OK,
			"mnemo_pending_set, run id NULL");
	is_code(st, mnemo_pending_clear(st, SID, NULL), MNEMO_OK, "mnemo_pending_clear, cleared NULL");
	is_code(st, mnemo_state_update(st, SID, "{\"k\": 1}", NULL), MNEMO_OK,
			"mnemo_state_update, merged NULL");
	is_code(st, mnemo_prune_tool_outputs(st, SID, NULL, NULL), MNEMO_OK,
			"mnemo_prune_tool_outputs, options and pruned NULL");
	file.content_id = "misuse-c";
	file.path = "misuse.txt";
	is_code(st, mnemo_file_ref_store(st, &file, NULL), MNEMO_OK, "mnemo_file_ref_store, out NULL");
	msg.id = "misuse-sw";
	msg.is_summary = true;
	is_code(st, mnemo_message_append(st, SID, &msg, NULL), MNEMO_OK, "a summary message to swap in");
	is_code(st, mnemo_context_swap(st, SID, (const char *const[]) {MID}, 1, "misuse-sw", NULL),
			MNEMO_OK, "mnemo_context_swap, position NULL");
	summary.summary_id = "misuse-sum";
	summary.content = "the first two";
	summary.remove_item_ids = items;
	summary.n_remove = 1;
	is_code(st, mnemo_summary_commit(st, SID, &summary, NULL, NULL), MNEMO_OK,
			"mnemo_summary_commit, position and summary_id_out NULL");
	is_code(st, mnemo_session_resume(st, SID, "misuse-cp", NULL), MNEMO_OK,
			"mnemo_session_resume, discarded NULL");
	new_session(st, "misuse-purged");
	is_code(st, mnemo_session_purge(st, "misuse-purged", NULL), MNEMO_OK,
			"mnemo_session_purge, deleted NULL");
	{
		mnemo_session *s = NULL;

		is_code(st, mnemo_session_create(st, NULL, &s), MNEMO_OK, "mnemo_session_create, spec NULL");
		ok(s != NULL && strncmp(s->id, "sess_", 5) == 0, "a sess_ id was made (%s)", s ? s->id : "");
		mnemo_session_free(s);
	}
}

/* Every _free of NULL does nothing (run under ASan: no report either). */
static void
test_free_null(void)
{
	mnemo_session_free(NULL);
	mnemo_sessions_free(NULL);
	mnemo_message_free(NULL);
	mnemo_messages_free(NULL);
	mnemo_part_free(NULL);
	mnemo_parts_free(NULL);
	mnemo_context_items_free(NULL);
	mnemo_context_free(NULL);
	mnemo_summary_nodes_free(NULL);
	mnemo_expansion_free(NULL);
	mnemo_checkpoint_free(NULL);
	mnemo_checkpoints_free(NULL);
	mnemo_run_free(NULL);
	mnemo_pending_free(NULL);
	mnemo_state_free(NULL);
	mnemo_search_hits_free(NULL);
	mnemo_file_ref_free(NULL);
	mnemo_file_result_free(NULL);
	mnemo_store_close(NULL);
	ok(1, "every _free of NULL, and mnemo_store_close(NULL), does nothing");
}

/*
 * The handle's error: a failure sets code, message and SQLSTATE; the next
 * failure replaces all three; a success clears them; a refusal before
 * sending leaves no SQLSTATE from the failure before it.
 */
static void
test_error_lifecycle(mnemo_store *st)
{
	mnemo_session *s = NULL;
	mnemo_messages *list = NULL;
	char		first[256];

	is_err(st, mnemo_session_get(st, "misuse-none", &s), MNEMO_ERR_SESSION_NOT_FOUND, "MN001",
		   "get of a missing session");
	ok(strstr(mnemo_errmsg(st), "misuse-none") != NULL, "the message names the id (%s)",
	   mnemo_errmsg(st));
	snprintf(first, sizeof(first), "%s", mnemo_errmsg(st));

	is_err(st, mnemo_message_get(st, SID, "misuse-no-msg", &(mnemo_message *) {NULL}),
		   MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "the next failure");
	ok(strcmp(mnemo_errmsg(st), first) != 0 && strstr(mnemo_errmsg(st), "misuse-no-msg") != NULL,
	   "replaces the message (%s)", mnemo_errmsg(st));

	refused(st, mnemo_session_get(st, NULL, &s), "a refusal after a server error");

	is_code(st, mnemo_messages_get(st, SID, NULL, false, &list), MNEMO_OK, "a success");
	ok(mnemo_errcode(st) == MNEMO_OK && *mnemo_errmsg(st) == '\0' && *mnemo_sqlstate(st) == '\0',
	   "clears code, message and SQLSTATE");
	mnemo_messages_free(list);
	ok(s == NULL, "failed calls left *out alone");

	/* a subscription id is a success too */
	(void) mnemo_session_get(st, "misuse-none", &s);
	ok(mnemo_event_subscribe(st, MNEMO_EVENT_ANY, on_event, NULL) > 0 &&
	   mnemo_errcode(st) == MNEMO_OK && *mnemo_errmsg(st) == '\0',
	   "mnemo_event_subscribe clears the error before it");
}

int
main(void)
{
	mnemo_store *st;
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;

	test_null_handle();
	test_free_null();
	st = open_store(NULL);
	new_session(st, SID);
	msg.role = "user";
	msg.id = MID;
	part.type = "text";
	part.id = PID;
	part.text = "one";
	msg.parts = &part;
	msg.n_parts = 1;
	if (mnemo_message_append(st, SID, &msg, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
	test_null_arguments(st);
	test_optional_outs(st);
	test_error_lifecycle(st);
	mnemo_store_close(st);
	return tap_done();
}
