/*
 * t_context.c
 *		The context view through libmnemo: its items, the assembled context
 *		and its report for a budget, and the swap (with a second handle
 *		losing the race for the same span).
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

static mnemo_context_items *
items_of(mnemo_store *st, const char *session_id)
{
	mnemo_context_items *items = NULL;

	if (mnemo_context_items_get(st, session_id, &items) != MNEMO_OK)
		bail_out("context_items_get %s: %s", session_id, mnemo_errmsg(st));
	return items;
}

/* The session c1: two user turns, an ls tool call and an answer. */
static void
fill(mnemo_store *st)
{
	mnemo_new_part parts[4] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT};
	mnemo_new_message msgs[4] = {{0}};
	const char *roles[4] = {"user", "assistant", "user", "assistant"};
	const char *ids[4] = {"u1", "r1", "u2", "r2"};
	int			i;

	new_session(st, "c1");
	parts[0].type = "text";
	parts[0].text = "Which files are in /etc?";
	parts[1].type = "tool";
	parts[1].id = "r1-tool";
	parts[1].tool_name = "ls";
	parts[1].tool_call_id = "t1";
	parts[1].tool_state = "completed";
	parts[1].tool_input = "{\"path\": \"/etc\"}";
	parts[1].tool_output = "hosts passwd";
	parts[2].type = "text";
	parts[2].text = "And what is in hosts?";
	parts[3].type = "text";
	parts[3].text = "127.0.0.1 localhost, and a few more lines of the usual kind.";
	for (i = 0; i < 4; i++)
	{
		msgs[i].role = roles[i];
		msgs[i].id = ids[i];
		msgs[i].n_parts = 1;
		msgs[i].parts = &parts[i];
	}
	if (mnemo_messages_append(st, "c1", msgs, 4, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
}

static void
append_summary(mnemo_store *st, const char *id, const char *text)
{
	mnemo_new_message msg = {0};

	msg.role = "assistant";
	msg.id = id;
	msg.is_summary = true;
	append_text_message(st, "c1", &msg, text);
}

static void
test_items_and_build(mnemo_store *st)
{
	mnemo_context_items *items;
	mnemo_context_items *untouched_items = NULL;
	mnemo_context *ctx = NULL;
	mnemo_context *untouched = NULL;
	mnemo_context_budget report;
	mnemo_context_budget kept;
	int64_t		total = 0;
	int			last_tokens;
	size_t		i;
	int			rc;

	items = items_of(st, "c1");
	is_int(items->count, 4, "four context items");
	if (items->count == 4)
	{
		is_str(items->items[0].item_type, "message", "item_type message");
		is_str(items->items[0].item_id, "u1", "u1 first");
		is_int(items->items[0].position, 1, "at position 1");
		is_str(items->items[3].item_id, "r2", "r2 last");
		is_int(items->items[3].position, 4, "at position 4");
	}
	mnemo_context_items_free(items);
	mnemo_context_items_free(NULL);

	rc = mnemo_context_build(st, "c1", 100000, &ctx);
	is_int(rc, MNEMO_OK, "build the context for a large budget");
	if (ctx == NULL || ctx->count != 4)
		bail_out("expected four entries");
	is_int(ctx->items[0].position, 1, "position 1");
	is_str(ctx->items[0].item_type, "message", "item_type");
	is_str(ctx->items[0].item_id, "u1", "item_id");
	is_str(ctx->items[0].role, "user", "role");
	is_str(ctx->items[0].content, "Which files are in /etc?", "a text part renders verbatim");
	is_int(ctx->items[0].tokens, mnemo_estimate_tokens(ctx->items[0].content),
		   "tokens = estimate_tokens(content)");
	is_str(ctx->items[1].role, "assistant", "the tool call's role");
	ok(strstr(ctx->items[1].content, "[Tool: ls]") != NULL &&
	   strstr(ctx->items[1].content, "Output: hosts passwd") != NULL &&
	   strstr(ctx->items[1].content, "[/Tool]") != NULL,
	   "a live tool part renders its call and output");
	for (i = 0; i < ctx->count; i++)
		total += ctx->items[i].tokens;
	last_tokens = ctx->items[3].tokens;
	mnemo_context_free(ctx);
	ctx = NULL;

	rc = mnemo_context_report(st, "c1", 100000, &report);
	is_int(rc, MNEMO_OK, "report for the large budget");
	is_int(report.budget_tokens, 100000, "budget_tokens echoed");
	is_int(report.summary_tokens, 0, "no summaries");
	is_int(report.included_items, 4, "every item included");
	is_int(report.included_tokens, total, "included_tokens = the entries' tokens");
	is_int(report.omitted_items, 0, "nothing omitted");
	is_int(report.omitted_tokens, 0, "no tokens omitted");

	/* a budget that fits only the newest message */
	rc = mnemo_context_build(st, "c1", last_tokens, &ctx);
	is_int(rc, MNEMO_OK, "build for a budget of the last message's tokens");
	is_int(ctx ? ctx->count : 0, 1, "one entry");
	is_str(ctx && ctx->count ? ctx->items[0].item_id : NULL, "r2", "the newest message");
	mnemo_context_free(ctx);
	ctx = NULL;
	rc = mnemo_context_report(st, "c1", last_tokens, &report);
	is_int(rc, MNEMO_OK, "report for that budget");
	is_int(report.included_items, 1, "one included");
	is_int(report.included_tokens, last_tokens, "its tokens");
	is_int(report.omitted_items, 3, "three omitted: nothing dropped silently");
	is_int(report.omitted_tokens, total - last_tokens, "their tokens");

	rc = mnemo_context_build(st, "c1", 0, &ctx);
	is_int(rc, MNEMO_OK, "build for budget 0");
	is_int(ctx ? ctx->count : 99, 0, "an empty context");
	mnemo_context_free(ctx);
	ctx = NULL;

	/* a tombstoned output renders as its marker */
	rc = mnemo_part_tombstone(st, "c1", "r1-tool", NULL);
	is_int(rc, MNEMO_OK, "tombstone the tool output");
	rc = mnemo_context_build(st, "c1", 100000, &ctx);
	ok(rc == MNEMO_OK && ctx && ctx->count == 4 &&
	   strncmp(ctx->items[1].content, "[Tool 'ls' output compacted at ", 31) == 0,
	   "a tombstoned tool part renders as the compaction marker (%s)",
	   ctx && ctx->count == 4 ? ctx->items[1].content : "?");
	mnemo_context_free(ctx);
	ctx = NULL;

	/* errors */
	memset(&kept, 0x5a, sizeof(kept));
	report = kept;
	rc = mnemo_context_build(st, "c1", -1, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "build with a negative budget");
	rc = mnemo_context_report(st, "c1", -1, &report);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "report with a negative budget");
	rc = mnemo_context_build(st, "nope", 10, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "build for a missing session");
	rc = mnemo_context_report(st, "nope", 10, &report);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "report for a missing session");
	rc = mnemo_context_items_get(st, "nope", &untouched_items);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "items of a missing session");
	rc = mnemo_context_build(st, NULL, 10, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "build for NULL");
	rc = mnemo_context_report(st, "c1", 10, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "report into NULL");
	rc = mnemo_context_items_get(st, NULL, &untouched_items);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "items of NULL");
	ok(untouched == NULL && untouched_items == NULL, "*out untouched by failures");
	ok(memcmp(&report, &kept, sizeof(report)) == 0, "the report struct untouched by failures");
}

static void
test_swap(mnemo_store *st)
{
	const char *span[] = {"u1", "r1"};
	const char *tail[] = {"u2", "r2"};
	const char *with_null[] = {"u2", NULL};
	mnemo_context_items *items;
	mnemo_context *ctx = NULL;
	mnemo_store *other = open_store(NULL);
	int64_t		position = 0;
	int64_t		untouched = -7;
	int			rc;

	append_summary(st, "sum-a", "The user listed /etc: hosts, passwd.");
	items = items_of(st, "c1");
	is_int(items->count, 4, "a summary message does not join the view by itself");
	mnemo_context_items_free(items);

	rc = mnemo_context_swap(st, "c1", span, 2, "sum-a", &position);
	is_int(rc, MNEMO_OK, "swap u1, r1 for the summary");
	is_int(position, 1, "at the smallest position they held");
	items = items_of(st, "c1");
	is_int(items->count, 3, "three items");
	if (items->count == 3)
	{
		is_str(items->items[0].item_type, "summary", "a summary item");
		is_str(items->items[0].item_id, "sum-a", "sum-a");
		is_int(items->items[0].position, 1, "at position 1");
		is_str(items->items[1].item_id, "u2", "u2 keeps its place");
		is_int(items->items[1].position, 3, "at position 3");
	}
	mnemo_context_items_free(items);
	rc = mnemo_context_build(st, "c1", 100000, &ctx);
	ok(rc == MNEMO_OK && ctx && ctx->count == 3 &&
	   strcmp(ctx->items[0].item_type, "summary") == 0 &&
	   strcmp(ctx->items[0].content, "The user listed /etc: hosts, passwd.") == 0,
	   "the assembled context starts with the summary");
	mnemo_context_free(ctx);

	/* the same span again: it is gone */
	append_summary(st, "sum-b", "Another take.");
	rc = mnemo_context_swap(st, "c1", span, 2, "sum-b", &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "swap items no longer in context");

	/* two compactors over the same span, on two connections: one wins */
	append_summary(st, "sum-c", "The user asked about hosts.");
	rc = mnemo_context_swap(st, "c1", tail, 2, "sum-c", &position);
	is_int(rc, MNEMO_OK, "the first handle's swap wins");
	is_int(position, 3, "at position 3");
	rc = mnemo_context_swap(other, "c1", tail, 2, "sum-b", &untouched);
	is_err(other, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "the second handle's swap loses");
	ok(strstr(mnemo_errmsg(other), "u2") != NULL || strstr(mnemo_errmsg(other), "context") != NULL,
	   "the message says why: %s", mnemo_errmsg(other));
	is_int(mnemo_errcode(st), MNEMO_OK, "the winner's handle has no error");
	items = items_of(st, "c1");
	is_int(items->count, 2, "the loser changed nothing: two summaries");
	ok(items->count == 2 && strcmp(items->items[1].item_id, "sum-c") == 0, "the winner's summary");
	mnemo_context_items_free(items);

	rc = mnemo_context_swap(st, "c1", NULL, 0, "sum-b", &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "swap an empty list");
	rc = mnemo_context_swap(st, "c1", (const char *const[]) {"sum-a"}, 1, "u1", &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "swap in a message that is not a summary");
	rc = mnemo_context_swap(st, "nope", span, 2, "sum-b", &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "swap in a missing session");
	rc = mnemo_context_swap(st, "c1", with_null, 2, "sum-b", &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL item id");
	rc = mnemo_context_swap(st, "c1", span, 2, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL summary id");
	rc = mnemo_context_swap(st, "c1", NULL, 2, "sum-b", &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "NULL ids with n 2");
	is_int(untouched, -7, "*position untouched by failures");

	rc = mnemo_context_swap(st, "c1", (const char *const[]) {"sum-a", "sum-c"}, 2, "sum-b", NULL);
	is_int(rc, MNEMO_OK, "swap summaries for a summary, position NULL");
	items = items_of(st, "c1");
	ok(items->count == 1 && strcmp(items->items[0].item_id, "sum-b") == 0 &&
	   items->items[0].position == 1, "one summary left, at position 1");
	mnemo_context_items_free(items);
	mnemo_store_close(other);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	fill(st);
	test_items_and_build(st);
	test_swap(st);
	mnemo_store_close(st);
	return tap_done();
}
