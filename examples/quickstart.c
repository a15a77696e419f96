/*
 * quickstart.c: open a store, create a session, append a user message and
 * assemble the context for a token budget.
 *
 *   cc -o quickstart quickstart.c $(pkg-config --cflags --libs mnemo)
 *   PGDATABASE=app ./quickstart
 *
 * It checks what it gets back and exits 1 on any surprise.
 */
#include <stdio.h>
#include <string.h>
#include <mnemo.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "quickstart.c:%d: check failed: %s\n", __LINE__, #cond); \
			goto done; \
		} \
	} while (0)

int
main(void)
{
	const char *question = "What is the capital of France?";
	mnemo_store *st;
	mnemo_session *session = NULL;
	mnemo_context *ctx = NULL;
	mnemo_new_session spec = {.model_id = "gpt-4o", .provider_id = "openai",
							  .title = "Getting started"};
	mnemo_new_part text = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {.role = "user", .n_parts = 1, .parts = &text};
	mnemo_message_ref ref;
	int			status = 1;

	/* NULL: connect with PGHOST, PGDATABASE, ... as psql does */
	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
	{
		fprintf(stderr, "cannot open the store: %s\n", st ? mnemo_errmsg(st) : "out of memory");
		mnemo_store_close(st);
		return 1;
	}

	CHECK(mnemo_session_create(st, &spec, &session) == MNEMO_OK);
	printf("session %s\n", session->id);
	CHECK(strncmp(session->id, "sess_", 5) == 0 && session->last_seq == 0);

	text.type = "text";
	text.text = question;
	CHECK(mnemo_message_append(st, session->id, &msg, &ref) == MNEMO_OK);
	printf("appended %s at seq %lld\n", ref.id, (long long) ref.seq);
	CHECK(ref.seq == 1);

	CHECK(mnemo_context_build(st, session->id, 8000, &ctx) == MNEMO_OK);
	for (size_t i = 0; i < ctx->count; i++)
		printf("%lld %s (%d tokens): %s\n", (long long) ctx->items[i].position,
			   ctx->items[i].role, ctx->items[i].tokens, ctx->items[i].content);
	CHECK(ctx->count == 1);
	CHECK(strcmp(ctx->items[0].item_id, ref.id) == 0);
	CHECK(strcmp(ctx->items[0].role, "user") == 0);
	CHECK(strcmp(ctx->items[0].content, question) == 0);
	CHECK(ctx->items[0].tokens == mnemo_estimate_tokens(question));
	status = 0;

done:
	if (status != 0 && mnemo_errcode(st) != MNEMO_OK)
		fprintf(stderr, "error %d (%s): %s [%s]\n", mnemo_errcode(st),
				mnemo_strerror(mnemo_errcode(st)), mnemo_errmsg(st), mnemo_sqlstate(st));
	mnemo_context_free(ctx);
	mnemo_session_free(session);
	mnemo_store_close(st);
	return status;
}
