/*
 * t_messages.c
 *		Messages through libmnemo: single and batch appends with every part
 *		shape, the message_created events, usage, and every read.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define BATCH 1000

typedef struct seen
{
	int			created;
	int			other;
	int			dense;			/* seqs arrived in order, one more each time */
	int64_t		last_seq;
	char		last_id[MNEMO_ID_MAX + 1];
	char		last_session[MNEMO_ID_MAX + 1];
} seen;

static int
on_event(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	seen	   *s = arg;

	(void) st;
	if (ev->type != MNEMO_EVENT_MESSAGE_CREATED)
	{
		s->other++;
		return 0;
	}
	s->created++;
	if (ev->seq != s->last_seq + 1)
		s->dense = 0;
	s->last_seq = ev->seq;
	snprintf(s->last_id, sizeof(s->last_id), "%s", ev->id ? ev->id : "");
	snprintf(s->last_session, sizeof(s->last_session), "%s", ev->session_id ? ev->session_id : "");
	return 0;
}

/* A session whose model, provider and agent the messages inherit. */
static void
new_model_session(mnemo_store *st, const char *id, const char *model_id)
{
	mnemo_new_session spec = {0};

	spec.id = id;
	spec.model_id = model_id;
	spec.provider_id = "prov";
	spec.agent = "sess-agent";
	create_session(st, &spec);
}

static int64_t
message_count(mnemo_store *st, const char *session_id)
{
	mnemo_messages *list = NULL;
	int64_t		n;

	if (mnemo_messages_get(st, session_id, NULL, false, &list) != MNEMO_OK)
		bail_out("messages_get %s: %s", session_id, mnemo_errmsg(st));
	n = (int64_t) list->count;
	mnemo_messages_free(list);
	return n;
}

static void
test_append(mnemo_store *st, seen *ev)
{
	mnemo_new_part text = MNEMO_NEW_PART_INIT;
	mnemo_new_part parts[5] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
	mnemo_new_message msg = {0};
	mnemo_message_ref ref = {"", 0};
	mnemo_message *m = NULL;
	mnemo_messages *all = NULL;
	mnemo_messages *bare = NULL;
	int			rc;

	new_model_session(st, "m1", "sess-model");

	text.type = "text";
	text.text = "List /tmp";
	msg.role = "user";
	msg.n_parts = 1;
	msg.parts = &text;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_int(rc, MNEMO_OK, "append a user message");
	ok(strncmp(ref.id, "msg_", 4) == 0, "the server made a msg_ id (%s)", ref.id);
	is_int(ref.seq, 1, "the first message has seq 1");
	is_int(ev->created, 1, "append publishes message_created");
	is_str(ev->last_id, ref.id, "... with the message id");
	is_int(ev->last_seq, 1, "... and its seq");
	is_str(ev->last_session, "m1", "... and the session");

	/* every part shape built from the typed fields, plus one given whole */
	parts[0].type = "reasoning";
	parts[0].text = "The user wants a listing.";
	parts[1].type = "tool";
	parts[1].id = "p-tool";
	parts[1].tool_name = "ls";
	parts[1].tool_call_id = "call_1";
	parts[1].tool_state = "completed";
	parts[1].tool_input = "{\"path\": \"/tmp\", \"all\": true, \"limit\": 18446744073709551616}";
	parts[1].tool_output = "a.txt\nb.txt";
	parts[1].token_estimate = 7;
	parts[2].type = "file_ref";
	parts[2].content_id = "sha256:abc";
	parts[2].path = "/tmp/a.txt";
	parts[2].file_type = "text";
	parts[2].summary = "two lines";
	parts[3].content = "{\"type\": \"step_finish\", \"reason\": \"tool_calls\", \"n\": 1.50, "
		"\"big\": -123456789012345678901234567890}\n";
	parts[4].type = "text";
	parts[4].text = "Here: \"a.txt\" and b.txt / done \xc3\xa9";
	parts[4].token_estimate = 0;
	msg.role = "assistant";
	msg.id = "a1";
	msg.agent = "coder";
	msg.run_id = "run-1";
	msg.n_parts = 5;
	msg.parts = parts;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_int(rc, MNEMO_OK, "append an assistant message with five parts");
	is_str(ref.id, "a1", "the id as given");
	is_int(ref.seq, 2, "seq 2");

	memset(&msg, 0, sizeof(msg));
	msg.role = "assistant";
	msg.id = "a-empty";
	rc = mnemo_message_append(st, "m1", &msg, NULL);
	is_int(rc, MNEMO_OK, "append with no parts (before streaming), ref NULL");
	is_int(ev->created, 3, "three message_created events");

	rc = mnemo_message_get(st, "m1", "a1", &m);
	is_int(rc, MNEMO_OK, "get the assistant message");
	if (m == NULL)
		bail_out("get a1: %s", mnemo_errmsg(st));
	is_str(m->id, "a1", "id");
	is_str(m->session_id, "m1", "session_id");
	is_int(m->seq, 2, "seq");
	is_str(m->role, "assistant", "role");
	is_str(m->agent, "coder", "agent as given");
	is_str(m->model_id, "sess-model", "model_id defaults to the session's");
	is_str(m->provider_id, "prov", "provider_id defaults to the session's");
	is_str(m->run_id, "run-1", "run_id");
	ok(!m->is_summary, "not a summary");
	ok(m->created_at > 1600000000000LL, "created_at is unix ms");
	is_int(m->n_parts, 0, "get_message has no parts");
	ok(m->parts == NULL, "... parts NULL");
	ok(m->finish_reason == NULL, "no finish reason yet");
	is_int(m->tokens.input + m->tokens.output, 0, "no tokens yet");
	mnemo_message_free(m);
	m = NULL;

	rc = mnemo_messages_get(st, "m1", NULL, true, &all);
	is_int(rc, MNEMO_OK, "get the messages with parts");
	if (all == NULL || all->count != 3)
		bail_out("expected 3 messages");
	is_int(all->items[0].seq, 1, "seq 1");
	is_int(all->items[1].seq, 2, "seq 2");
	is_int(all->items[2].seq, 3, "seq 3: dense");
	is_str(all->items[0].role, "user", "role user");
	is_str(all->items[0].agent, "sess-agent", "agent defaults to the session's");
	is_int(all->items[0].n_parts, 1, "one part");
	is_str(all->items[0].parts[0].type, "text", "text part");
	is_str(all->items[0].parts[0].text, "List /tmp", "its text");
	is_str(all->items[0].parts[0].message_id, all->items[0].id, "the part names its message");
	is_int(all->items[0].parts[0].token_estimate, 2, "server estimate: 9 chars / 4");
	is_int(all->items[2].n_parts, 0, "the empty assistant row has no parts");
	if (all->items[1].n_parts == 5)
	{
		mnemo_part *p = all->items[1].parts;

		is_int(p[0].part_index, 0, "part_index 0");
		is_str(p[0].type, "reasoning", "reasoning");
		is_str(p[0].text, "The user wants a listing.", "reasoning text");
		ok(all->items[1].id != NULL && strlen(p[0].id) == strlen(all->items[1].id) + 2 &&
		   strncmp(p[0].id, all->items[1].id, strlen(all->items[1].id)) == 0 &&
		   strcmp(p[0].id + strlen(all->items[1].id), ":0") == 0,
		   "a part appended without an id: its message's id and its index (%s)", p[0].id);
		is_int(p[1].part_index, 1, "part_index 1");
		is_str(p[1].id, "p-tool", "the tool part's given id");
		is_str(p[1].type, "tool", "tool");
		is_str(p[1].tool_name, "ls", "tool_name");
		is_str(p[1].tool_call_id, "call_1", "tool_call_id");
		is_str(p[1].tool_state, "completed", "tool_state");
		is_str(p[1].tool_input, "{\"path\": \"/tmp\", \"all\": true, \"limit\": 18446744073709551616}",
			   "tool_input as written, its keys' order kept, a number beyond 64 bits exact");
		ok(p[1].content != NULL &&
		   strstr(p[1].content, "\"input\": {\"all\": true, \"path\": \"/tmp\", "
				  "\"limit\": 18446744073709551616}") != NULL &&
		   strstr(p[1].content, "\"input_text\": ") != NULL,
		   "stored as jsonb (keys sorted) with the text as written in input_text");
		is_str(p[1].tool_output, "a.txt\nb.txt", "tool_output, newline included");
		ok(p[1].text == NULL, "a tool part has no text");
		is_int(p[1].token_estimate, 7, "token_estimate as given");
		is_int(p[1].compacted_at, 0, "not tombstoned");
		is_str(p[2].type, "file_ref", "file_ref");
		ok(p[2].content != NULL && strstr(p[2].content, "\"path\": \"/tmp/a.txt\"") != NULL,
		   "the file_ref content carries the path");
		ok(p[2].content != NULL && strstr(p[2].content, "\"summary\": \"two lines\"") != NULL,
		   "... and the summary");
		ok(p[2].tool_name == NULL, "no tool fields on a file_ref");
		is_str(p[3].type, "step_finish", "content given whole: its type");
		ok(p[3].content != NULL && strstr(p[3].content, "\"reason\": \"tool_calls\"") != NULL,
		   "content given whole: stored as given (%s)", p[3].content);
		ok(p[3].content != NULL && strstr(p[3].content, "1.50") != NULL &&
		   strstr(p[3].content, "-123456789012345678901234567890") != NULL,
		   "... numbers as written, beyond 64 bits too (%s)", p[3].content);
		is_str(p[4].text, "Here: \"a.txt\" and b.txt / done \xc3\xa9",
			   "quotes, slash and UTF-8 survive");
		is_int(p[4].token_estimate, 0, "token_estimate 0 is stored as given");
	}
	else
		ok(0, "expected five parts, got %zu", all->items[1].n_parts);

	rc = mnemo_messages_get(st, "m1", NULL, false, &bare);
	is_int(rc, MNEMO_OK, "get the messages without parts");
	is_int(bare ? bare->count : 0, 3, "three");
	ok(bare && bare->count == 3 && bare->items[1].n_parts == 0 && bare->items[1].parts == NULL,
	   "no parts read");
	mnemo_messages_free(bare);
	bare = NULL;

	rc = mnemo_messages_get(st, "m1", all->items[0].id, true, &bare);
	is_int(rc, MNEMO_OK, "get the messages since the first");
	is_int(bare ? bare->count : 0, 2, "two after it");
	is_str(bare && bare->count ? bare->items[0].id : NULL, "a1", "starting with a1");
	mnemo_messages_free(bare);
	mnemo_messages_free(all);
	mnemo_messages_free(NULL);
	mnemo_message_free(NULL);
}

static void
test_append_errors(mnemo_store *st, seen *ev)
{
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {0};
	mnemo_message_ref ref = {"untouched", 99};
	int			created = ev->created;
	int64_t		before = message_count(st, "m1");
	int			rc;

	part.type = "text";
	part.text = "x";
	msg.role = "user";
	msg.n_parts = 1;
	msg.parts = &part;

	rc = mnemo_message_append(st, "nope", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "append to a missing session");
	msg.role = "robot";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an unknown role");
	msg.role = "user";
	part.type = "image";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an unknown part type");
	part.type = "text";
	part.text = NULL;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a text part without text");
	part.type = "tool";
	part.tool_name = "ls";
	part.tool_call_id = "c";
	part.tool_state = "done";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a bad tool_state");
	part.tool_state = NULL;
	part.tool_input = "[1]";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "tool_input that is not an object");
	part.tool_input = "{\"path\": ";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_FORMAT, "", "tool_input that is not JSON: refused by the client");
	part.tool_input = "{} {}";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_FORMAT, "", "tool_input with text after the value");
	part.tool_input = NULL;
	part.type = NULL;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a part without type or content");
	part.content = "{\"text\": \"no type\"}";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "content without a type");
	part.content = "\"just a string\"";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "content that is not an object");
	part.content = "{\"type\": \"text\", ";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_FORMAT, "", "content that is not JSON");
	part.content = NULL;
	part.type = "text";
	part.text = "x";
	part.id = "p-tool";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "a part id that exists");
	part.id = NULL;
	msg.id = "a1";
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "a message id that exists");
	msg.id = NULL;
	msg.role = NULL;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL role: refused before sending");
	msg.role = "user";
	msg.parts = NULL;
	rc = mnemo_message_append(st, "m1", &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "n_parts 1 with NULL parts");
	msg.parts = &part;
	rc = mnemo_message_append(st, NULL, &msg, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL session id");
	rc = mnemo_message_append(st, "m1", NULL, &ref);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL message");

	is_str(ref.id, "untouched", "the ref is untouched by every failure");
	is_int(ref.seq, 99, "... its seq too");
	is_int(ev->created, created, "no event for a failed append");
	is_int(message_count(st, "m1"), before, "no failed append left a message behind");
}

static void
test_batch(mnemo_store *st, seen *ev)
{
	mnemo_new_message *msgs = calloc(BATCH, sizeof(*msgs));
	mnemo_new_part *parts = calloc(BATCH, sizeof(*parts));
	char	  (*texts)[32] = calloc(BATCH, sizeof(*texts));
	mnemo_message_ref *refs = calloc(BATCH, sizeof(*refs));
	mnemo_message_ref before[3];
	mnemo_messages *all = NULL;
	mnemo_session *s = NULL;
	int			dense = 1;
	int			i;
	int			rc;

	if (!msgs || !parts || !texts || !refs)
		bail_out("out of memory");
	new_model_session(st, "b1", "");
	for (i = 0; i < BATCH; i++)
	{
		snprintf(texts[i], sizeof(texts[i]), "message %d", i + 1);
		parts[i] = (mnemo_new_part) MNEMO_NEW_PART_INIT;
		parts[i].type = "text";
		parts[i].text = texts[i];
		msgs[i].role = i % 2 ? "assistant" : "user";
		msgs[i].n_parts = 1;
		msgs[i].parts = &parts[i];
	}
	msgs[0].id = "b-first";

	ev->created = 0;
	ev->last_seq = 0;
	ev->dense = 1;
	rc = mnemo_messages_append(st, "b1", msgs, BATCH, refs);
	is_int(rc, MNEMO_OK, "append %d messages in one call", BATCH);
	is_str(refs[0].id, "b-first", "refs[0] has the given id");
	for (i = 0; i < BATCH; i++)
		if (refs[i].seq != i + 1 || refs[i].id[0] == '\0')
			dense = 0;
	ok(dense, "refs have seqs 1..%d, in order, with ids", BATCH);
	is_int(ev->created, BATCH, "one message_created per message");
	ok(ev->dense, "events in seq order, one after the other");
	is_str(ev->last_id, refs[BATCH - 1].id, "the last event is the last message");

	rc = mnemo_messages_get(st, "b1", NULL, true, &all);
	is_int(rc, MNEMO_OK, "read them back");
	is_int(all ? all->count : 0, BATCH, "all %d stored", BATCH);
	if (all && all->count == BATCH)
	{
		is_str(all->items[BATCH - 1].role, "assistant", "roles as given");
		is_str(all->items[BATCH - 1].parts[0].text, "message 1000", "texts as given");
		is_str(all->items[0].id, "b-first", "ids as given");
	}
	mnemo_messages_free(all);
	all = NULL;

	/* a duplicate id in the middle: the whole batch is refused */
	msgs[0].id = NULL;
	msgs[1].id = "b-first";
	memset(before, 0, sizeof(before));
	strcpy(before[0].id, "untouched");
	rc = mnemo_messages_append(st, "b1", msgs, 3, before);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "a batch with an existing id");
	is_str(before[0].id, "untouched", "refs untouched");
	rc = mnemo_session_get(st, "b1", &s);
	is_int(s ? s->last_seq : -1, BATCH, "nothing half-written: last_seq unchanged");
	mnemo_session_free(s);
	s = NULL;
	is_int(message_count(st, "b1"), BATCH, "nothing half-written: no new message");

	msgs[1].id = NULL;
	msgs[2].role = "robot";
	rc = mnemo_messages_append(st, "b1", msgs, 3, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a batch with a bad role in the third");
	msgs[2].role = "user";
	msgs[2].n_parts = 0;
	msgs[1].parts = NULL;
	rc = mnemo_messages_append(st, "b1", msgs, 3, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "n_parts with NULL parts in the second");
	msgs[1].parts = &parts[1];
	msgs[1].role = NULL;
	rc = mnemo_messages_append(st, "b1", msgs, 3, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL role in the second");
	msgs[1].role = "assistant";
	rc = mnemo_messages_append(st, "missing", msgs, 3, NULL);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "a batch to a missing session");
	rc = mnemo_messages_append(st, "b1", NULL, 3, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "NULL messages");
	is_int(message_count(st, "b1"), BATCH, "no failed batch left a message behind");
	is_int(ev->created, BATCH, "no events for failed batches");

	msgs[0].is_summary = true;
	rc = mnemo_messages_append(st, "b1", msgs, 3, refs);
	is_int(rc, MNEMO_OK, "a batch of three");
	is_int(refs[0].seq, BATCH + 1, "continues at seq %d", BATCH + 1);
	is_int(refs[2].seq, BATCH + 3, "... to %d", BATCH + 3);
	rc = mnemo_messages_append(st, "b1", NULL, 0, NULL);
	is_int(rc, MNEMO_OK, "an empty batch is fine");
	is_int(message_count(st, "b1"), BATCH + 3, "and adds nothing");
	{
		mnemo_message *m = NULL;

		rc = mnemo_message_get(st, "b1", refs[0].id, &m);
		ok(rc == MNEMO_OK && m && m->is_summary, "is_summary goes through the batch");
		mnemo_message_free(m);
	}

	rc = mnemo_session_soft_delete(st, "b1");
	is_int(rc, MNEMO_OK, "soft delete b1");
	rc = mnemo_messages_append(st, "b1", msgs, 3, NULL);
	is_err(st, rc, MNEMO_ERR_SESSION_INACTIVE, "MN012", "a batch to an inactive session");

	free(msgs);
	free(parts);
	free(texts);
	free(refs);
}

static void
test_tokens(mnemo_store *st)
{
	mnemo_tokens tokens = {120, 18, 100, 5, 3};
	mnemo_tokens bad = {-1, 0, 0, 0, 0};
	mnemo_message *m = NULL;
	int			rc;

	rc = mnemo_message_update_tokens(st, "m1", "a1", &tokens, 0.0004, "tool_calls");
	is_int(rc, MNEMO_OK, "record usage");
	rc = mnemo_message_get(st, "m1", "a1", &m);
	if (m == NULL)
		bail_out("get a1: %s", mnemo_errmsg(st));
	is_int(m->tokens.input, 120, "input tokens");
	is_int(m->tokens.output, 18, "output tokens");
	is_int(m->tokens.cache_read, 100, "cache_read tokens");
	is_int(m->tokens.cache_write, 5, "cache_write tokens");
	is_int(m->tokens.reasoning, 3, "reasoning tokens");
	ok(m->cost == 0.0004, "cost exactly as sent (%.17g)", m->cost);
	is_str(m->finish_reason, "tool_calls", "finish reason");
	mnemo_message_free(m);
	m = NULL;

	rc = mnemo_message_update_tokens(st, "m1", "a1", NULL, -1, NULL);
	is_int(rc, MNEMO_OK, "NULL tokens, cost -1, NULL finish reason");
	mnemo_message_get(st, "m1", "a1", &m);
	ok(m && m->tokens.input == 120 && m->tokens.reasoning == 3, "tokens kept");
	ok(m && m->cost == 0.0004, "cost kept");
	is_str(m ? m->finish_reason : NULL, "tool_calls", "finish reason kept");
	mnemo_message_free(m);
	m = NULL;

	rc = mnemo_message_update_tokens(st, "m1", "a1", &tokens, 0, "stop");
	is_int(rc, MNEMO_OK, "cost 0 is written");
	mnemo_message_get(st, "m1", "a1", &m);
	ok(m && m->cost == 0, "cost is 0");
	is_str(m ? m->finish_reason : NULL, "stop", "finish reason replaced");
	mnemo_message_free(m);

	rc = mnemo_message_update_tokens(st, "m1", "a1", &bad, -1, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a negative token count (refused before sending)");
	rc = mnemo_message_update_tokens(st, "m1", "nope", &tokens, 1, NULL);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "usage on a missing message");
	rc = mnemo_message_update_tokens(st, "m1", NULL, &tokens, 1, NULL);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "usage on a NULL id");
}

static void
test_reads(mnemo_store *st)
{
	const char *ids[] = {"a-empty", "a1"};
	const char *missing[] = {"a1", "ghost", "ghost2"};
	const char *with_null[] = {"a1", NULL};
	mnemo_messages *list = NULL;
	mnemo_messages *untouched = NULL;
	mnemo_message *m = NULL;
	mnemo_message *um = NULL;
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {0};
	int			rc;

	rc = mnemo_messages_get_by_ids(st, "m1", ids, 2, &list);
	is_int(rc, MNEMO_OK, "get by ids");
	is_int(list ? list->count : 0, 2, "two messages");
	if (list && list->count == 2)
	{
		is_str(list->items[0].id, "a-empty", "in the order given: a-empty first");
		is_str(list->items[1].id, "a1", "then a1");
		is_int(list->items[1].n_parts, 5, "with their parts");
		is_str(list->items[1].parts[1].tool_name, "ls", "the tool part");
	}
	mnemo_messages_free(list);
	list = NULL;
	rc = mnemo_messages_get_by_ids(st, "m1", missing, 3, &untouched);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "get by ids with a missing one");
	ok(strstr(mnemo_errmsg(st), "\"ghost\"") != NULL, "names the first missing id: %s",
	   mnemo_errmsg(st));
	rc = mnemo_messages_get_by_ids(st, "m1", with_null, 2, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get by ids with a NULL id");
	rc = mnemo_messages_get_by_ids(st, "m1", NULL, 0, &list);
	is_int(rc, MNEMO_OK, "get by no ids");
	is_int(list ? list->count : 99, 0, "an empty list");
	mnemo_messages_free(list);
	list = NULL;

	rc = mnemo_history(st, "m1", 2, &list);
	is_int(rc, MNEMO_OK, "history, last 2");
	is_int(list ? list->count : 0, 2, "two messages");
	ok(list && list->count == 2 && list->items[0].seq == 2 && list->items[1].seq == 3,
	   "the newest two, oldest first");
	ok(list && list->count == 2 && list->items[0].n_parts == 5, "with parts");
	mnemo_messages_free(list);
	list = NULL;
	rc = mnemo_history(st, "m1", -1, &list);
	is_int(rc, MNEMO_OK, "history, all");
	is_int(list ? list->count : 0, 3, "every message");
	mnemo_messages_free(list);
	list = NULL;
	rc = mnemo_history(st, "nope", 5, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "history of a missing session");

	rc = mnemo_message_get(st, "m1", "ghost", &um);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "get a missing message");
	rc = mnemo_message_get(st, "m1", NULL, &um);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get a NULL id");
	rc = mnemo_messages_get(st, "nope", NULL, false, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "messages of a missing session");
	rc = mnemo_messages_get(st, "m1", "ghost", true, &untouched);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "since a missing message");
	ok(untouched == NULL && um == NULL, "*out untouched by every failure");

	/* the newest summary */
	rc = mnemo_summary_last(st, "m1", &m);
	is_int(rc, MNEMO_OK, "last summary when there is none");
	ok(m == NULL, "*out is NULL");
	part.type = "text";
	part.text = "Summary: the user listed /tmp.";
	msg.role = "assistant";
	msg.id = "m1-sum";
	msg.is_summary = true;
	msg.n_parts = 1;
	msg.parts = &part;
	rc = mnemo_message_append(st, "m1", &msg, NULL);
	is_int(rc, MNEMO_OK, "append a summary message");
	rc = mnemo_summary_last(st, "m1", &m);
	is_int(rc, MNEMO_OK, "last summary");
	is_str(m ? m->id : NULL, "m1-sum", "is the summary message");
	ok(m && m->is_summary, "is_summary");
	is_int(m ? m->seq : 0, 4, "at seq 4");
	mnemo_message_free(m);
	m = NULL;
	rc = mnemo_summary_last(st, "nope", &m);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "last summary of a missing session");
}

/* Equal strings, both NULL included. */
static bool
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The first field in which two parts differ, or NULL. */
static const char *
part_diff(const mnemo_part *a, const mnemo_part *b)
{
	if (!same_str(a->id, b->id))
		return "id";
	if (!same_str(a->message_id, b->message_id))
		return "message_id";
	if (a->part_index != b->part_index)
		return "part_index";
	if (!same_str(a->type, b->type))
		return "type";
	if (!same_str(a->content, b->content))
		return "content";
	if (!same_str(a->text, b->text))
		return "text";
	if (!same_str(a->tool_name, b->tool_name) || !same_str(a->tool_call_id, b->tool_call_id))
		return "tool_name or tool_call_id";
	if (!same_str(a->tool_state, b->tool_state))
		return "tool_state";
	if (!same_str(a->tool_input, b->tool_input) || !same_str(a->tool_output, b->tool_output))
		return "tool_input or tool_output";
	if (!same_str(a->error_message, b->error_message))
		return "error_message";
	if (a->compacted_at != b->compacted_at || a->started_at != b->started_at ||
		a->completed_at != b->completed_at)
		return "times";
	if (a->token_estimate != b->token_estimate)
		return "token_estimate";
	return NULL;
}

/* The first field in which two messages (or their parts) differ, or NULL. */
static const char *
message_diff(const mnemo_message *a, const mnemo_message *b)
{
	if (!same_str(a->id, b->id) || !same_str(a->session_id, b->session_id) || a->seq != b->seq)
		return "id, session_id or seq";
	if (!same_str(a->role, b->role) || a->created_at != b->created_at ||
		!same_str(a->agent, b->agent) || !same_str(a->model_id, b->model_id) ||
		!same_str(a->provider_id, b->provider_id) || !same_str(a->run_id, b->run_id) ||
		a->is_summary != b->is_summary)
		return "message columns";
	if (memcmp(&a->tokens, &b->tokens, sizeof(a->tokens)) != 0 || a->cost != b->cost ||
		!same_str(a->finish_reason, b->finish_reason))
		return "usage";
	if (a->n_parts != b->n_parts)
		return "n_parts";
	for (size_t i = 0; i < a->n_parts; i++)
	{
		const char *d = part_diff(&a->parts[i], &b->parts[i]);

		if (d != NULL)
			return d;
	}
	return NULL;
}

/*
 * mnemo_messages_get with parts reads get_messages_flat (one row per part)
 * and puts the messages together itself; mnemo_history reads the parts as
 * the server's JSON arrays.  Both must give the same structs, field by
 * field, whatever the parts hold: status changed after the append, a
 * tombstone, keys of the status columns inside a part's own object, a
 * message without parts, a summary, a fork's inherited messages.
 */
static void
test_flat_reads(mnemo_store *st)
{
	mnemo_new_part parts[4] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT};
	mnemo_new_message msgs[3] = {{0}};
	mnemo_part_status status = MNEMO_PART_STATUS_INIT;
	mnemo_tokens tokens = {10, 20, 3, 4, 5};
	const char *sessions[] = {"m1", "fl", "fl-fork"};
	mnemo_session *fork = NULL;
	int			rc;

	create_session(st, &(mnemo_new_session) {.id = "fl"});
	parts[0].type = "tool";
	parts[0].id = "fl-tool";
	parts[0].tool_name = "grep";
	parts[0].tool_call_id = "call_9";
	parts[0].tool_input = "{\"pattern\": \"x\\ty\"}";
	parts[1].type = "text";
	parts[1].text = "line one\nline \"two\" \x01 \xe2\x82\xac";
	/* keys named as the status columns, inside a part's own object */
	parts[2].content = "{\"type\": \"step_start\", \"id\": \"fl-own\", \"tool_state\": \"own\", "
		"\"compacted_at\": 5, \"started_at\": 6, \"part_index\": 99, \"token_estimate\": 98}";
	parts[3].type = "text";
	parts[3].id = "fl-gone";
	parts[3].text = "to be tombstoned";
	msgs[0].role = "assistant";
	msgs[0].id = "fl-a";
	msgs[0].parts = parts;
	msgs[0].n_parts = 4;
	msgs[1].role = "tool";
	msgs[1].id = "fl-empty";
	msgs[2].role = "assistant";
	msgs[2].id = "fl-sum";
	msgs[2].is_summary = true;
	msgs[2].parts = &parts[1];
	msgs[2].n_parts = 1;
	if (mnemo_messages_append(st, "fl", msgs, 2, NULL) != MNEMO_OK ||
		mnemo_message_append(st, "fl", &msgs[2], NULL) != MNEMO_OK)
		bail_out("append fl: %s", mnemo_errmsg(st));
	status.tool_state = "error";
	status.started_at = 1736000000000;
	status.completed_at = 1736000000500;
	status.error_message = "no such file";
	if (mnemo_part_update_status(st, "fl", "fl-tool", &status) != MNEMO_OK ||
		mnemo_part_tombstone(st, "fl", "fl-gone", NULL) != MNEMO_OK ||
		mnemo_message_update_tokens(st, "fl", "fl-a", &tokens, 0.125, "tool_calls") != MNEMO_OK)
		bail_out("status fl: %s", mnemo_errmsg(st));
	if (mnemo_session_fork(st, "fl", "2", "fl-fork", &fork) != MNEMO_OK)
		bail_out("fork fl: %s", mnemo_errmsg(st));
	mnemo_session_free(fork);
	if (mnemo_message_append(st, "fl-fork", &msgs[2], NULL) != MNEMO_OK)
		bail_out("append fl-fork: %s", mnemo_errmsg(st));

	for (size_t k = 0; k < sizeof(sessions) / sizeof(sessions[0]); k++)
	{
		mnemo_messages *flat = NULL;
		mnemo_messages *json = NULL;
		const char *d = NULL;

		rc = mnemo_messages_get(st, sessions[k], NULL, true, &flat);
		is_int(rc, MNEMO_OK, "%s: the flat read", sessions[k]);
		rc = mnemo_history(st, sessions[k], -1, &json);
		is_int(rc, MNEMO_OK, "%s: the JSON read", sessions[k]);
		if (flat == NULL || json == NULL)
			bail_out("%s: %s", sessions[k], mnemo_errmsg(st));
		is_int(flat->count, json->count, "%s: as many messages (%zu)", sessions[k], json->count);
		for (size_t i = 0; i < flat->count && i < json->count && d == NULL; i++)
			d = message_diff(&flat->items[i], &json->items[i]);
		ok(d == NULL, "%s: every field of every message and part the same (%s)", sessions[k],
		   d ? d : "none differs");
		mnemo_messages_free(flat);
		mnemo_messages_free(json);
	}
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);
	seen		ev = {0};

	ev.dense = 1;
	if (mnemo_event_subscribe(st, MNEMO_EVENT_ANY, on_event, &ev) <= 0)
		bail_out("subscribe: %s", mnemo_errmsg(st));
	test_append(st, &ev);
	test_append_errors(st, &ev);
	test_batch(st, &ev);
	test_tokens(st);
	test_reads(st);
	test_flat_reads(st);
	mnemo_store_close(st);
	return tap_done();
}
