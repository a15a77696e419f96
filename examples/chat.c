/*
 * chat.c: one chat turn with a tool call, streamed and stored as it goes.
 * The model is asked to count words with a tool; the program runs the tool,
 * sends the result back, and prints the answer as it streams.  Then it reads
 * the log back: every message of the turn is there, in order.
 *
 *   cc -o chat chat.c $(pkg-config --cflags --libs mnemo)
 *   OPENAI_API_KEY=sk-... PGDATABASE=app ./chat
 *
 * The provider is the one whose key is set (OPENAI_API_KEY, else
 * ANTHROPIC_API_KEY); OPENAI_BASE_URL points it at any OpenAI-compatible
 * server, such as the local test server playing examples/chat.script:
 *
 *   test/provider_server/provider-server --script examples/chat.script --port 8080 &
 *   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=local ./chat
 *
 * It checks what it gets back and exits 1 on any surprise.
 */
#include <stdio.h>
#include <string.h>
#include <mnemo.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "chat.c:%d: check failed: %s\n", __LINE__, #cond); \
			goto done; \
		} \
	} while (0)

static const char *tools =
	"[{\"name\": \"word_count\", \"description\": \"Count the words of a text\","
	" \"parameters\": {\"type\": \"object\", \"required\": [\"text\"],"
	" \"properties\": {\"text\": {\"type\": \"string\"}}}}]";

/* Each piece of the reply as it arrives. */
static int
print_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	(void) st;
	(void) arg;
	if (strcmp(p->type, "text") == 0)
		fwrite(p->delta, 1, p->len, stdout);
	else if (strcmp(p->type, "tool") == 0)
		printf("[tool %s %s]\n", p->tool_name, p->tool_input);
	fflush(stdout);
	return 0;					/* non-zero would cancel the turn */
}

int
main(void)
{
	mnemo_store *st;
	mnemo_session *session = NULL;
	mnemo_turn *turn = NULL;
	mnemo_messages *log = NULL;
	const mnemo_part *tool;
	mnemo_turn_options opts = {.tools = tools, .max_output_tokens = 512};
	mnemo_new_session spec = {.model_id = "gpt-4o-mini", .agent = "example",
							  .system_prompt = "Use the word_count tool to count words."};
	int			status = 1;

	if (mnemo_global_init() != MNEMO_OK)	/* once, before any thread sends */
		return 1;
	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
	{
		fprintf(stderr, "cannot open the store: %s\n", st ? mnemo_errmsg(st) : "out of memory");
		goto done;
	}
	CHECK(mnemo_session_create(st, &spec, &session) == MNEMO_OK);

	/* the user turn: stored before the provider is called */
	CHECK(mnemo_session_send(st, session->id, &opts,
							 "How many words are in 'the store keeps every message'?",
							 NULL, 0, print_part, NULL, &turn) == MNEMO_OK);
	CHECK(turn->n_tool_calls == 1);
	CHECK(strcmp(turn->tool_calls[0].name, "word_count") == 0);
	CHECK(strcmp(turn->finish_reason, "tool_calls") == 0);

	/* run the tool (a toy) and store its result on the call's part */
	CHECK(mnemo_session_tool_start(st, session->id, turn->tool_calls[0].part_id) == MNEMO_OK);
	CHECK(mnemo_session_tool_result(st, session->id, turn->tool_calls[0].part_id, "5", false) == MNEMO_OK);
	mnemo_turn_free(turn);
	turn = NULL;

	/* no new user message: the model goes on with the tool's result */
	CHECK(mnemo_session_send(st, session->id, &opts, NULL, NULL, 0, print_part, NULL,
							 &turn) == MNEMO_OK);
	printf("\n(finish reason %s, %lld tokens in, %lld out)\n", turn->finish_reason,
		   (long long) turn->tokens.input, (long long) turn->tokens.output);
	CHECK(turn->n_tool_calls == 0 && strlen(turn->text) > 0);
	CHECK(strcmp(turn->finish_reason, "stop") == 0);

	/* the log: user, assistant (the call and its result), assistant (the answer) */
	CHECK(mnemo_messages_get(st, session->id, NULL, true, &log) == MNEMO_OK);
	CHECK(log->count == 3);
	CHECK(strcmp(log->items[0].role, "user") == 0);
	CHECK(strcmp(log->items[1].role, "assistant") == 0);
	CHECK(log->items[1].n_parts > 0);
	tool = &log->items[1].parts[log->items[1].n_parts - 1];	/* after any text */
	CHECK(strcmp(tool->type, "tool") == 0 && strcmp(tool->tool_state, "completed") == 0);
	CHECK(strcmp(tool->tool_output, "5") == 0);
	CHECK(strcmp(log->items[2].id, turn->message_id) == 0);
	CHECK(strcmp(log->items[2].finish_reason, "stop") == 0);
	CHECK(log->items[2].n_parts == 1 && strcmp(log->items[2].parts[0].text, turn->text) == 0);
	status = 0;

done:
	if (status != 0 && st != NULL && mnemo_errcode(st) != MNEMO_OK)
		fprintf(stderr, "error %d (%s): %s\n", mnemo_errcode(st),
				mnemo_strerror(mnemo_errcode(st)), mnemo_errmsg(st));
	mnemo_messages_free(log);
	mnemo_turn_free(turn);
	mnemo_session_free(session);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return status;
}
