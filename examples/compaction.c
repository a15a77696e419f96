/*
 * compaction.c: what a compaction engine does, by hand.  Three messages (a
 * question, a tool call with its output, a follow-up) go in with one call;
 * a summary then replaces the first two in the context view, in one atomic
 * commit; the log keeps everything, which an expansion of the summary and a
 * search of the history show.
 *
 *   cc -o compaction compaction.c $(pkg-config --cflags --libs mnemo)
 *   PGDATABASE=app ./compaction
 *
 * It checks what it gets back and exits 1 on any surprise.
 */
#include <stdio.h>
#include <string.h>
#include <mnemo.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "compaction.c:%d: check failed: %s\n", __LINE__, #cond); \
			goto done; \
		} \
	} while (0)

int
main(void)
{
	mnemo_store *st;
	mnemo_session *session = NULL;
	mnemo_context *ctx = NULL;
	mnemo_expansion *exp = NULL;
	mnemo_search_hits *hits = NULL;
	mnemo_new_part q1 = MNEMO_NEW_PART_INIT,
				ls = MNEMO_NEW_PART_INIT,
				q2 = MNEMO_NEW_PART_INIT;
	mnemo_new_message msgs[3] = {
		{.role = "user", .n_parts = 1, .parts = &q1},
		{.role = "assistant", .n_parts = 1, .parts = &ls},
		{.role = "user", .n_parts = 1, .parts = &q2},
	};
	mnemo_message_ref refs[3];
	const char *covered[2];
	mnemo_new_summary summary = {.content = "The user listed /etc: hosts, passwd.",
								 .token_count = 9, .remove_item_ids = covered,
								 .n_remove = 2, .kind = "leaf", .level = 1};
	mnemo_context_budget report;
	char		summary_id[MNEMO_ID_MAX + 1];
	int64_t		position = 0;
	int			status = 1;

	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
	{
		fprintf(stderr, "cannot open the store: %s\n", st ? mnemo_errmsg(st) : "out of memory");
		mnemo_store_close(st);
		return 1;
	}
	CHECK(mnemo_session_create(st, NULL, &session) == MNEMO_OK);

	q1.type = "text";
	q1.text = "Which files are in /etc?";
	ls.type = "tool";
	ls.tool_name = "ls";
	ls.tool_call_id = "call_1";
	ls.tool_input = "{\"path\": \"/etc\"}";
	ls.tool_state = "completed";
	ls.tool_output = "hosts passwd";
	q2.type = "text";
	q2.text = "And what is in hosts?";
	/* one call, one transaction, consecutive seqs */
	CHECK(mnemo_messages_append(st, session->id, msgs, 3, refs) == MNEMO_OK);
	CHECK(refs[0].seq == 1 && refs[1].seq == 2 && refs[2].seq == 3);

	/* a leaf summary over the first two messages */
	covered[0] = refs[0].id;
	covered[1] = refs[1].id;
	CHECK(mnemo_summary_commit(st, session->id, &summary, &position, summary_id) == MNEMO_OK);
	printf("summary %s at position %lld\n", summary_id, (long long) position);
	CHECK(position == 1);

	/* the same commit again loses: those items are no longer in context */
	CHECK(mnemo_summary_commit(st, session->id, &summary, NULL, NULL) == MNEMO_ERR_INVALID_SWAP);

	CHECK(mnemo_context_build(st, session->id, 1000, &ctx) == MNEMO_OK);
	for (size_t i = 0; i < ctx->count; i++)
		printf("%lld %s %s (%d tokens): %s\n", (long long) ctx->items[i].position,
			   ctx->items[i].item_type, ctx->items[i].role, ctx->items[i].tokens,
			   ctx->items[i].content);
	CHECK(ctx->count == 2);
	CHECK(strcmp(ctx->items[0].item_type, "summary") == 0);
	CHECK(strcmp(ctx->items[0].content, summary.content) == 0);
	CHECK(ctx->items[0].tokens == 9);
	CHECK(ctx->items[1].position == 3 && strcmp(ctx->items[1].content, q2.text) == 0);

	/* a budget too small for the newest message: it is reported, not dropped silently */
	CHECK(mnemo_context_report(st, session->id, 12, &report) == MNEMO_OK);
	printf("budget 12: %d items included, %d left out\n", report.included_items,
		   report.omitted_items);
	CHECK(report.included_items == 1 && report.omitted_items == 1);

	/* nothing is lost: the summary expands to the original messages */
	CHECK(mnemo_summary_expand(st, session->id, summary_id, true, &exp) == MNEMO_OK);
	CHECK(exp->count == 2);
	CHECK(strcmp(exp->items[0].item_id, refs[0].id) == 0);
	CHECK(strcmp(exp->items[1].item_id, refs[1].id) == 0);
	CHECK(exp->items[1].n_parts == 1);
	CHECK(strcmp(exp->items[1].parts[0].tool_output, "hosts passwd") == 0);

	/* the whole log stays searchable: the tool output, out of context now,
	 * and the summary that mentions it */
	CHECK(mnemo_search(st, session->id, "passwd", -1, &hits) == MNEMO_OK);
	for (size_t i = 0; i < hits->count; i++)
		printf("search passwd: seq %lld %s, in context: %s\n", (long long) hits->items[i].seq,
			   hits->items[i].message_id, hits->items[i].in_context ? "yes" : "no");
	CHECK(hits->count == 2);
	for (size_t i = 0; i < hits->count; i++)
		CHECK(strcmp(hits->items[i].message_id, refs[1].id) == 0
			  ? !hits->items[i].in_context
			  : strcmp(hits->items[i].message_id, summary_id) == 0 && hits->items[i].in_context);
	status = 0;

done:
	if (status != 0 && mnemo_errcode(st) != MNEMO_OK)
		fprintf(stderr, "error %d (%s): %s [%s]\n", mnemo_errcode(st),
				mnemo_strerror(mnemo_errcode(st)), mnemo_errmsg(st), mnemo_sqlstate(st));
	mnemo_search_hits_free(hits);
	mnemo_expansion_free(exp);
	mnemo_context_free(ctx);
	mnemo_session_free(session);
	mnemo_store_close(st);
	return status;
}
