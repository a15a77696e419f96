/*
 * t_parts.c
 *		Parts through libmnemo: streaming appends, tool status changes,
 *		tombstones, and reading a message's parts.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

static mnemo_parts *
parts_of(mnemo_store *st, const char *message_id)
{
	mnemo_parts *parts = NULL;

	if (mnemo_parts_get(st, "p1", message_id, &parts) != MNEMO_OK)
		bail_out("parts_get %s: %s", message_id, mnemo_errmsg(st));
	return parts;
}

static void
test_streaming(mnemo_store *st)
{
	mnemo_new_message msg = {0};
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_parts *parts;
	int			index = -1;
	int			rc;

	new_session(st, "p1");
	msg.role = "assistant";
	msg.id = "a1";
	if (mnemo_message_append(st, "p1", &msg, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));

	parts = parts_of(st, "a1");
	is_int(parts->count, 0, "an assistant row written before streaming has no parts");
	mnemo_parts_free(parts);

	part.type = "step_start";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_int(rc, MNEMO_OK, "stream a step_start part");
	is_int(index, 0, "at part_index 0");

	part.type = "text";
	part.text = "Let me look.";
	part.id = "p-text";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_int(rc, MNEMO_OK, "stream a text part with an id");
	is_int(index, 1, "at part_index 1");

	part = (mnemo_new_part) MNEMO_NEW_PART_INIT;
	part.type = "tool";
	part.id = "p-tool";
	part.tool_name = "grep";
	part.tool_call_id = "call_7";
	part.tool_input = "{\"pattern\": \"TODO\"}";
	rc = mnemo_part_append(st, "p1", "a1", &part, NULL);
	is_int(rc, MNEMO_OK, "stream a tool part, part_index NULL");

	part = (mnemo_new_part) MNEMO_NEW_PART_INIT;
	part.content = "{\"type\": \"text\", \"id\": \"p-whole\", \"text\": \"given whole\", "
		"\"token_estimate\": 11}";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_int(rc, MNEMO_OK, "stream a part given as a whole JSON object");
	is_int(index, 3, "at part_index 3");

	{
		/* deeper than json-c's default limit of 32 */
		char		deep[256] = "{\"type\": \"patch\", \"d\": ";
		size_t		len = strlen(deep);

		memset(deep + len, '[', 60);
		memset(deep + len + 60, ']', 60);
		strcpy(deep + len + 120, "}");
		part = (mnemo_new_part) MNEMO_NEW_PART_INIT;
		part.content = deep;
		rc = mnemo_part_append(st, "p1", "a1", &part, &index);
		is_int(rc, MNEMO_OK, "a part nested 60 deep");
		is_int(index, 4, "at part_index 4");
	}

	parts = parts_of(st, "a1");
	is_int(parts->count, 5, "five parts");
	if (parts->count == 5)
	{
		int			i;
		int			in_order = 1;

		for (i = 0; i < 5; i++)
			if (parts->items[i].part_index != i || strcmp(parts->items[i].message_id, "a1") != 0)
				in_order = 0;
		ok(in_order, "in part_index order, each naming its message");
		is_str(parts->items[0].type, "step_start", "step_start");
		ok(parts->items[0].text == NULL, "... without text");
		is_str(parts->items[1].id, "p-text", "the given id");
		is_str(parts->items[1].text, "Let me look.", "the text");
		is_int(parts->items[1].token_estimate, 3, "estimated by the server (12 chars)");
		is_str(parts->items[2].tool_name, "grep", "tool_name");
		is_str(parts->items[2].tool_call_id, "call_7", "tool_call_id");
		is_str(parts->items[2].tool_state, "pending", "tool_state defaults to pending");
		ok(parts->items[2].tool_output == NULL, "no output yet");
		is_int(parts->items[2].started_at, 0, "not started");
		is_str(parts->items[3].id, "p-whole", "the whole object's id");
		is_str(parts->items[3].text, "given whole", "its text");
		is_int(parts->items[3].token_estimate, 11, "its token_estimate");
		ok(strstr(parts->items[4].content, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]") != NULL,
		   "stored whole");
	}
	mnemo_parts_free(parts);
	mnemo_parts_free(NULL);

	/* errors */
	index = 42;
	part = (mnemo_new_part) MNEMO_NEW_PART_INIT;
	part.type = "text";
	part.text = "x";
	rc = mnemo_part_append(st, "p1", "ghost", &part, &index);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "append to a missing message");
	part.id = "p-text";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "a part id that exists");
	part.id = NULL;
	part.type = "video";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an unknown part type");
	part.type = NULL;
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "no type and no content");
	part.type = "text";
	part.token_estimate = -5;
	part.content = "{\"type\": \"text\", \"text\": \"t\", \"token_estimate\": -5}";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a negative token_estimate in content");
	part.content = "not json";
	rc = mnemo_part_append(st, "p1", "a1", &part, &index);
	is_err(st, rc, MNEMO_ERR_FORMAT, "", "content that is not JSON");
	rc = mnemo_part_append(st, "p1", NULL, &part, &index);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL message id");
	rc = mnemo_part_append(st, "p1", "a1", NULL, &index);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL part");
	is_int(index, 42, "*part_index untouched by failures");
	parts = parts_of(st, "a1");
	is_int(parts->count, 5, "no failed append left a part behind");
	mnemo_parts_free(parts);
}

static void
test_status(mnemo_store *st)
{
	mnemo_part_status status = {0};
	mnemo_parts *parts;
	int			rc;

	status.tool_state = "running";
	status.started_at = 1700000000000LL;
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_int(rc, MNEMO_OK, "mark the tool running");
	parts = parts_of(st, "a1");
	is_str(parts->items[2].tool_state, "running", "tool_state running");
	is_int(parts->items[2].started_at, 1700000000000LL, "started_at");
	is_int(parts->items[2].completed_at, 0, "not completed");
	mnemo_parts_free(parts);

	memset(&status, 0, sizeof(status));
	status.tool_state = "completed";
	status.completed_at = 1700000000250LL;
	status.output = "a.c:3: TODO";
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_int(rc, MNEMO_OK, "complete it with its output");
	parts = parts_of(st, "a1");
	is_str(parts->items[2].tool_state, "completed", "tool_state completed");
	is_int(parts->items[2].started_at, 1700000000000LL, "started_at kept (0 leaves it)");
	is_int(parts->items[2].completed_at, 1700000000250LL, "completed_at");
	is_str(parts->items[2].tool_output, "a.c:3: TODO", "the output is merged into the content");
	ok(strstr(parts->items[2].content, "\"output\": \"a.c:3: TODO\"") != NULL,
	   "... visible in the content");
	ok(strstr(parts->items[2].content, "\"pattern\": \"TODO\"") != NULL, "the input stays");
	mnemo_parts_free(parts);

	/* written once: a completed part takes no error (MN005), and keeps all */
	memset(&status, 0, sizeof(status));
	status.tool_state = "error";
	status.error_message = "permission denied";
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_err(st, rc, MNEMO_ERR_IMMUTABLE_FIELD, "MN005", "an error after completion");
	parts = parts_of(st, "a1");
	is_str(parts->items[2].tool_state, "completed", "tool_state still completed");
	ok(parts->items[2].error_message == NULL, "no error_message");
	is_str(parts->items[2].tool_output, "a.c:3: TODO", "output kept");
	mnemo_parts_free(parts);

	memset(&status, 0, sizeof(status));
	status.tool_state = "finished";
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an unknown tool_state");
	memset(&status, 0, sizeof(status));
	status.started_at = -1;
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a negative time");
	memset(&status, 0, sizeof(status));
	status.output = "x";
	rc = mnemo_part_update_status(st, "p1", "p-text", &status);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "tool fields on a text part");
	status.output = NULL;
	status.tool_state = "completed";
	rc = mnemo_part_update_status(st, "p1", "p-text", &status);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a tool_state on a text part");
	rc = mnemo_part_update_status(st, "p1", "ghost", &status);
	is_err(st, rc, MNEMO_ERR_PART_NOT_FOUND, "MN003", "a missing part");
	rc = mnemo_part_update_status(st, "p1", NULL, &status);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL part id");
	rc = mnemo_part_update_status(st, "p1", "p-tool", NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL status");
	parts = parts_of(st, "a1");
	is_str(parts->items[2].tool_state, "completed", "failed updates changed nothing");
	mnemo_parts_free(parts);
}

static void
test_tombstone(mnemo_store *st)
{
	mnemo_part_status status = {0};
	mnemo_parts *parts;
	int64_t		first = 0;
	int64_t		again = 0;
	int64_t		untouched = 7;
	int			rc;

	rc = mnemo_part_tombstone(st, "p1", "p-tool", &first);
	is_int(rc, MNEMO_OK, "tombstone the tool part");
	ok(first > 1600000000000LL, "*compacted_at is now, in unix ms");
	rc = mnemo_part_tombstone(st, "p1", "p-tool", &again);
	is_int(rc, MNEMO_OK, "tombstone it again");
	is_int(again, first, "the second call returns the first time");
	rc = mnemo_part_tombstone(st, "p1", "p-tool", NULL);
	is_int(rc, MNEMO_OK, "compacted_at may be NULL");

	status.compacted_at = first + 1000;
	rc = mnemo_part_update_status(st, "p1", "p-tool", &status);
	is_int(rc, MNEMO_OK, "update_status with a later compacted_at");

	parts = parts_of(st, "a1");
	is_int(parts->items[2].compacted_at, first, "the tombstone is visible and never moves");
	is_str(parts->items[2].tool_output, "a.c:3: TODO", "the output stays stored");
	is_int(parts->items[1].compacted_at, 0, "other parts stay live");
	mnemo_parts_free(parts);

	status.compacted_at = 1700000000000LL;
	rc = mnemo_part_update_status(st, "p1", "p-text", &status);
	is_int(rc, MNEMO_OK, "tombstone a text part through update_status");
	parts = parts_of(st, "a1");
	is_int(parts->items[1].compacted_at, 1700000000000LL, "its compacted_at as given");
	mnemo_parts_free(parts);

	rc = mnemo_part_tombstone(st, "p1", "ghost", &untouched);
	is_err(st, rc, MNEMO_ERR_PART_NOT_FOUND, "MN003", "tombstone a missing part");
	rc = mnemo_part_tombstone(st, "p1", NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "tombstone NULL");
	is_int(untouched, 7, "*compacted_at untouched by failures");
}

static void
test_reads_and_inactive(mnemo_store *st)
{
	mnemo_parts *untouched = NULL;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	int			rc;

	rc = mnemo_parts_get(st, "p1", "ghost", &untouched);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "parts of a missing message");
	rc = mnemo_parts_get(st, "p1", NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "parts of NULL");
	ok(untouched == NULL, "*out untouched");

	if (mnemo_session_soft_delete(st, "p1") != MNEMO_OK)
		bail_out("soft delete: %s", mnemo_errmsg(st));
	part.type = "text";
	part.text = "after the end";
	rc = mnemo_part_append(st, "p1", "a1", &part, NULL);
	is_err(st, rc, MNEMO_ERR_SESSION_INACTIVE, "MN012", "stream into an inactive session");
}

/*
 * jsonb sorts an object's keys, shorter first: a tool input in another
 * order keeps its text in "input_text", and reads back as written, so it
 * goes back to the provider as the model wrote it.
 */
static void
test_input_order(mnemo_store *st)
{
	static const char *const inputs[] = {
		"{\"path\": \"a.c\", \"limit\": 5, \"nested\": {\"zz\": 1, \"a\": 2}}",
		"{\"a\": 1, \"bb\": {\"c\": 2}, \"ccc\": [{\"d\": 1, \"ee\": 2}]}",
		"{\"b\": 1, \"a\": 2}",
	};
	mnemo_new_message msg = {0};
	mnemo_parts *parts;

	msg.role = "assistant";
	msg.id = "a-order";
	if (mnemo_message_append(st, "p1", &msg, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
	for (size_t i = 0; i < 3; i++)
	{
		mnemo_new_part part = MNEMO_NEW_PART_INIT;

		part.type = "tool";
		part.tool_name = "t";
		part.tool_call_id = i == 0 ? "c0" : i == 1 ? "c1" : "c2";
		part.tool_input = inputs[i];
		if (mnemo_part_append(st, "p1", "a-order", &part, NULL) != MNEMO_OK)
			bail_out("part_append: %s", mnemo_errmsg(st));
	}
	parts = parts_of(st, "a-order");
	is_int(parts->count, 3, "three tool parts");
	if (parts->count == 3)
	{
		is_str(parts->items[0].tool_input, inputs[0],
			   "an input whose nested keys jsonb reorders reads back as written");
		ok(strstr(parts->items[0].content, "\"input_text\": ") != NULL, "... kept as input_text");
		is_str(parts->items[1].tool_input, inputs[1], "an input in jsonb's order reads back the same");
		ok(strstr(parts->items[1].content, "input_text") == NULL, "... with no copy");
		is_str(parts->items[2].tool_input, inputs[2], "two keys of one length, not bytewise: as written");
	}
	mnemo_parts_free(parts);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_streaming(st);
	test_status(st);
	test_tombstone(st);
	test_input_order(st);
	test_reads_and_inactive(st);
	mnemo_store_close(st);
	return tap_done();
}
