/*
 * recall.c
 *		The recall tools a turn offers its model, LCM's lcm_grep, lcm_describe
 *		and lcm_expand, run by the library inside mnemo_session_send.
 *
 * Compaction keeps every byte in the log; these let the model ask for what
 * left its context.  They are added to the caller's tools when the options
 * say so (recall > 0), or by default when the context the turn sends holds
 * a summary or a file reference, which is when there is something to ask
 * for.  A turn whose reply calls only recall tools answers them itself
 * (each call and result stored as an ordinary tool part, through the same
 * calls a caller makes) and asks the model again, at most MN_RECALL_ROUNDS
 * times; a reply that also calls the caller's tools returns to the caller
 * with those, the recall calls already answered.
 *
 * What one call can put into the context is bounded: lcm_grep returns at
 * most MN_RECALL_GREP_LIMIT hits with their snippets, lcm_expand a page of
 * at most an eighth of the turn's budget (at most 4,000 tokens), with the
 * offset of the next page.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "chat/chat.h"

#define MN_RECALL_GREP_LIMIT 20
#define MN_RECALL_EXPAND_TOKENS 4000

const char *const mn_recall_tools =
	"[{\"name\": \"lcm_grep\", "
	"\"description\": \"Search the whole history of this conversation, including what was "
	"compacted out of your context into summaries. Each hit names the summary that now covers it "
	"(or says it is in context); read that summary's original messages with lcm_expand.\", "
	"\"parameters\": {\"type\": \"object\", \"properties\": {"
	"\"pattern\": {\"type\": \"string\", \"description\": \"words to find (full-text), or a "
	"regular expression when regex is true\"}, "
	"\"summary_id\": {\"type\": \"string\", \"description\": \"search only what this summary covers\"}, "
	"\"regex\": {\"type\": \"boolean\", \"description\": \"pattern is a regular expression "
	"(searches the newest 5,000 messages of the scope)\"}, "
	"\"before_seq\": {\"type\": \"integer\", \"description\": \"the page before this seq "
	"(the last hit's: the next page)\"}}, "
	"\"required\": [\"pattern\"]}}, "
	"{\"name\": \"lcm_describe\", "
	"\"description\": \"Describe a summary (what it covers, its depth, its text) or a file "
	"reference (path, type, exploration summary) by its id.\", "
	"\"parameters\": {\"type\": \"object\", \"properties\": {"
	"\"id\": {\"type\": \"string\", \"description\": \"a summary id or a file id (sha256:...)\"}}, "
	"\"required\": [\"id\"]}}, "
	"{\"name\": \"lcm_expand\", "
	"\"description\": \"Read the messages (or the summaries) a summary covers, as they were, "
	"a page at a time.\", "
	"\"parameters\": {\"type\": \"object\", \"properties\": {"
	"\"summary_id\": {\"type\": \"string\"}, "
	"\"offset\": {\"type\": \"integer\", \"description\": \"start after this many items (next page)\"}}, "
	"\"required\": [\"summary_id\"]}}]";

bool
mn_recall_is_tool(const char *name)
{
	return name != NULL && (strcmp(name, "lcm_grep") == 0 || strcmp(name, "lcm_describe") == 0 ||
							strcmp(name, "lcm_expand") == 0);
}

bool
mn_recall_wanted(const mnemo_turn_options *o, const turn_cfg *c, const turn_context *tc)
{
	bool		something = tc->report.summary_tokens > 0;
	size_t		i;

	if (o->recall != 0)
		return o->recall > 0;
	for (i = 0; !something && tc->ctx != NULL && i < tc->ctx->count; i++)
		something = strcmp(tc->ctx->items[i].item_type, "summary") == 0 ||
			(tc->ctx->items[i].content != NULL && strstr(tc->ctx->items[i].content, "[FILE: ") != NULL);
	/* by default their definitions are not reserved in the budget (settings.c):
	 * offered only where they fit beside the context, so no request is over */
	return something &&
		mn_turn_context_size(tc) + mnemo_estimate_tokens(mn_recall_tools) <= c->available;
}

int
mn_recall_tools_with(mnemo_store *st, const char *tools, char **out)
{
	struct json_object *all;
	struct json_object *ours;
	size_t		i;

	*out = NULL;
	ours = json_tokener_parse(mn_recall_tools);
	all = tools != NULL ? json_tokener_parse(tools) : json_object_new_array();
	if (ours == NULL || all == NULL || !json_object_is_type(all, json_type_array))
	{
		json_object_put(ours);
		json_object_put(all);
		/* the caller's tools are not an array: the request says so, as without recall */
		return (*out = strdup(tools != NULL ? tools : "[]")) != NULL ? MNEMO_OK
			: mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < json_object_array_length(ours); i++)
		json_object_array_add(all, json_object_get(json_object_array_get_idx(ours, i)));
	*out = strdup(json_object_to_json_string_ext(all, JSON_C_TO_STRING_PLAIN));
	json_object_put(ours);
	json_object_put(all);
	return *out != NULL ? MNEMO_OK : mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}

/* a string or integer argument of a call's input object */
static const char *
arg_str(struct json_object *in, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(in, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static int
arg_int(struct json_object *in, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(in, key, &v) && json_object_is_type(v, json_type_int)
		? json_object_get_int(v) : 0;
}

static int
run_grep(mnemo_store *st, const char *sid, struct json_object *in, mn_buf *out)
{
	const char *pattern = arg_str(in, "pattern");
	struct json_object *v;
	bool		regex = json_object_object_get_ex(in, "regex", &v) && json_object_get_boolean(v);
	int64_t		before = arg_int(in, "before_seq");
	mnemo_recall_hits *hits = NULL;
	char		line[96];
	int			rc;
	size_t		i;

	if (pattern == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "lcm_grep needs a pattern");
	rc = mnemo_recall_grep(st, sid, pattern, arg_str(in, "summary_id"), regex,
						   MN_RECALL_GREP_LIMIT, before, &hits);
	if (rc != MNEMO_OK)
		return rc;
	snprintf(line, sizeof(line), "%zu hit%s", hits->count, hits->count == 1 ? "" : "s");
	mn_buf_puts(out, line);
	if (hits->count == MN_RECALL_GREP_LIMIT)
	{
		snprintf(line, sizeof(line), " (more: before_seq %lld)",
				 (long long) hits->items[hits->count - 1].seq);
		mn_buf_puts(out, line);
	}
	mn_buf_puts(out, "\n");
	/* hits grouped by what covers them, in the order they came */
	for (size_t g = 0; g < hits->count; g++)
	{
		const char *cover = hits->items[g].covered_by;
		bool		seen = false;

		for (i = 0; i < g && !seen; i++)
			seen = (cover == NULL) == (hits->items[i].covered_by == NULL) &&
				(cover == NULL || strcmp(cover, hits->items[i].covered_by) == 0);
		if (seen)
			continue;
		if (cover != NULL)
		{
			mn_buf_puts(out, "under summary ");
			mn_buf_puts(out, cover);
			mn_buf_puts(out, " (lcm_expand it for the full text):\n");
		}
		else if (hits->items[g].in_context)
			mn_buf_puts(out, "in your context:\n");
		else
			mn_buf_puts(out, "out of your context, under no summary:\n");
		for (i = g; i < hits->count; i++)
		{
			const mnemo_recall_hit *h = &hits->items[i];

			if ((cover == NULL) != (h->covered_by == NULL) ||
				(cover != NULL && strcmp(cover, h->covered_by) != 0))
				continue;
			snprintf(line, sizeof(line), "  #%lld ", (long long) h->seq);
			mn_buf_puts(out, line);
			mn_buf_puts(out, h->message_id);
			mn_buf_puts(out, " ");
			mn_buf_puts(out, h->role);
			mn_buf_puts(out, ": ");
			mn_buf_puts(out, h->snippet);
			mn_buf_puts(out, "\n");
		}
	}
	mnemo_recall_hits_free(hits);
	return MNEMO_OK;
}

static int
run_expand(mnemo_store *st, const char *sid, const turn_cfg *c, struct json_object *in,
		   mn_buf *out)
{
	const char *summary_id = arg_str(in, "summary_id");
	int			offset = arg_int(in, "offset");
	int			cap = c->available / 8 < MN_RECALL_EXPAND_TOKENS ? c->available / 8
		: MN_RECALL_EXPAND_TOKENS;
	mnemo_recall_page *page = NULL;
	char		line[160];
	int			rc;
	size_t		i;

	if (summary_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "lcm_expand needs a summary_id");
	if ((rc = mnemo_recall_expand(st, sid, summary_id, offset < 0 ? 0 : offset,
								  cap < 100 ? 100 : cap, &page)) != MNEMO_OK)
		return rc;
	for (i = 0; i < page->count; i++)
	{
		mn_buf_puts(out, page->items[i].content);
		mn_buf_puts(out, "\n\n");
	}
	if (page->count == 0)
		snprintf(line, sizeof(line), "[no items after offset %d of the %d summary %s covers]",
				 offset, page->total, summary_id);
	else if (page->next_offset >= 0)
		snprintf(line, sizeof(line), "[items %d-%d of %d; more: lcm_expand with offset %d]",
				 page->items[0].ordinal, page->items[page->count - 1].ordinal, page->total,
				 page->next_offset);
	else
		snprintf(line, sizeof(line), "[items %d-%d of %d: the end]", page->items[0].ordinal,
				 page->items[page->count - 1].ordinal, page->total);
	mn_buf_puts(out, line);
	mnemo_recall_page_free(page);
	return MNEMO_OK;
}

/*
 * Run one recall call; its output (or, for a bad call, the error a model
 * can act on) in *out.  Only a lost connection or memory is the turn's
 * error.
 */
static int
run_call(mnemo_store *st, const char *sid, const turn_cfg *c, const mnemo_tool_call *call,
		 mn_buf *out, bool *is_error)
{
	struct json_object *in = json_tokener_parse(call->input != NULL ? call->input : "{}");
	int			rc;

	if (in == NULL || !json_object_is_type(in, json_type_object))
		rc = mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the arguments are not a JSON object");
	else if (strcmp(call->name, "lcm_grep") == 0)
		rc = run_grep(st, sid, in, out);
	else if (strcmp(call->name, "lcm_expand") == 0)
		rc = run_expand(st, sid, c, in, out);
	else
	{
		char	   *text = NULL;
		const char *id = arg_str(in, "id");

		rc = id == NULL ? mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "lcm_describe needs an id")
			: mnemo_recall_describe(st, sid, id, &text);
		if (rc == MNEMO_OK)
			mn_buf_puts(out, text);
		free(text);
	}
	json_object_put(in);
	*is_error = rc != MNEMO_OK;
	if (rc == MNEMO_ERR_CONNECTION || rc == MNEMO_ERR_NOMEM)
		return rc;
	if (rc != MNEMO_OK)
	{
		mn_buf_reset(out);
		mn_buf_puts(out, mnemo_errmsg(st));
	}
	return out->oom ? mn_fail(st, MNEMO_ERR_NOMEM, "out of memory") : MNEMO_OK;
}

int
mn_recall_answer(mnemo_store *st, const char *sid, const turn_cfg *c, mnemo_turn *turn,
				 int *ran)
{
	size_t		kept = 0;
	size_t		i;
	int			rc = MNEMO_OK;

	*ran = 0;
	for (i = 0; i < turn->n_tool_calls; i++)
	{
		mnemo_tool_call *call = &turn->tool_calls[i];
		mn_buf		out = {0};
		bool		is_error = false;

		if (rc != MNEMO_OK || !mn_recall_is_tool(call->name))
		{
			turn->tool_calls[kept++] = *call;
			continue;
		}
		if ((rc = mnemo_session_tool_start(st, sid, call->part_id)) == MNEMO_OK &&
			(rc = run_call(st, sid, c, call, &out, &is_error)) == MNEMO_OK)
			rc = mnemo_session_tool_result(st, sid, call->part_id, out.data ? out.data : "",
										   is_error);
		mn_buf_free(&out);
		if (rc != MNEMO_OK)
		{
			turn->tool_calls[kept++] = *call;
			continue;
		}
		(*ran)++;
		free(call->part_id);
		free(call->call_id);
		free(call->name);
		free(call->input);
	}
	turn->n_tool_calls = kept;
	return rc;
}
