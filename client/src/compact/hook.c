/*
 * hook.c
 *		The engine behind a turn's thresholds: mnemo_compact_hook, and the
 *		default a turn runs when its options set no hook (mn_compact_turn).
 *
 * Over the soft threshold a compaction must not hold up the turn, nor use
 * the turn's connection, which the caller goes on using: it runs on a
 * thread with a store of its own, opened with the same connection string,
 * with its own copies of the options' strings (the caller's may be gone
 * before it ends).  One per handle at a time; the handle keeps it
 * (st->compactor) so that the next hook call, the next turn or
 * mnemo_store_close joins it.  Its outcome is published on the caller's
 * handle when it is joined by one of the caller's own calls, never from
 * the thread: handlers run on the thread that owns the handle;
 * mnemo_store_close stops it instead of waiting for it.  Over the
 * hard threshold the turn waits: the background compaction is joined first
 * (it holds the claim), then the engine runs here until the context is
 * under budget.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compact/compact.h"
#include "events/events.h"

/* The options' strings a background compaction keeps copies of. */
#define N_STRINGS 4

struct mn_compactor
{
	pthread_t	thread;
	bool		running;
	atomic_bool done;			/* the thread has finished */
	atomic_bool stop;			/* its store's stop flag: set when the
								 * owner's handle closes */
	char	   *conninfo;
	char	   *session_id;
	char	   *strings[N_STRINGS];
	mnemo_compact_options o;
	int			rc;				/* the thread's outcome */
	mnemo_compact_result r;
	char		holder[160];	/* the claim's holder when the options name
								 * none: the handle's, ":background" */
};

static void *
background(void *arg)
{
	struct mn_compactor *b = arg;
	mnemo_store *own = mnemo_store_open(b->conninfo);

	memset(&b->r, 0, sizeof(b->r));
	if (own == NULL)
		b->rc = MNEMO_ERR_NOMEM;
	else if ((b->rc = mnemo_errcode(own)) == MNEMO_OK)
	{
		own->stop = &b->stop;
		b->rc = mnemo_compact(own, b->session_id, &b->o, &b->r);
	}
	mnemo_store_close(own);
	atomic_store(&b->done, true);
	return NULL;
}

static void
clear(struct mn_compactor *b)
{
	free(b->conninfo);
	free(b->session_id);
	b->conninfo = b->session_id = NULL;
	for (int i = 0; i < N_STRINGS; i++)
	{
		free(b->strings[i]);
		b->strings[i] = NULL;
	}
}

/* Wait for the background compaction; publish its outcome on st. */
static void
join(mnemo_store *st, bool publish)
{
	struct mn_compactor *b = st->compactor;

	if (b == NULL || !b->running)
		return;
	pthread_join(b->thread, NULL);
	b->running = false;
	if (publish)
		mn_compact_publish(st, b->session_id, b->rc, &b->r);
	if (b->rc == MNEMO_ERR_CONNECTION && b->o.holder == b->holder && st->conn != NULL &&
		PQstatus(st->conn) == CONNECTION_OK)
	{
		/*
		 * Its connection was lost, so it could not release its claim: this
		 * handle's does, or the claim would lock out every compaction of the
		 * session (a blocking one of this handle's too) until it expired.
		 */
		mn_saved_error se;

		mn_error_save(st, st->errcode, &se);
		(void) mn_compact_release(st, b->session_id, b->holder, b->rc, &b->r,
								  "the background compaction's connection was lost");
		mn_error_restore(st, &se);
	}
	clear(b);
}

/*
 * The handle closes: a compaction still waiting on its model is stopped
 * rather than waited for (the model may take minutes, or stall forever
 * behind keep-alives).  Its transfer sees the stop as a cancel within a
 * poll step, the cut level fails the compaction (it does not fall through
 * to the next level and commit), the claim is released, and what it
 * committed before stays: each summary commits whole or not at all.  The
 * database's part of a round is not interrupted: it is short.
 */
static void
release(mnemo_store *st)
{
	if (st->compactor != NULL)
		atomic_store(&st->compactor->stop, true);
	join(st, false);
	free(st->compactor);
	st->compactor = NULL;
}

static const mn_attachment attachment = {release, NULL};

/* *to = a copy of from (NULL stays NULL); false when out of memory. */
static bool
keep(const char **to, char **copy, const char *from)
{
	*copy = NULL;
	*to = NULL;
	if (from == NULL)
		return true;
	if ((*copy = strdup(from)) == NULL)
		return false;
	*to = *copy;
	return true;
}

static int
start(mnemo_store *st, const char *sid, const mnemo_compact_options *o)
{
	struct mn_compactor *b = st->compactor;
	bool		copied;

	if (b == NULL)
	{
		if ((b = calloc(1, sizeof(*b))) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		st->compactor = b;
		mn_attach(st, &attachment);
	}
	join(st, true);
	if (o != NULL)
		b->o = *o;
	else
		memset(&b->o, 0, sizeof(b->o));
	b->o.progress = NULL;		/* the caller's, not for another thread */
	if (b->o.holder == NULL)
	{
		/* one holder for every background compaction of the handle, apart
		 * from the handle's own: one whose connection was lost is renewed by
		 * the next rather than waited for */
		snprintf(b->holder, sizeof(b->holder), "%s:background", mn_compact_holder(st));
		b->o.holder = b->holder;
	}
	/* the prompts and the holder stay borrowed: the hook's caller keeps its
	 * options as long as the handle; the turn's default sets none */
	copied = (b->conninfo = strdup(st->conninfo)) != NULL &&
		(b->session_id = strdup(sid)) != NULL &&
		keep(&b->o.provider, &b->strings[0], b->o.provider) &&
		keep(&b->o.model, &b->strings[1], b->o.model) &&
		keep(&b->o.base_url, &b->strings[2], b->o.base_url) &&
		keep(&b->o.api_key, &b->strings[3], b->o.api_key);
	atomic_store(&b->done, false);
	atomic_store(&b->stop, false);
	if (!copied || pthread_create(&b->thread, NULL, background, b) != 0)
	{
		clear(b);
		return mn_fail(st, MNEMO_ERR_NOMEM, copied ? "cannot start the compaction thread"
					   : "out of memory");
	}
	b->running = true;
	mn_emit(st, MNEMO_EVENT_COMPACTION_STARTED, sid, NULL, 0, "{\"background\": true}", false);
	return MNEMO_OK;
}

void
mn_compact_reap(mnemo_store *st)
{
	if (st->compactor != NULL && st->compactor->running && atomic_load(&st->compactor->done))
		join(st, true);
}

MNEMO_API int
mnemo_compact_hook(mnemo_store *st, const char *session_id, bool blocking, void *arg)
{
	const mnemo_compact_options *o = arg;
	mnemo_compact_result r;
	int			tries = 0;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL, "mnemo_compact_hook: session_id is required")) != MNEMO_OK)
		return rc;
	if (!blocking)
	{
		mn_compact_reap(st);
		if (st->compactor != NULL && st->compactor->running)
			return 0;			/* one at a time: it is compacting already */
		return start(st, session_id, o);
	}
	join(st, true);
	while ((rc = mnemo_compact(st, session_id, o, &r)) == MNEMO_OK && r.lost &&
		   r.summaries == 0 && ++tries < 100)
	{
		struct timespec ts = {0, 100 * 1000000L};

		nanosleep(&ts, NULL);
	}
	return rc;
}

int
mn_compact_turn(mnemo_store *st, const char *sid, const mnemo_turn_options *t,
				const turn_cfg *c, bool blocking)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;

	/* the turn's own provider and model summarise */
	o.provider = c->provider_name;
	o.model = c->model;
	o.base_url = t->base_url;
	o.api_key = c->api_key;
	o.connect_timeout_ms = t->connect_timeout_ms;
	o.idle_timeout_ms = t->idle_timeout_ms;
	/* the background one brings the context back under the soft threshold,
	 * so that the next turns do not start another at once; the blocking
	 * one under the turn's budget, however many rounds that takes (with a
	 * budget the engine has no round limit) */
	o.budget_tokens = blocking ? c->available : (int) (c->soft * c->available);
	return mnemo_compact_hook(st, sid, blocking, &o);
}
