/*
 * engine.c
 *		mnemo_compact: LCM's control loop over the server's deterministic
 *		half and the model's levels.
 *
 * The claim is taken before any model is called and released at the end;
 * each round renews it, so a live compactor keeps it however long its model
 * takes and a dead one loses it when it expires.  A round summarises one
 * block: the oldest messages outside the fresh tail, else (when none is
 * left) summary nodes of one depth: the condensation that runs while the
 * context is still over budget.  Levels fall through 1 -> 2 -> 3, and the
 * loop stops at the budget, at max_rounds, or at a round that committed no
 * summary (no block left, or another compactor won).
 *
 * With a budget, what is protected is a share of it, so that every budget
 * over the session's floor is reached (doc/compaction.md): the fresh tail
 * and the task each at most a quarter, Level 3 at most an eighth, a
 * model's summary at most a quarter.  When that leaves the context over
 * the budget, the engine squeezes: only the latest user message stays
 * protected, a short run or a lone item goes too, Level 3's size halves
 * down to its least, and then summaries are made without annotations
 * (commit_summary's header and about line, at most a sixteenth of the
 * budget otherwise).  What is left then is the floor: OVER_BUDGET.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compact/compact.h"
#include "events/events.h"
#include "files/files.h"

/* Level 3's least cap: the marker (9 tokens) and a line of the start */
#define L3_MIN_TOKENS 24

/* a summary's annotation: all of it (header and about line), at most */
#define ANNOTATE_TOKENS 160

typedef struct compaction
{
	mnemo_store *st;
	const char *sid;
	mnemo_compact_options o;
	mn_compact_model model;
	char		holder[MNEMO_ID_MAX + 1];
	mnemo_compact_result r;
	const char *kind;			/* of the last summary committed */
	int			items;			/* it replaced */
	int			l3_cap;			/* Level 3's size now */
	bool		lone_spent;		/* a lone summary that Level 3 cannot shrink */
	bool		lone_round;		/* the last round summarised a lone summary */
	int			annotate_tokens;	/* a summary's annotation, at most */
} compaction;

/* The picks of a budgeted round, in order: by the budget's shares, then
 * squeezed (nothing protected but the latest user message). */
enum
{
	PICK_LEAF,
	PICK_CONDENSED,
	PICK_SQUEEZE_LEAF,
	PICK_SQUEEZE_CONDENSED,
	PICK_COUNT
};

static void
budget_pick(const compaction *c, int which, mn_pick *p)
{
	int			quarter = c->o.budget_tokens / 4;

	p->condensed = which == PICK_CONDENSED || which == PICK_SQUEEZE_CONDENSED;
	p->min_items = p->condensed ? 2 : 3;
	p->protect_tokens = which < PICK_SQUEEZE_LEAF ? quarter : 0;
	/* a message over twice Level 3's size is worth a summary of its own;
	 * squeezed, any run of messages is, and a summary over Level 3's size,
	 * while Level 3 shrinks it */
	p->lone_tokens = which == PICK_LEAF ? 2 * c->l3_cap :
		which == PICK_SQUEEZE_LEAF ? 0 :
		which == PICK_SQUEEZE_CONDENSED && !c->lone_spent ? c->l3_cap : -1;
}

/* b's item ids as a C array borrowing b's strings; NULL when out of memory. */
static const char **
item_ids(const mn_block *b, size_t *n)
{
	const char **ids;
	size_t		i;

	*n = json_object_array_length(b->item_ids);
	if ((ids = calloc(*n + 1, sizeof(*ids))) == NULL)
		return NULL;
	for (i = 0; i < *n; i++)
		ids[i] = json_object_get_string(json_object_array_get_idx(b->item_ids, i));
	return ids;
}

/*
 * Level 2's input: the same block with each item cut, read again; its
 * acceptance is still against the whole input.  *found false if the view
 * changed meanwhile (the level is skipped).
 */
static int
cut_block(compaction *c, const mn_block *b, mn_block *cut, bool *found)
{
	int			rc = mn_compact_block(c->st, c->sid, &b->pick, &c->o, b->condensed ? 800 : 500,
									  cut, found);

	if (rc == MNEMO_OK && *found &&
		strcmp(json_object_to_json_string(cut->item_ids), json_object_to_json_string(b->item_ids)) != 0)
	{
		mn_block_clear(cut);
		*found = false;
	}
	if (*found)
		cut->tokens = b->tokens;
	return rc;
}

/* The next block, messages first, then summary nodes of one depth; with a
 * budget, by its shares, then squeezed. */
static int
next_block(compaction *c, mn_block *b, bool *found)
{
	mn_pick		p = {false, 3, -1, -1};
	int			rc;
	int			which;

	if (c->o.budget_tokens <= 0)
	{
		rc = mn_compact_block(c->st, c->sid, &p, &c->o, 0, b, found);
		p.condensed = true;
		p.min_items = 2;
		if (rc == MNEMO_OK && !*found)
			rc = mn_compact_block(c->st, c->sid, &p, &c->o, 0, b, found);
		return rc;
	}
	*found = false;
	rc = MNEMO_OK;
	for (which = 0; which < PICK_COUNT && rc == MNEMO_OK && !*found; which++)
	{
		budget_pick(c, which, &p);
		rc = mn_compact_block(c->st, c->sid, &p, &c->o, 0, b, found);
	}
	return rc;
}

/* dry_run: what the first round would summarise. */
static int
dry_run(compaction *c)
{
	mn_block	b;
	bool		found;
	int			rc;

	if ((rc = mn_compact_size(c->st, c->sid, 0, &c->r.tokens_before)) != MNEMO_OK ||
		(rc = next_block(c, &b, &found)) != MNEMO_OK)
		return rc;
	c->r.tokens_after = c->r.tokens_before;
	if (found)
	{
		snprintf(c->r.block_kind, sizeof(c->r.block_kind), "%s", b.condensed ? "condensed" : "leaf");
		c->r.block_items = (int) json_object_array_length(b.item_ids);
		c->r.block_tokens = b.tokens;
		mn_block_clear(&b);
	}
	return MNEMO_OK;
}

/*
 * The auto checkpoint after a committed summary, "compact-<summary id>"
 * (mantis adds one after each compaction; doc/c-api.md): a point to fork
 * or resume at that needs no expansion of the summary.  A label already
 * taken (a summary id reused) is not an error.
 */
static int
compaction_checkpoint(compaction *c, const char *summary_id)
{
	char		label[MNEMO_ID_MAX + 16];
	int			rc;

	snprintf(label, sizeof(label), "compact-%s", summary_id);
	rc = mnemo_checkpoint_add(c->st, c->sid, label, true, NULL);
	if (rc == MNEMO_ERR_DUPLICATE_ID)
	{
		mn_clear_error(c->st);
		rc = MNEMO_OK;
	}
	return rc;
}

/*
 * Level 3 of one message alone (a tool output or a pasted file too big for
 * its share of the budget): its excerpt leads with where the whole is, so
 * that a reader of the context knows it was cut and what to expand.
 */
static int
excerpt(compaction *c, const mn_block *b, int cap, char **out)
{
	const char *id = json_object_get_string(json_object_array_get_idx(b->item_ids, 0));
	mnemo_file_ref *ref = NULL;
	json_object *ids = NULL;
	char	   *cut = NULL;
	char		path[MNEMO_ID_MAX + 16];
	bool		cached;
	mn_buf		in = {0};
	int			rc = MNEMO_OK;

	/*
	 * A large one also goes to the large-files room, as LCM does for files:
	 * content-addressed, with an exploration summary, its id in the footer
	 * (so it is kept through every level, and lcm_describe shows it).
	 */
	if (b->tokens >= MN_FILE_INLINE_THRESHOLD)
	{
		snprintf(path, sizeof(path), "message:%s", id);
		rc = mn_file_reference(c->st, path, b->content, strlen(b->content), b->tokens, &ref,
							   &cached);
	}
	mn_buf_puts(&in, "[Excerpt of message ");
	mn_buf_puts(&in, id);
	mn_buf_puts(&in, ", whole in the log: expand this summary");
	if (ref != NULL)
	{
		mn_buf_puts(&in, "; explored as ");
		mn_buf_puts(&in, ref->content_id);
	}
	mn_buf_puts(&in, "]\n");
	mn_buf_puts(&in, b->content);
	if (rc == MNEMO_OK)
		rc = in.oom ? mn_fail(c->st, MNEMO_ERR_NOMEM, "out of memory")
			: mn_compact_truncate(c->st, in.data, cap, ref != NULL ? &cut : out);
	if (rc == MNEMO_OK && ref != NULL)
	{
		ids = json_object_new_array();
		if (ids == NULL ||
			json_object_array_add(ids, json_object_new_string(ref->content_id)) != 0)
			rc = mn_fail(c->st, MNEMO_ERR_NOMEM, "out of memory");
		else
			rc = mn_compact_footer(c->st, cut, ids, out);
	}
	json_object_put(ids);
	free(cut);
	mnemo_file_ref_free(ref);
	mn_buf_free(&in);
	return rc;
}

/* One block summarised and committed; *progress whether a summary went in. */
static int
round_once(compaction *c, bool *progress)
{
	mn_block	b;
	bool		found;
	char	   *summary = NULL;
	/* with a budget, a model's summary may be at most a quarter of it */
	int			model_max = c->o.budget_tokens / 4;
	bool		lone;
	int			level;
	int			rc;

	*progress = false;
	c->lone_round = false;
	rc = next_block(c, &b, &found);
	if (rc != MNEMO_OK || !found)
		return rc;

	/* a lone summary squeezed: its model wrote it; Level 3 shrinks it */
	lone = b.condensed && json_object_array_length(b.item_ids) == 1;
	for (level = lone ? 3 : c->o.first_level; level <= 2 && summary == NULL && rc == MNEMO_OK;
		 level++)
	{
		mn_block	cut;
		bool		have = true;

		if (level == 1)
			rc = mn_compact_summarise(c->st, &c->model, &c->o, 1, &b, model_max, &summary);
		else if ((rc = cut_block(c, &b, &cut, &have)) == MNEMO_OK && have)
		{
			rc = mn_compact_summarise(c->st, &c->model, &c->o, 2, &cut, model_max, &summary);
			mn_block_clear(&cut);
		}
	}
	if (rc == MNEMO_OK && summary == NULL)
	{
		/*
		 * At most half its input too, so that a small block shrinks as well;
		 * but never under L3_MIN_TOKENS: below the marker's 9 tokens
		 * truncate_summary keeps no text at all, and an empty summary is an
		 * empty assistant message in every later context.
		 */
		int			cap = c->l3_cap;

		if (b.tokens / 2 < cap)
			cap = b.tokens / 2 + 1;
		if (cap < L3_MIN_TOKENS)
			cap = L3_MIN_TOKENS;
		level = 3;
		if (!b.condensed && json_object_array_length(b.item_ids) == 1)
			rc = excerpt(c, &b, cap, &summary);
		else
			rc = mn_compact_truncate(c->st, b.content, cap, &summary);
	}
	else
		level--;

	if (rc == MNEMO_OK && lone && mnemo_estimate_tokens(summary) >= b.tokens)
	{
		/* a lone summary this cap cannot shrink: leave lone ones be */
		c->lone_spent = true;
		free(summary);
		mn_block_clear(&b);
		*progress = true;
		return MNEMO_OK;
	}
	if (rc == MNEMO_OK)
	{
		mnemo_new_summary s = MNEMO_NEW_SUMMARY_INIT;
		char		id[MNEMO_ID_MAX + 1];
		const char **ids = item_ids(&b, &s.n_remove);

		s.content = summary;
		s.token_count = mnemo_estimate_tokens(summary);
		s.remove_item_ids = ids;
		s.kind = b.condensed ? "condensed" : "leaf";
		s.level = level;
		s.model_id = level < 3 ? c->model.cfg.model : NULL;
		s.provider_id = level < 3 ? c->model.cfg.provider_name : NULL;
		s.holder = c->holder;
		/* the model reading the context learns what it can expand */
		s.annotate_tokens = c->annotate_tokens;
		rc = ids == NULL ? mn_fail(c->st, MNEMO_ERR_NOMEM, "out of memory")
			: mnemo_summary_commit(c->st, c->sid, &s, NULL, id);
		free(ids);
		if (rc == MNEMO_ERR_INVALID_SWAP)
		{
			/* another compactor took the claim over, or got there first */
			c->r.lost = true;
			mn_clear_error(c->st);
			rc = MNEMO_OK;
		}
		else if (rc == MNEMO_OK)
		{
			c->r.summaries++;
			c->r.level = level;
			c->kind = s.kind;
			c->items = (int) s.n_remove;
			c->r.levels[level]++;
			memcpy(c->r.summary_id, id, strlen(id) + 1);
			*progress = true;
			c->lone_round = lone;
			rc = compaction_checkpoint(c, id);
		}
	}
	free(summary);
	mn_block_clear(&b);
	return rc;
}

void
mn_compact_publish(mnemo_store *st, const char *sid, int rc, const mnemo_compact_result *r)
{
	char		data[512];

	if (rc != MNEMO_OK)
	{
		snprintf(data, sizeof(data),
				 "{\"error\": %d, \"summaries\": %d, \"tokens_before\": %lld, "
				 "\"tokens_after\": %lld, \"floor_tokens\": %lld}", rc, r->summaries,
				 (long long) r->tokens_before, (long long) r->tokens_after,
				 (long long) r->floor_tokens);
		mn_emit(st, MNEMO_EVENT_COMPACTION_FAILED, sid, NULL, 0, data, false);
		return;
	}
	snprintf(data, sizeof(data),
			 "{\"tokens_before\": %lld, \"tokens_after\": %lld, \"level\": %d, "
			 "\"summaries\": %d, \"summary_id\": \"%s\", \"lost\": %s}",
			 (long long) r->tokens_before, (long long) r->tokens_after, r->level,
			 r->summaries, r->summary_id, r->lost ? "true" : "false");
	mn_emit(st, MNEMO_EVENT_COMPACTION_COMPLETED, sid, r->summary_id[0] ? r->summary_id : NULL, 0,
			data, false);
}

static int
run(compaction *c)
{
	int			rounds = c->o.max_rounds > 0 ? c->o.max_rounds :
		c->o.budget_tokens > 0 ? INT_MAX : 10;
	int			ttl = c->o.claim_ttl_ms > 0 ? c->o.claim_ttl_ms : 300000;
	int64_t		size;
	bool		held = true;
	bool		progress = true;
	int			rc;

	/*
	 * The sizes reported, before and (when over the budget) after, are
	 * exact: each renders the whole view once a compaction.  A round's is
	 * at the budget, which is all its comparison needs: on a million-message
	 * import every round rendered every message.
	 */
	if ((rc = mn_compact_size(c->st, c->sid, 0, &c->r.tokens_before)) != MNEMO_OK)
		return rc;
	if (!c->o.no_prune &&
		(rc = mnemo_prune_tool_outputs(c->st, c->sid, NULL, &c->r.pruned)) != MNEMO_OK)
		return rc;
	if ((rc = mn_compact_size(c->st, c->sid, c->o.budget_tokens, &size)) != MNEMO_OK)
		return rc;
	if (c->o.first_level < 3)
		mn_compact_model_init(c->st, c->sid, &c->o, &c->model);

	/*
	 * A round that committed a summary goes on to the next even when the
	 * context did not get smaller: a block of a few short messages cannot
	 * shrink (Level 3's marker alone is 9 tokens), yet the block after it may
	 * hold the message that puts the context over budget; and appends of
	 * other processes may outgrow a round that did shrink it.  Every summary
	 * replaces two items or more with one, or a message with a summary, so
	 * the rounds end with the blocks even without max_rounds.  With a budget
	 * still out of reach when no block is left, Level 3's size halves down
	 * to its least and the lone summaries over it go round again; at its
	 * least, they go round once more without annotations, so that the
	 * floor is what the summaries' texts make it, whatever the budget.
	 */
	while (c->r.rounds < rounds && held && !c->r.lost)
	{
		int			before = c->r.summaries;
		int64_t		size_before = size;

		if (c->o.budget_tokens > 0 ? size <= c->o.budget_tokens : c->r.rounds > 0)
			break;
		if (!progress)
		{
			if (c->o.budget_tokens <= 0)
				break;
			if (c->l3_cap > L3_MIN_TOKENS)
				c->l3_cap = c->l3_cap / 2 < L3_MIN_TOKENS ? L3_MIN_TOKENS : c->l3_cap / 2;
			else if (c->annotate_tokens > 0)
				c->annotate_tokens = 0;
			else
				break;
			c->lone_spent = false;
		}
		c->r.rounds++;
		if ((rc = round_once(c, &progress)) != MNEMO_OK ||
			(rc = mn_compact_size(c->st, c->sid, c->o.budget_tokens, &size)) != MNEMO_OK ||
			(rc = mn_compact_claim(c->st, c->sid, c->holder, ttl, &held)) != MNEMO_OK)
			break;

		/*
		 * A lone summary's text shrank, yet the context did not: its new
		 * annotation (commit_summary's header and about line, which the
		 * block's text leaves out) took what the text gave.  Lone ones are
		 * left be until Level 3's size halves, or the rounds would go on.
		 */
		if (c->lone_round && size >= size_before)
			c->lone_spent = true;
		if (c->r.summaries > before && c->o.progress != NULL)
			c->o.progress(c->r.summary_id, c->kind, c->r.level, c->items, size,
						  c->o.progress_arg);
	}
	c->r.lost = c->r.lost || !held;
	if (rc == MNEMO_OK && c->o.budget_tokens > 0 && size > c->o.budget_tokens &&
		(rc = mn_compact_size(c->st, c->sid, 0, &size)) != MNEMO_OK)
		return rc;
	c->r.tokens_after = size;
	/*
	 * Nothing left to pick and still over: the budget is below the floor.
	 * (max_rounds ending first is what the caller asked for.)
	 */
	if (rc == MNEMO_OK && !c->r.lost && !progress && c->o.budget_tokens > 0 &&
		size > c->o.budget_tokens)
	{
		c->r.floor_tokens = size;
		return mn_fail(c->st, MNEMO_ERR_OVER_BUDGET,
					   "mnemo_compact: the budget of %d tokens is below the session's floor: "
					   "the context cannot be compacted under %lld tokens (the latest user "
					   "message, summaries at their least and what cannot be summarised); "
					   "reached %lld from %lld",
					   c->o.budget_tokens, (long long) size, (long long) size,
					   (long long) c->r.tokens_before);
	}
	return rc;
}

/*
 * The handle's holder, made at its first compaction: host:pid:time and the
 * handle's address (two handles of a process may start in the same
 * millisecond).  A compaction whose connection is lost cannot release its
 * claim; the handle's next one, after mnemo_store_reconnect, renews it
 * instead of waiting for it to expire.  One handle runs one compaction at
 * a time, so sharing the holder never lets two run at once.
 */
const char *
mn_compact_holder(mnemo_store *st)
{
	if (st->compact_holder[0] == '\0')
	{
		char		host[64] = "";

		gethostname(host, sizeof(host) - 1);
		snprintf(st->compact_holder, sizeof(st->compact_holder), "%s:%ld:%lld:%lx", host,
				 (long) getpid(), (long long) mn_unix_ms(), (unsigned long) (uintptr_t) st);
	}
	return st->compact_holder;
}

MNEMO_API int
mnemo_compact(mnemo_store *st, const char *session_id, const mnemo_compact_options *opts,
			  mnemo_compact_result *out)
{
	compaction	c;
	bool		taken;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL, "mnemo_compact: session_id is required")) != MNEMO_OK)
		return rc;
	memset(&c, 0, sizeof(c));
	c.st = st;
	c.sid = session_id;
	if (opts != NULL)
		c.o = *opts;
	if (c.o.first_level == 0)
		c.o.first_level = 1;
	if (c.o.first_level < 1 || c.o.first_level > 3 || c.o.budget_tokens < 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "mnemo_compact: first_level must be 1, 2 or 3 and budget_tokens not negative");
	if (c.o.holder != NULL)
		snprintf(c.holder, sizeof(c.holder), "%s", c.o.holder);
	else
		snprintf(c.holder, sizeof(c.holder), "%s", mn_compact_holder(st));

	/*
	 * A summary's annotation (doc/compaction.md, "What the model sees"):
	 * with a budget, at most a sixteenth of it, half of Level 3's share, so
	 * that a tight budget's summaries are not outgrown by it and the floor
	 * (a budget of 1 leaves none) is what the summaries' texts make it.
	 */
	c.annotate_tokens = ANNOTATE_TOKENS;
	if (c.o.budget_tokens > 0 && c.o.budget_tokens / 16 < c.annotate_tokens)
		c.annotate_tokens = c.o.budget_tokens / 16;

	/* Level 3's size: with a budget, at most an eighth of it */
	c.l3_cap = c.o.l3_tokens > 0 ? c.o.l3_tokens : 512;
	if (c.o.budget_tokens > 0 && c.o.budget_tokens / 8 < c.l3_cap)
		c.l3_cap = c.o.budget_tokens / 8;
	if (c.l3_cap < L3_MIN_TOKENS)
		c.l3_cap = L3_MIN_TOKENS;

	if (c.o.dry_run)
	{
		rc = dry_run(&c);
		if (out != NULL)
			*out = c.r;
		return rc;
	}
	rc = mn_compact_claim(st, session_id, c.holder,
						  c.o.claim_ttl_ms > 0 ? c.o.claim_ttl_ms : 300000, &taken);
	if (rc == MNEMO_OK && !taken)
		c.r.lost = true;
	else if (rc == MNEMO_OK)
	{
		mn_emit(st, MNEMO_EVENT_COMPACTION_STARTED, session_id, NULL, 0, NULL, false);
		mn_saved_error e;

		rc = run(&c);
		mn_compact_model_free(&c.model);

		/*
		 * The event's subscribers and the release make calls of their own:
		 * the error is the compaction's, whatever they leave (a killed
		 * backend's CONNECTION was cleared here, and mnemo compact said "no
		 * error" and exited 0)
		 */
		mn_error_save(st, rc, &e);
		mn_compact_publish(st, session_id, rc, &c.r);
		if (rc != MNEMO_ERR_CONNECTION)
			(void) mn_compact_release(st, session_id, c.holder, rc, &c.r, e.msg);
		rc = mn_error_restore(st, &e);
	}
	if (out != NULL)
		*out = c.r;
	return rc;
}

MNEMO_API int
mnemo_compact_release(mnemo_store *st, const char *session_id, char *holder_out)
{
	char		holder[MNEMO_ID_MAX + 1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL, "mnemo_compact_release: session_id is required")) != MNEMO_OK)
		return rc;
	rc = mn_compact_release_any(st, session_id, holder);
	if (holder_out != NULL)
		memcpy(holder_out, holder, strlen(holder) + 1);
	return rc;
}
