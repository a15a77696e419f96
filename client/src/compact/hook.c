/*
 * hook.c
 *		mnemo_compact_hook: the engine behind a turn's thresholds.
 *
 * Over the soft threshold a compaction must not hold up the turn, nor use
 * the turn's connection, which the caller goes on using: it runs on a
 * thread with a store of its own, opened with the same connection string.
 * One per handle at a time; the handle keeps it (st->compactor) so that the
 * next hook call or mnemo_store_close joins it.  Over the hard threshold
 * the turn waits: the background compaction is joined first (it holds the
 * claim), then the engine runs here until the context is under budget.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compact/compact.h"

struct mn_compactor
{
	pthread_t	thread;
	bool		running;
	char	   *conninfo;
	char	   *session_id;
	mnemo_compact_options o;
};

static void *
background(void *arg)
{
	struct mn_compactor *b = arg;
	mnemo_store *own = mnemo_store_open(b->conninfo);

	if (own != NULL && mnemo_errcode(own) == MNEMO_OK)
		(void) mnemo_compact(own, b->session_id, &b->o, NULL);
	mnemo_store_close(own);
	return NULL;
}

static void
join(mnemo_store *st)
{
	struct mn_compactor *b = st->compactor;

	if (b == NULL || !b->running)
		return;
	pthread_join(b->thread, NULL);
	b->running = false;
	free(b->conninfo);
	free(b->session_id);
	b->conninfo = b->session_id = NULL;
}

static void
release(mnemo_store *st)
{
	join(st);
	free(st->compactor);
	st->compactor = NULL;
}

static const mn_attachment attachment = {release, NULL};

static int
start(mnemo_store *st, const char *sid, const mnemo_compact_options *o)
{
	struct mn_compactor *b = st->compactor;

	if (b == NULL)
	{
		if ((b = calloc(1, sizeof(*b))) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		st->compactor = b;
		mn_attach(st, &attachment);
	}
	join(st);
	if (o != NULL)
		b->o = *o;
	else
		memset(&b->o, 0, sizeof(b->o));
	b->o.progress = NULL;		/* the caller's, not for another thread */
	if ((b->conninfo = strdup(st->conninfo)) == NULL || (b->session_id = strdup(sid)) == NULL)
	{
		free(b->conninfo);
		b->conninfo = NULL;
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	if (pthread_create(&b->thread, NULL, background, b) != 0)
	{
		free(b->conninfo);
		free(b->session_id);
		b->conninfo = b->session_id = NULL;
		return mn_fail(st, MNEMO_ERR_NOMEM, "cannot start the compaction thread");
	}
	b->running = true;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_compact_hook(mnemo_store *st, const char *session_id, bool blocking, void *arg)
{
	const mnemo_compact_options *o = arg;
	mnemo_compact_result r;
	int			tries = 0;
	int			rc;

	if (!blocking)
	{
		if (st->compactor != NULL && st->compactor->running)
			return 0;			/* one at a time: it is compacting already */
		return start(st, session_id, o);
	}
	if (st->compactor != NULL)
		join(st);
	while ((rc = mnemo_compact(st, session_id, o, &r)) == MNEMO_OK && r.lost &&
		   r.summaries == 0 && ++tries < 100)
	{
		struct timespec ts = {0, 100 * 1000000L};

		nanosleep(&ts, NULL);
	}
	return rc;
}
