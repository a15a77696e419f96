/*
 * t_summary.c
 *		The summary DAG through libmnemo: leaf and condensed commits, the
 *		nodes, expansion back to the exact original parts through two levels,
 *		and a second handle losing a commit race over the same span.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/* d1: six messages; m2 holds a completed tool call whose output is then
 * tombstoned, to show that expansion returns it all the same. */
static int64_t
fill(mnemo_store *st)
{
	mnemo_new_part parts[6] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
	mnemo_new_message msgs[6] = {{0}};
	static const char *const ids[6] = {"m1", "m2", "m3", "m4", "m5", "m6"};
	static const char *const texts[6] = {"Find the config.", NULL, "Open it.",
	"It sets port 5432.", "Change it to 6543.", "Done."};
	int64_t		at = 0;
	int			i;

	new_session(st, "d1");
	for (i = 0; i < 6; i++)
	{
		parts[i].type = "text";
		parts[i].text = texts[i];
		msgs[i].role = i % 2 ? "assistant" : "user";
		msgs[i].id = ids[i];
		msgs[i].n_parts = 1;
		msgs[i].parts = &parts[i];
	}
	parts[1].type = "tool";
	parts[1].id = "m2-tool";
	parts[1].tool_name = "find";
	parts[1].tool_call_id = "call_1";
	parts[1].tool_state = "completed";
	parts[1].tool_input = "{\"name\": \"postgresql.conf\"}";
	parts[1].tool_output = "/etc/postgresql/15/main/postgresql.conf";
	if (mnemo_messages_append(st, "d1", msgs, 6, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
	if (mnemo_part_tombstone(st, "d1", "m2-tool", &at) != MNEMO_OK)
		bail_out("tombstone: %s", mnemo_errmsg(st));
	return at;
}

static void
test_commit_and_expand(mnemo_store *st, int64_t tombstoned_at)
{
	mnemo_new_summary sum = {0};
	char		leaf1[MNEMO_ID_MAX + 1] = "";
	char		id[MNEMO_ID_MAX + 1] = "";
	int64_t		position = 0;
	mnemo_summary_nodes *nodes = NULL;
	mnemo_expansion *e = NULL;
	mnemo_message *last = NULL;
	mnemo_parts *parts = NULL;
	mnemo_context_items *items = NULL;
	int			rc;

	sum.content = "The user looked for the PostgreSQL config.";
	sum.token_count = 9;
	sum.remove_item_ids = (const char *const[]) {"m1", "m2"};
	sum.n_remove = 2;
	sum.kind = "leaf";
	sum.level = 1;
	sum.model_id = "summarizer";
	rc = mnemo_summary_commit(st, "d1", &sum, &position, leaf1);
	is_int(rc, MNEMO_OK, "commit a leaf over m1, m2 with no summary id");
	ok(strncmp(leaf1, "sum_", 4) == 0 && strlen(leaf1) == 30,
	   "the caller learns the sum_ id made for it (%s)", leaf1);
	is_int(position, 1, "at position 1");

	sum.summary_id = "leaf-2";
	sum.content = "The config sets port 5432.";
	sum.token_count = 6;
	sum.remove_item_ids = (const char *const[]) {"m3", "m4"};
	sum.kind = NULL;
	sum.level = 0;
	sum.model_id = NULL;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_int(rc, MNEMO_OK, "commit a second leaf with kind NULL and level 0");
	is_str(id, "leaf-2", "summary_id_out is the given id");
	is_int(position, 3, "at position 3");

	rc = mnemo_summary_nodes_get(st, "d1", false, &nodes);
	is_int(rc, MNEMO_OK, "the DAG's nodes");
	is_int(nodes ? nodes->count : 0, 2, "two nodes");
	if (nodes && nodes->count == 2)
	{
		mnemo_summary_node *n = nodes->items;

		is_str(n[0].id, leaf1, "in span order: the first leaf");
		is_str(n[0].session_id, "d1", "session_id");
		is_str(n[0].kind, "leaf", "kind leaf");
		is_int(n[0].level, 1, "level 1");
		is_int(n[0].token_count, 9, "token_count");
		is_int(n[0].seq_start, 1, "seq_start 1");
		is_int(n[0].seq_end, 2, "seq_end 2");
		ok(n[0].created_at > 1600000000000LL, "created_at in unix ms");
		ok(n[0].superseded_by == NULL, "not superseded");
		is_str(n[1].kind, "leaf", "NULL kind means leaf");
		is_int(n[1].level, 1, "level 0 means 1");
		is_int(n[1].seq_start, 3, "seq 3..");
		is_int(n[1].seq_end, 4, "..4");
	}
	mnemo_summary_nodes_free(nodes);
	nodes = NULL;

	rc = mnemo_summary_last(st, "d1", &last);
	is_int(rc, MNEMO_OK, "the last summary");
	is_str(last ? last->id : NULL, "leaf-2", "is the second leaf");
	ok(last && last->is_summary, "a summary message");
	is_str(last ? last->role : NULL, "assistant", "role assistant");
	is_str(last ? last->model_id : NULL, "", "model_id NULL: the session's");
	rc = mnemo_parts_get(st, "d1", "leaf-2", &parts);
	ok(rc == MNEMO_OK && parts && parts->count == 2 &&
	   strcmp(parts->items[0].text, "The config sets port 5432.") == 0 &&
	   parts->items[0].token_estimate == 6 &&
	   strcmp(parts->items[1].type, "compaction_marker") == 0,
	   "its parts: the text with token_count, and the compaction marker");
	mnemo_parts_free(parts);
	mnemo_message_free(last);

	/* condense the two leaves */
	sum.summary_id = "cond";
	sum.content = "Config found; port 5432.";
	sum.token_count = 5;
	sum.remove_item_ids = (const char *const[]) {leaf1, "leaf-2"};
	sum.kind = "condensed";
	sum.level = 2;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, NULL);
	is_int(rc, MNEMO_OK, "condense the two leaves (summary_id_out NULL)");
	is_int(position, 1, "at position 1");
	rc = mnemo_context_items_get(st, "d1", &items);
	ok(rc == MNEMO_OK && items && items->count == 3 &&
	   strcmp(items->items[0].item_id, "cond") == 0 &&
	   strcmp(items->items[1].item_id, "m5") == 0, "the view: cond, m5, m6");
	mnemo_context_items_free(items);

	rc = mnemo_summary_nodes_get(st, "d1", false, &nodes);
	is_int(rc, MNEMO_OK, "nodes without superseded ones");
	ok(nodes && nodes->count == 1 && strcmp(nodes->items[0].id, "cond") == 0 &&
	   strcmp(nodes->items[0].kind, "condensed") == 0 && nodes->items[0].level == 2 &&
	   nodes->items[0].seq_start == 1 && nodes->items[0].seq_end == 4,
	   "only the condensed node, level 2, over seqs 1..4");
	mnemo_summary_nodes_free(nodes);
	nodes = NULL;
	rc = mnemo_summary_nodes_get(st, "d1", true, &nodes);
	is_int(rc, MNEMO_OK, "nodes with superseded ones");
	is_int(nodes ? nodes->count : 0, 3, "three nodes");
	if (nodes && nodes->count == 3)
	{
		size_t		i;
		int			superseded = 0;

		for (i = 0; i < 3; i++)
			if (strcmp(nodes->items[i].kind, "leaf") == 0 && nodes->items[i].superseded_by &&
				strcmp(nodes->items[i].superseded_by, "cond") == 0)
				superseded++;
		is_int(superseded, 2, "both leaves superseded_by cond");
	}
	mnemo_summary_nodes_free(nodes);
	mnemo_summary_nodes_free(NULL);

	/* one level down */
	rc = mnemo_summary_expand(st, "d1", "cond", false, &e);
	is_int(rc, MNEMO_OK, "expand cond");
	ok(e && e->count == 2 && strcmp(e->items[0].item_type, "summary") == 0 &&
	   strcmp(e->items[0].item_id, leaf1) == 0 && strcmp(e->items[1].item_id, "leaf-2") == 0 &&
	   strcmp(e->items[0].summary_id, "cond") == 0,
	   "covers the two leaves, in order");
	mnemo_expansion_free(e);
	e = NULL;

	/* through both levels to the original messages */
	rc = mnemo_summary_expand(st, "d1", "cond", true, &e);
	is_int(rc, MNEMO_OK, "expand cond recursively");
	if (e == NULL)
		bail_out("expand: %s", mnemo_errmsg(st));
	{
		const mnemo_expansion_row *msg[4] = {NULL};
		int			n = 0;
		size_t		i;

		for (i = 0; i < e->count; i++)
			if (strcmp(e->items[i].item_type, "message") == 0 && n < 4)
				msg[n++] = &e->items[i];
		is_int(n, 4, "four original messages underneath");
		if (n == 4)
		{
			is_str(msg[0]->item_id, "m1", "m1");
			is_str(msg[1]->item_id, "m2", "m2");
			is_str(msg[2]->item_id, "m3", "m3");
			is_str(msg[3]->item_id, "m4", "m4: in order");
			is_int(msg[0]->seq, 1, "m1 at seq 1");
			is_int(msg[3]->seq, 4, "m4 at seq 4");
			is_str(msg[0]->summary_id, leaf1, "m1 is covered by the first leaf");
			is_str(msg[2]->summary_id, "leaf-2", "m3 by the second");
			ok(msg[0]->depth > e->items[0].depth || strcmp(e->items[0].item_type, "message") == 0,
			   "messages sit deeper than the leaves");
			is_str(msg[0]->role, "user", "roles");
			is_str(msg[1]->role, "assistant", "...");
			ok(msg[0]->n_parts == 1 && strcmp(msg[0]->parts[0].text, "Find the config.") == 0,
			   "m1's text part exactly");
			ok(msg[3]->n_parts == 1 && strcmp(msg[3]->parts[0].text, "It sets port 5432.") == 0,
			   "m4's text part exactly");
			if (msg[1]->n_parts == 1)
			{
				const mnemo_part *p = &msg[1]->parts[0];

				is_str(p->id, "m2-tool", "m2's tool part");
				is_str(p->message_id, "m2", "names its message");
				is_str(p->tool_name, "find", "tool_name");
				is_str(p->tool_input, "{\"name\": \"postgresql.conf\"}", "tool_input");
				is_str(p->tool_output, "/etc/postgresql/15/main/postgresql.conf",
					   "the tombstoned output, recovered");
				is_int(p->compacted_at, tombstoned_at, "with its tombstone");
			}
			else
				ok(0, "m2 has one part, got %zu", msg[1]->n_parts);
		}
	}
	mnemo_expansion_free(e);
	e = NULL;
	mnemo_expansion_free(NULL);

	rc = mnemo_summary_expand(st, "d1", "m1", true, &e);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "expand a message that is not a summary");
	rc = mnemo_summary_expand(st, "d1", "ghost", false, &e);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "expand a missing node");
	rc = mnemo_summary_expand(st, "d1", NULL, false, &e);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "expand NULL");
	ok(e == NULL, "*out untouched");
	rc = mnemo_summary_nodes_get(st, "nope", false, &nodes);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "nodes of a missing session");
}

static void
test_errors_and_race(mnemo_store *st)
{
	mnemo_new_summary sum = {0};
	mnemo_store *other = open_store(NULL);
	mnemo_message *m = NULL;
	mnemo_context_items *items = NULL;
	mnemo_summary_nodes *nodes = NULL;
	char		id[MNEMO_ID_MAX + 1] = "untouched";
	int64_t		position = -3;
	int			rc;

	sum.content = "x";
	sum.token_count = 1;
	sum.remove_item_ids = (const char *const[]) {"m5"};
	sum.n_remove = 1;

	sum.summary_id = "leaf-2";
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_DUPLICATE_ID, "MN004", "a summary id that exists");
	sum.summary_id = "e1";
	sum.kind = "weird";
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an unknown kind");
	sum.kind = NULL;
	sum.level = 4;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "level 4");
	sum.level = 1;
	sum.token_count = -1;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a negative token count");
	sum.token_count = 1;
	sum.remove_item_ids = (const char *const[]) {"cond"};
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "a leaf over a summary");
	sum.kind = "condensed";
	sum.remove_item_ids = (const char *const[]) {"m5"};
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "a condensation over a message");
	sum.kind = NULL;
	sum.n_remove = 0;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "an empty list");
	sum.n_remove = 1;
	rc = mnemo_summary_commit(st, "nope", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "a missing session");
	sum.content = NULL;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "NULL content");
	sum.content = "x";
	rc = mnemo_summary_commit(st, "d1", NULL, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL summary");
	sum.remove_item_ids = NULL;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "NULL item ids with n_remove 1");
	sum.remove_item_ids = (const char *const[]) {NULL};
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL item id");
	is_str(id, "untouched", "summary_id_out untouched by failures");
	is_int(position, -3, "*position untouched by failures");
	rc = mnemo_message_get(st, "d1", "e1", &m);
	is_err(st, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "no failed commit wrote its message");

	/* two compactors over m5, m6: the second handle loses and writes nothing */
	sum.summary_id = "win";
	sum.remove_item_ids = (const char *const[]) {"m5", "m6"};
	sum.n_remove = 2;
	rc = mnemo_summary_commit(st, "d1", &sum, &position, id);
	is_int(rc, MNEMO_OK, "the first handle commits over m5, m6");
	sum.summary_id = "lose";
	rc = mnemo_summary_commit(other, "d1", &sum, &position, id);
	is_err(other, rc, MNEMO_ERR_INVALID_SWAP, "MN006", "the second handle's commit loses");
	is_str(id, "win", "summary_id_out untouched by the loss");
	rc = mnemo_message_get(other, "d1", "lose", &m);
	is_err(other, rc, MNEMO_ERR_MESSAGE_NOT_FOUND, "MN002", "the loser's summary message was not written");
	rc = mnemo_summary_nodes_get(other, "d1", true, &nodes);
	ok(rc == MNEMO_OK && nodes && nodes->count == 4, "nor its node (4 nodes)");
	mnemo_summary_nodes_free(nodes);
	rc = mnemo_context_items_get(other, "d1", &items);
	ok(rc == MNEMO_OK && items && items->count == 2 &&
	   strcmp(items->items[1].item_id, "win") == 0, "the view holds the winner's summary");
	mnemo_context_items_free(items);
	ok(m == NULL, "*out untouched");
	mnemo_store_close(other);
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);
	int64_t		at = fill(st);

	test_commit_and_expand(st, at);
	test_errors_and_race(st);
	mnemo_store_close(st);
	return tap_done();
}
