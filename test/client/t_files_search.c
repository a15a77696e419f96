/*
 * t_files_search.c
 *		File references, the tool-output pruner and full-text search through
 *		libmnemo.
 *
 * Runs in a fresh database of its own (PGDATABASE); see test/client/run.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

static void
test_files(mnemo_store *st)
{
	mnemo_new_file_ref f = {0};
	mnemo_file_ref *out = NULL;
	mnemo_file_ref *got = NULL;
	mnemo_file_ref *untouched = NULL;
	int64_t		first_created;
	int			rc;

	f.content_id = "sha256:1111";
	f.path = "/src/a.c";
	rc = mnemo_file_ref_store(st, &f, &out);
	is_int(rc, MNEMO_OK, "store a file reference with the defaults");
	if (out == NULL)
		bail_out("store: %s", mnemo_errmsg(st));
	is_str(out->content_id, "sha256:1111", "content_id");
	is_str(out->path, "/src/a.c", "path");
	is_str(out->file_type, "unknown", "file_type NULL: unknown");
	is_str(out->exploration_summary, "", "exploration_summary NULL: \"\"");
	is_int(out->token_count, 0, "token_count 0");
	ok(out->created_at > 1600000000000LL, "created_at in unix ms");
	first_created = out->created_at;
	mnemo_file_ref_free(out);
	out = NULL;

	f.path = "/src/b.c";
	f.file_type = "c";
	f.token_count = 1200;
	f.exploration_summary = "int main(void);\nstatic helpers: 3";
	rc = mnemo_file_ref_store(st, &f, &out);
	is_int(rc, MNEMO_OK, "store again under the same content id");
	is_str(out ? out->path : NULL, "/src/b.c", "replaced: the new path");
	ok(out && out->created_at >= first_created, "created_at renewed");
	mnemo_file_ref_free(out);
	out = NULL;

	rc = mnemo_file_ref_get(st, "sha256:1111", &got);
	is_int(rc, MNEMO_OK, "get by content id");
	if (got == NULL)
		bail_out("get: %s", mnemo_errmsg(st));
	is_str(got->path, "/src/b.c", "one row per content id, the latest");
	is_str(got->file_type, "c", "file_type");
	is_int(got->token_count, 1200, "token_count");
	is_str(got->exploration_summary, "int main(void);\nstatic helpers: 3", "exploration_summary");
	mnemo_file_ref_free(got);
	got = NULL;

	f.content_id = "sha256:2222";
	f.token_count = 10;
	rc = mnemo_file_ref_store(st, &f, NULL);
	is_int(rc, MNEMO_OK, "store another content at the same path, out NULL");
	rc = mnemo_file_ref_get_by_path(st, "/src/b.c", &got);
	is_int(rc, MNEMO_OK, "get by path");
	is_str(got ? got->content_id : NULL, "sha256:2222", "the most recently stored for the path");
	mnemo_file_ref_free(got);
	got = NULL;

	got = (mnemo_file_ref *) &f;	/* must be overwritten with NULL */
	rc = mnemo_file_ref_get(st, "sha256:none", &got);
	is_int(rc, MNEMO_OK, "get a missing content id is not an error");
	ok(got == NULL, "*out is NULL");
	got = (mnemo_file_ref *) &f;
	rc = mnemo_file_ref_get_by_path(st, "/nowhere", &got);
	is_int(rc, MNEMO_OK, "get a missing path is not an error");
	ok(got == NULL, "*out is NULL");

	f.path = "";
	rc = mnemo_file_ref_store(st, &f, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "an empty path");
	f.path = "/src/c.c";
	f.token_count = -1;
	rc = mnemo_file_ref_store(st, &f, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "22023", "a negative token count");
	f.token_count = 0;
	f.content_id = NULL;
	rc = mnemo_file_ref_store(st, &f, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL content id");
	f.content_id = "sha256:3333";
	f.path = NULL;
	rc = mnemo_file_ref_store(st, &f, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL path");
	rc = mnemo_file_ref_store(st, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL reference");
	rc = mnemo_file_ref_get(st, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get NULL");
	rc = mnemo_file_ref_get_by_path(st, NULL, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "get by a NULL path");
	ok(untouched == NULL, "*out untouched by failures");
	rc = mnemo_file_ref_get(st, "sha256:3333", &got);
	ok(rc == MNEMO_OK && got == NULL, "a refused store wrote nothing");
	mnemo_file_ref_free(NULL);
}

/*
 * f1: u1; a1 with three tool parts (grep completed, skill completed, ls
 * pending); a2 with one completed tool part; then two user turns, which
 * protect nothing before them.  Each tool part is 100 tokens by its
 * token_estimate.
 */
static void
fill(mnemo_store *st)
{
	mnemo_new_part u = MNEMO_NEW_PART_INIT;
	mnemo_new_part tools[4] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT,
	MNEMO_NEW_PART_INIT};
	mnemo_new_message msgs[5] = {{0}};
	static const char *const names[4] = {"grep", "skill", "ls", "cat"};
	static const char *const ids[4] = {"t1", "t2", "t3", "t4"};
	static const char *const outputs[4] = {
		"zebrafish in the sources, a common match", "skill text, common", "", "cat output common"
	};
	int			i;

	new_session(st, "f1");
	u.type = "text";
	u.text = "go on";
	for (i = 0; i < 4; i++)
	{
		tools[i].type = "tool";
		tools[i].id = ids[i];
		tools[i].tool_name = names[i];
		tools[i].tool_call_id = ids[i];
		tools[i].tool_state = i == 2 ? "pending" : "completed";
		tools[i].tool_output = i == 2 ? NULL : outputs[i];
		tools[i].token_estimate = 100;
	}
	msgs[0].role = "user";
	msgs[0].id = "u1";
	msgs[0].n_parts = 1;
	msgs[0].parts = &u;
	msgs[1].role = "assistant";
	msgs[1].id = "a1";
	msgs[1].n_parts = 3;
	msgs[1].parts = &tools[0];
	msgs[2].role = "assistant";
	msgs[2].id = "a2";
	msgs[2].n_parts = 1;
	msgs[2].parts = &tools[3];
	msgs[3].role = "user";
	msgs[3].id = "u2";
	msgs[3].n_parts = 1;
	msgs[3].parts = &u;
	msgs[4].role = "user";
	msgs[4].id = "u3";
	msgs[4].n_parts = 1;
	msgs[4].parts = &u;
	if (mnemo_messages_append(st, "f1", msgs, 5, NULL) != MNEMO_OK)
		bail_out("append: %s", mnemo_errmsg(st));
}

/* compacted_at of the part with this id in message mid. */
static int64_t
compacted(mnemo_store *st, const char *mid, const char *pid)
{
	mnemo_parts *parts = NULL;
	int64_t		at = -1;
	size_t		i;

	if (mnemo_parts_get(st, "f1", mid, &parts) != MNEMO_OK)
		bail_out("parts_get: %s", mnemo_errmsg(st));
	for (i = 0; i < parts->count; i++)
		if (strcmp(parts->items[i].id, pid) == 0)
			at = parts->items[i].compacted_at;
	mnemo_parts_free(parts);
	return at;
}

static void
test_prune(mnemo_store *st)
{
	mnemo_prune_options opts = MNEMO_PRUNE_OPTIONS_INIT;
	const char *const none[] = {NULL};
	const char *const with_null[] = {"skill", NULL};
	int			pruned = -1;
	int			rc;

	opts.protect_tokens = 50;
	opts.minimum_tokens = 250;
	rc = mnemo_prune_tool_outputs(st, "f1", &opts, &pruned);
	is_int(rc, MNEMO_OK, "prune when the candidates do not reach the minimum");
	is_int(pruned, 0, "nothing pruned (200 tokens, not more than 250)");
	is_int(compacted(st, "a1", "t1"), 0, "t1 live");

	opts.protect_tokens = 150;
	opts.minimum_tokens = 0;
	rc = mnemo_prune_tool_outputs(st, "f1", &opts, &pruned);
	is_int(rc, MNEMO_OK, "prune beyond the newest 150 tokens");
	is_int(pruned, 1, "one part pruned");
	ok(compacted(st, "a1", "t1") > 0, "the older grep output is tombstoned");
	is_int(compacted(st, "a2", "t4"), 0, "the newer cat output is protected by protect_tokens");
	is_int(compacted(st, "a1", "t2"), 0, "the skill output is a protected tool");
	is_int(compacted(st, "a1", "t3"), 0, "the pending tool part is not eligible");

	rc = mnemo_prune_tool_outputs(st, "f1", NULL, &pruned);
	is_int(rc, MNEMO_OK, "prune with the default options");
	is_int(pruned, 0, "nothing beyond 40000 tokens");

	opts.protect_tokens = 0;
	opts.minimum_tokens = 0;
	opts.protected_tools = none;
	opts.n_protected_tools = 0;
	rc = mnemo_prune_tool_outputs(st, "f1", &opts, NULL);
	is_int(rc, MNEMO_OK, "prune with no protected tools, pruned NULL");
	ok(compacted(st, "a1", "t2") > 0, "now the skill output goes too");
	ok(compacted(st, "a2", "t4") > 0, "and the cat output");
	rc = mnemo_prune_tool_outputs(st, "f1", &opts, &pruned);
	is_int(rc, MNEMO_OK, "prune again");
	is_int(pruned, 0, "nothing left to prune");

	pruned = 77;
	rc = mnemo_prune_tool_outputs(st, "nope", NULL, &pruned);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "prune a missing session");
	opts.protected_tools = with_null;
	opts.n_protected_tools = 2;
	rc = mnemo_prune_tool_outputs(st, "f1", &opts, &pruned);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL protected tool");
	rc = mnemo_prune_tool_outputs(st, NULL, NULL, &pruned);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "prune NULL");
	is_int(pruned, 77, "*pruned untouched by failures");
}

static void
test_search(mnemo_store *st)
{
	mnemo_search_hits *hits = NULL;
	mnemo_search_hits *untouched = NULL;
	mnemo_new_summary sum = {0};
	int			rc;

	rc = mnemo_search(st, "f1", "zebrafish", -1, &hits);
	is_int(rc, MNEMO_OK, "search for a word of a tombstoned tool output");
	is_int(hits ? hits->count : 0, 1, "one hit");
	if (hits && hits->count == 1)
	{
		is_str(hits->items[0].message_id, "a1", "in a1");
		is_int(hits->items[0].seq, 2, "at seq 2");
		is_str(hits->items[0].role, "assistant", "role");
		ok(hits->items[0].in_context, "the message is still in context");
		ok(strstr(hits->items[0].snippet, "<b>zebrafish</b>") != NULL,
		   "the snippet marks the match: %s", hits->items[0].snippet);
		ok(hits->items[0].rank > 0, "a positive rank");
	}
	mnemo_search_hits_free(hits);
	hits = NULL;

	rc = mnemo_search(st, "f1", "common", -1, &hits);
	is_int(rc, MNEMO_OK, "search a word in two messages");
	is_int(hits ? hits->count : 0, 2, "one row per message");
	mnemo_search_hits_free(hits);
	hits = NULL;
	rc = mnemo_search(st, "f1", "common", 1, &hits);
	is_int(rc, MNEMO_OK, "with limit 1");
	is_int(hits ? hits->count : 0, 1, "one row");
	mnemo_search_hits_free(hits);
	hits = NULL;
	rc = mnemo_search(st, "f1", "", -1, &hits);
	is_int(rc, MNEMO_OK, "a query without words");
	is_int(hits ? hits->count : 99, 0, "finds nothing");
	mnemo_search_hits_free(hits);
	hits = NULL;

	sum.summary_id = "f1-sum";
	sum.content = "Searched the sources.";
	sum.token_count = 4;
	sum.remove_item_ids = (const char *const[]) {"u1", "a1"};
	sum.n_remove = 2;
	rc = mnemo_summary_commit(st, "f1", &sum, NULL, NULL);
	is_int(rc, MNEMO_OK, "compact u1 and a1 away");
	rc = mnemo_search(st, "f1", "zebrafish", 10, &hits);
	is_int(rc, MNEMO_OK, "search again");
	ok(hits && hits->count == 1 && strcmp(hits->items[0].message_id, "a1") == 0 &&
	   !hits->items[0].in_context, "still found, now out of context");
	mnemo_search_hits_free(hits);
	mnemo_search_hits_free(NULL);

	rc = mnemo_search(st, "nope", "zebrafish", 10, &untouched);
	is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "search a missing session");
	rc = mnemo_search(st, "f1", NULL, 10, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL query");
	rc = mnemo_search(st, NULL, "x", 10, &untouched);
	is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "a NULL session");
	ok(untouched == NULL, "*out untouched");

	/* the backlog: messages just appended wait until indexed */
	{
		int64_t		pending = -1;
		mnemo_new_part text = MNEMO_NEW_PART_INIT;
		mnemo_new_message more[2] = {{0}};

		rc = mnemo_search_pending(st, "f1", &pending);
		is_int(rc, MNEMO_OK, "search_pending");
		is_int(pending, 0, "nothing waits after a search");
		text.type = "text";
		text.text = "more";
		more[0].role = "user";
		more[0].n_parts = 1;
		more[0].parts = &text;
		more[1] = more[0];
		rc = mnemo_messages_append(st, "f1", more, 2, NULL);
		is_int(rc, MNEMO_OK, "two more messages");
		rc = mnemo_search_pending(st, "f1", &pending);
		is_int(pending, 2, "they wait to be indexed");
		rc = mnemo_search_pending(st, "nope", &pending);
		is_err(st, rc, MNEMO_ERR_SESSION_NOT_FOUND, "MN001", "search_pending of a missing session");
		rc = mnemo_search_pending(st, "f1", NULL);
		is_err(st, rc, MNEMO_ERR_INVALID_ARGUMENT, "", "search_pending without out");
	}
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_files(st);
	fill(st);
	test_prune(st);
	test_search(st);
	mnemo_store_close(st);
	return tap_done();
}
