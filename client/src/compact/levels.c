/*
 * levels.c
 *		Levels 1 and 2: a summary written by the compaction model.
 *
 * The prompt is the level's instructions, then the block's transcript in
 * <conversation> (or <summaries> when condensing), sent as the one user
 * message of a request to the compaction model, whose reply streams back
 * through the same transport and decoders as a turn's.  The seed's
 * prompts: Level 1 asks for its eight sections, Level 2 for five short
 * fields over inputs cut to 500 characters (800 for summaries).  A level
 * fails, and the engine falls through to the next, when the model cannot be
 * reached or answers with an error, an empty text, or a summary (footer
 * included) not smaller than its input.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "compact/compact.h"
#include "stream/http.h"

static const char level1_prompt[] =
	"You are creating a detailed context summary to allow continuing this conversation. "
	"Preserve all goals, instructions, constraints, file context, and tool results. "
	"Be thorough but do not repeat yourself. Write the summary under exactly these headers:\n"
	"## Goal\n## Key Instructions & Constraints\n## Discoveries & Findings\n"
	"## Completed Work\n## In Progress\n## Remaining Work\n"
	"## Relevant Files & Directories\n## Other Important Context";

static const char level2_prompt[] =
	"Create a COMPRESSED continuation summary. Be extremely concise. Drop intermediate "
	"reasoning, keep only what is needed to continue. Use exactly this format:\n"
	"GOAL: <one sentence>\nCONSTRAINTS: <list>\nFILES: <list>\nNEXT: <list>\n"
	"CONTEXT: <max 3 sentences>";

static const char condense1_prompt[] =
	"You are condensing multiple context summaries into one unified summary. Merge them "
	"without losing goals, instructions, constraints, file context or results; later "
	"summaries override earlier ones. Write the summary under exactly these headers:\n"
	"## Goal\n## Key Instructions & Constraints\n## Discoveries & Findings\n"
	"## Completed Work\n## In Progress\n## Remaining Work\n"
	"## Relevant Files & Directories\n## Other Important Context";

static const char condense2_prompt[] =
	"Condense these summaries into one COMPRESSED continuation summary. Be extremely "
	"concise. Use exactly this format:\n"
	"GOAL: <one sentence>\nCONSTRAINTS: <list>\nFILES: <list>\nNEXT: <list>\n"
	"CONTEXT: <max 2 sentences>";

void
mn_compact_model_init(mnemo_store *st, const char *sid, const mnemo_compact_options *o,
					  mn_compact_model *m)
{
	mnemo_turn_options t = MNEMO_TURN_OPTIONS_INIT;
	mnemo_session *s = NULL;

	memset(m, 0, sizeof(*m));
	t.provider = o->provider;
	t.model = o->model;
	t.base_url = o->base_url;
	t.api_key = o->api_key;
	t.connect_timeout_ms = o->connect_timeout_ms;
	t.idle_timeout_ms = o->idle_timeout_ms;
	t.max_retries = o->max_retries != 0 ? o->max_retries : 1;
	t.max_output_tokens = o->max_output_tokens > 0 ? o->max_output_tokens : 8192;
	/* the budget is the turn's concern; leave room for any output size */
	t.context_limit = t.max_output_tokens + 4000 + 1 + 1000000;
	m->usable = mnemo_session_get(st, sid, &s) == MNEMO_OK &&
		mn_turn_settings(st, &t, s, &m->cfg) == MNEMO_OK && mn_http_begin(st) == MNEMO_OK;
	mnemo_session_free(s);
	mn_clear_error(st);
}

void
mn_compact_model_free(mn_compact_model *m)
{
	free(m->cfg.url);
	free(m->cfg.model);
	memset(m, 0, sizeof(*m));
}

/*
 * The model's reply to prompt, into *reply (its text; empty when the model
 * failed, which fails the level).  MNEMO_OK, or CANCELLED set on the
 * handle: the compaction is being stopped, and must not fall through to
 * the next level and commit it.
 */
static int
ask(mnemo_store *st, mn_compact_model *m, const char *prompt, int max_output, mn_buf *reply)
{
	mn_ask_request a;
	int			rc;

	memset(&a, 0, sizeof(a));
	a.prompt = prompt;
	a.max_output = max_output;
	if ((rc = mn_ask(st, &m->cfg, &a, reply)) == MNEMO_ERR_CANCELLED)
		return rc;
	mn_clear_error(st);
	if (rc != MNEMO_OK)
		mn_buf_reset(reply);
	return MNEMO_OK;
}

int
mn_compact_summarise(mnemo_store *st, mn_compact_model *m,
					 const mnemo_compact_options *o, int level, const mn_block *b, int max_tokens,
					 char **out)
{
	const char *instructions;
	const char *tag = b->condensed ? "summaries" : "conversation";
	int			max_output = m->cfg.max_output;
	mn_buf		prompt = {0};
	mn_buf		reply = {0};
	size_t		i;
	int			rc = MNEMO_OK;

	*out = NULL;
	if (!m->usable)
		return MNEMO_OK;
	if (level == 1)
		instructions = b->condensed ? (o->condense_level1_prompt ? o->condense_level1_prompt : condense1_prompt)
			: (o->level1_prompt ? o->level1_prompt : level1_prompt);
	else
	{
		instructions = b->condensed ? (o->condense_level2_prompt ? o->condense_level2_prompt : condense2_prompt)
			: (o->level2_prompt ? o->level2_prompt : level2_prompt);
		if (max_output > 4000)
			max_output = 4000;
	}
	mn_buf_puts(&prompt, instructions);
	mn_buf_puts(&prompt, "\n\n<");
	mn_buf_puts(&prompt, tag);
	mn_buf_puts(&prompt, ">\n");
	mn_buf_puts(&prompt, b->content);
	mn_buf_puts(&prompt, "\n</");
	mn_buf_puts(&prompt, tag);
	mn_buf_puts(&prompt, ">");
	if (prompt.oom)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else if ((rc = ask(st, m, prompt.data, max_output, &reply)) == MNEMO_OK && reply.len > 0)
	{
		/* a reply of blanks is an empty one */
		for (i = 0; i < reply.len && strchr(" \t\r\n", reply.data[i]) != NULL; i++)
			;
		if (i < reply.len &&
			(rc = mn_compact_footer(st, reply.data, b->file_ids, out)) == MNEMO_OK &&
			(mnemo_estimate_tokens(*out) >= b->tokens ||
			 (max_tokens > 0 && mnemo_estimate_tokens(*out) > max_tokens)))
		{
			free(*out);
			*out = NULL;
		}
	}
	mn_buf_free(&prompt);
	mn_buf_free(&reply);
	return rc;
}
