/*
 * t_api.c
 *		The public header's contracts that no other test holds: every
 *		options and spec struct's _INIT macro gives the defaults its comment
 *		promises, and calls made with them behave as with NULL options; the
 *		turn's cancel is named for the turn, and its 0.1 name still links.
 */
#include <stdio.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/* Whether the object's bytes are all zero. */
static bool
all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

static void
test_init_values(void)
{
	mnemo_new_session session = MNEMO_NEW_SESSION_INIT;
	mnemo_session_filter filter = MNEMO_SESSION_FILTER_INIT;
	mnemo_new_message message = MNEMO_NEW_MESSAGE_INIT;
	mnemo_part_status status = MNEMO_PART_STATUS_INIT;
	mnemo_new_summary summary = MNEMO_NEW_SUMMARY_INIT;
	mnemo_new_file_ref file = MNEMO_NEW_FILE_REF_INIT;
	mnemo_import_options import = MNEMO_IMPORT_OPTIONS_INIT;
	mnemo_turn_options turn = MNEMO_TURN_OPTIONS_INIT;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_prune_options prune = MNEMO_PRUNE_OPTIONS_INIT;

	/* zero is each field's default in these (the header says so per field) */
	ok(all_zero(&session, sizeof(session)), "MNEMO_NEW_SESSION_INIT: every field its default");
	ok(all_zero(&filter, sizeof(filter)), "MNEMO_SESSION_FILTER_INIT: active, first 100");
	ok(all_zero(&message, sizeof(message)), "MNEMO_NEW_MESSAGE_INIT: nothing set");
	ok(all_zero(&status, sizeof(status)), "MNEMO_PART_STATUS_INIT: changes nothing");
	ok(all_zero(&summary, sizeof(summary)), "MNEMO_NEW_SUMMARY_INIT: new id, leaf, level 1");
	ok(all_zero(&file, sizeof(file)), "MNEMO_NEW_FILE_REF_INIT: nothing set");
	ok(all_zero(&import, sizeof(import)), "MNEMO_IMPORT_OPTIONS_INIT: no callbacks");
	ok(all_zero(&turn, sizeof(turn)), "MNEMO_TURN_OPTIONS_INIT: every field its default");

	/* the two whose defaults are not zero */
	is_int(part.token_estimate, -1, "MNEMO_NEW_PART_INIT: the server estimates tokens");
	ok(part.type == NULL && part.content == NULL && part.id == NULL,
	   "MNEMO_NEW_PART_INIT: no type, content or id");
	is_int(prune.protect_tokens, -1, "MNEMO_PRUNE_OPTIONS_INIT: protect_tokens default");
	is_int(prune.minimum_tokens, -1, "MNEMO_PRUNE_OPTIONS_INIT: minimum_tokens default");
	ok(prune.protected_tools == NULL && prune.n_protected_tools == 0,
	   "MNEMO_PRUNE_OPTIONS_INIT: the default protected tools");
}

/* Calls made with the _INIT values do what calls with NULL options do. */
static void
test_init_calls(mnemo_store *st)
{
	mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;
	mnemo_session_filter filter = MNEMO_SESSION_FILTER_INIT;
	mnemo_prune_options prune = MNEMO_PRUNE_OPTIONS_INIT;
	mnemo_session *s = NULL;
	mnemo_sessions *with = NULL,
			   *without = NULL;
	int			pruned_with = -1,
				pruned_without = -1;

	spec.id = "api-init";
	is_int(mnemo_session_create(st, &spec, &s), MNEMO_OK,
		   "a session made from MNEMO_NEW_SESSION_INIT and an id");
	if (s != NULL)
	{
		is_str(s->agent, "default", "its agent is the default");
		is_str(s->model_id, "", "its model_id is the default");
		ok(s->is_active, "it is active");
	}
	mnemo_session_free(s);

	is_int(mnemo_session_list(st, &filter, &with), MNEMO_OK, "list with MNEMO_SESSION_FILTER_INIT");
	is_int(mnemo_session_list(st, NULL, &without), MNEMO_OK, "list with NULL");
	if (with != NULL && without != NULL)
	{
		bool		same = with->count == without->count;

		for (size_t i = 0; same && i < with->count; i++)
			same = strcmp(with->items[i].id, without->items[i].id) == 0;
		ok(same && with->count >= 1, "the same sessions (%zu)", with->count);
	}
	mnemo_sessions_free(with);
	mnemo_sessions_free(without);

	is_int(mnemo_prune_tool_outputs(st, "api-init", &prune, &pruned_with), MNEMO_OK,
		   "prune with MNEMO_PRUNE_OPTIONS_INIT");
	is_int(mnemo_prune_tool_outputs(st, "api-init", NULL, &pruned_without), MNEMO_OK,
		   "prune with NULL options");
	is_int(pruned_with, pruned_without, "prunes what the defaults prune");
}

static void
test_cancel_names(mnemo_store *st)
{
	/* no turn: forgotten when the next turn begins, and no error now */
	mnemo_turn_cancel(NULL);
	mnemo_turn_cancel(st);
	is_int(mnemo_errcode(st), MNEMO_OK, "mnemo_turn_cancel with no turn leaves no error");

	/* programs built against 0.1 call it by its old name */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	mnemo_store_cancel(st);
#pragma GCC diagnostic pop
	is_int(mnemo_errcode(st), MNEMO_OK, "mnemo_store_cancel, its deprecated 0.1 name, still links");
}

int
main(void)
{
	mnemo_store *st;

	test_init_values();
	st = open_store(NULL);
	test_init_calls(st);
	test_cancel_names(st);
	mnemo_store_close(st);
	return tap_done();
}
