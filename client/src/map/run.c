/*
 * run.c
 *		mnemo_map_run: the workers of one process on a durable map.
 *
 * Each worker is a thread with its own handle (connection and provider
 * transport: a handle is never shared between threads).  It claims one
 * item at a time under a lease, works it (llm.c or agentic.c) and records
 * the outcome; the server keeps the lease holder's outcome only, once.
 * When nothing is left to claim but other workers (here or in another
 * process) still hold items, it waits and claims again: a lease that
 * expires because its holder died is taken over, so the map finishes.
 *
 * The calling thread only waits: it takes each recorded outcome off a
 * queue, publishes MAP_ITEM_COMPLETED (and MAP_COMPLETED) on the caller's
 * handle and calls on_result, so that handlers never run on a worker's
 * thread.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "map/map.h"
#include "stream/http.h"

#define MAX_CONCURRENCY 128

typedef struct outcome
{
	mn_map_item item;
	bool		recorded;
	bool		map_done;
	struct outcome *next;
} outcome;

typedef struct run
{
	mnemo_store *caller;
	const mn_map *m;
	const mnemo_map_options *o;
	char		holder[MNEMO_ID_MAX + 1];
	int			lease_ms;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t record_mu;	/* held from an outcome's record to its place
								 * in the queue: the queue is in completion
								 * order */
	int			claimed;		/* items claimed by this run */
	int			running;		/* workers not yet finished */
	int			active;			/* items claimed here and not yet being
								 * recorded: never more than this run's
								 * rows in flight */
	bool		stop;			/* on_result asked, or an error */
	int			error;			/* the first worker error, or MNEMO_OK */
	char		errmsg[512];
	outcome    *head;
	outcome    *tail;
} run;

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A worker's error ends the run (the items it held go back after their lease). */
static void
worker_failed(run *r, mnemo_store *st)
{
	pthread_mutex_lock(&r->mu);
	if (r->error == MNEMO_OK)
	{
		r->error = st ? mnemo_errcode(st) : MNEMO_ERR_NOMEM;
		if (r->error == MNEMO_OK)
			r->error = MNEMO_ERR_CONNECTION;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s", st ? mnemo_errmsg(st) : "out of memory");
	}
	r->stop = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Reserve one claim; false when the run is over for this worker. */
static bool
may_claim(run *r)
{
	bool		ok;

	pthread_mutex_lock(&r->mu);
	ok = !r->stop && (r->o->max_items <= 0 || r->claimed < r->o->max_items);
	if (ok)
		r->claimed++;
	pthread_mutex_unlock(&r->mu);
	return ok;
}

static void
unclaim(run *r)
{
	pthread_mutex_lock(&r->mu);
	r->claimed--;
	pthread_mutex_unlock(&r->mu);
}

static void
deliver(run *r, outcome *oc)
{
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = oc;
	else
		r->head = oc;
	r->tail = oc;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void
worker_setup(mn_map_worker *w, const mn_map *m, const mnemo_map_options *o)
{
	if (mnemo_session_get(w->st, m->session_id, &w->parent) != MNEMO_OK)
		w->parent = NULL;
	if (m->agentic)
		return;
	w->cfg_ok = mn_turn_settings(w->st, &o->turn, w->parent, &w->cfg) == MNEMO_OK &&
		mn_http_begin(w->st) == MNEMO_OK;
	if (!w->cfg_ok)
	{
		w->cfg_error = mnemo_errcode(w->st);
		w->cfg_message = strdup(mnemo_errmsg(w->st));
	}
	mn_clear_error(w->st);
}

static void *
worker_main(void *arg)
{
	run		   *r = arg;
	mn_map_worker w;

	memset(&w, 0, sizeof(w));
	w.st = mnemo_store_open(r->caller->conninfo);
	if (w.st == NULL || mnemo_errcode(w.st) != MNEMO_OK)
	{
		worker_failed(r, w.st);
		goto done;
	}
	worker_setup(&w, r->m, r->o);
	while (may_claim(r))
	{
		mn_map_item *items = NULL;
		int			count = 0;
		mnemo_map_status s;
		outcome    *oc;
		int			mine;

		if (mn_map_claim(w.st, r->m, r->holder, 1, r->lease_ms, &items, &count) != MNEMO_OK)
		{
			unclaim(r);
			worker_failed(r, w.st);
			break;
		}
		if (count == 0)
		{
			unclaim(r);
			if (mnemo_map_get_status(w.st, r->m->session_id, r->m->map_id, &s) != MNEMO_OK)
			{
				worker_failed(r, w.st);
				break;
			}
			/*
			 * Nothing pending, and every item in flight is this run's: its
			 * own workers finish them.  Else another process holds some:
			 * wait for them to finish, or for their lease to expire.
			 */
			pthread_mutex_lock(&r->mu);
			mine = r->active;
			pthread_mutex_unlock(&r->mu);
			if (s.pending == 0 && s.in_flight <= mine)
				break;
			sleep_ms(50);
			continue;
		}
		pthread_mutex_lock(&r->mu);
		r->active++;
		pthread_mutex_unlock(&r->mu);
		if (r->m->agentic)
			mn_map_agentic_item(&w, r->m, r->o, &items[0]);
		else
			mn_map_llm_item(&w, r->m, r->o, &items[0]);
		if ((oc = calloc(1, sizeof(*oc))) == NULL)
		{
			mn_map_item_clear(&items[0]);
			free(items);
			worker_failed(r, NULL);
			break;
		}
		oc->item = items[0];
		free(items);
		if (oc->item.error_kind == NULL && !oc->item.success)
			mn_map_item_fail(&oc->item, "llm_error", "out of memory");
		/* before the record commits, so that active never counts an item
		 * the database no longer shows in flight */
		pthread_mutex_lock(&r->mu);
		r->active--;
		pthread_mutex_unlock(&r->mu);
		pthread_mutex_lock(&r->record_mu);
		if (mn_map_record(w.st, r->m, r->holder, &oc->item, &oc->recorded, &oc->map_done) != MNEMO_OK)
		{
			pthread_mutex_unlock(&r->record_mu);
			mn_map_item_clear(&oc->item);
			free(oc);
			worker_failed(r, w.st);
			break;
		}
		deliver(r, oc);
		pthread_mutex_unlock(&r->record_mu);
	}
done:
	pthread_mutex_lock(&r->mu);
	r->running--;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	free(w.cfg.url);
	free(w.cfg.model);
	free(w.cfg_message);
	mnemo_session_free(w.parent);
	mnemo_store_close(w.st);
	return NULL;
}

/* On the calling thread: events and on_result for one recorded outcome. */
static void
publish(run *r, outcome *oc, mnemo_map_run_stats *stats)
{
	const mn_map_item *it = &oc->item;
	mnemo_map_result res;

	stats->attempts += it->attempts;
	if (!oc->recorded)
	{
		stats->lost++;
		return;
	}
	if (it->success)
		stats->done++;
	else
		stats->failed++;
	mn_emit(r->caller, MNEMO_EVENT_MAP_ITEM_COMPLETED, r->m->session_id, r->m->map_id, 0, NULL, false);
	if (oc->map_done)
		mn_emit(r->caller, MNEMO_EVENT_MAP_COMPLETED, r->m->session_id, r->m->map_id, 0, NULL, false);
	if (r->o->on_result == NULL)
		return;
	memset(&res, 0, sizeof(res));
	res.ordinal = it->ordinal;
	res.item = it->item;
	res.success = it->success;
	res.output = it->output;
	res.error_kind = it->error_kind;
	res.error = it->error;
	res.attempts = it->attempts;
	res.sub_session_id = it->sub_session_id[0] ? it->sub_session_id : NULL;
	if (r->o->on_result(&res, r->o->arg) != 0)
	{
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_mutex_unlock(&r->mu);
	}
}

MNEMO_API int
mnemo_map_run(mnemo_store *st, const char *session_id, const char *map_id,
			  const mnemo_map_options *opts, mnemo_map_run_stats *stats)
{
	mnemo_map_options none = MNEMO_MAP_OPTIONS_INIT;
	mnemo_map_run_stats ignored;
	mn_map		m;
	run			r;
	pthread_t	threads[MAX_CONCURRENCY];
	int			n;
	int			started = 0;
	int			rc;

	if (stats == NULL)
		stats = &ignored;
	memset(stats, 0, sizeof(*stats));
	if (opts == NULL)
		opts = &none;
	if (mn_begin(st, session_id != NULL && map_id != NULL, "a session id and a map id are required") != MNEMO_OK)
		return st ? st->errcode : MNEMO_ERR_INVALID_ARGUMENT;
	if (opts->concurrency < 0 || opts->concurrency > MAX_CONCURRENCY || opts->max_items < 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "concurrency is 1 to %d", MAX_CONCURRENCY);
	if ((rc = mn_map_load(st, session_id, map_id, &m)) != MNEMO_OK)
		return rc;
	/* a finished map needs no workers (nor their connections) */
	{
		mnemo_map_status s;

		if ((rc = mnemo_map_get_status(st, session_id, map_id, &s)) != MNEMO_OK ||
			(s.pending == 0 && s.in_flight == 0))
		{
			mn_map_clear(&m);
			return rc;
		}
	}
	memset(&r, 0, sizeof(r));
	r.caller = st;
	r.m = &m;
	r.o = opts;
	r.lease_ms = mn_map_lease_ms(&m, opts);
	if (opts->holder)
		snprintf(r.holder, sizeof(r.holder), "%s", opts->holder);
	else
	{
		char		host[64] = "host";

		(void) gethostname(host, sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		snprintf(r.holder, sizeof(r.holder), "%s:%ld:%lx", host, (long) getpid(),
				 (unsigned long) mn_now_ms() ^ (unsigned long) (uintptr_t) &r);
	}
	pthread_mutex_init(&r.mu, NULL);
	pthread_mutex_init(&r.record_mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	n = opts->concurrency > 0 ? opts->concurrency : m.agentic ? 4 : 16;
	if (m.item_count < n)
		n = m.item_count;
	for (int i = 0; i < n; i++)
	{
		pthread_mutex_lock(&r.mu);
		r.running++;
		pthread_mutex_unlock(&r.mu);
		if (pthread_create(&threads[i], NULL, worker_main, &r) != 0)
		{
			pthread_mutex_lock(&r.mu);
			r.running--;
			pthread_mutex_unlock(&r.mu);
			break;
		}
		started++;
	}
	pthread_mutex_lock(&r.mu);
	while (r.running > 0 || r.head != NULL)
	{
		outcome    *oc = r.head;

		if (oc == NULL)
		{
			pthread_cond_wait(&r.cv, &r.mu);
			continue;
		}
		r.head = oc->next;
		if (r.head == NULL)
			r.tail = NULL;
		pthread_mutex_unlock(&r.mu);
		publish(&r, oc, stats);
		mn_map_item_clear(&oc->item);
		free(oc);
		pthread_mutex_lock(&r.mu);
	}
	pthread_mutex_unlock(&r.mu);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	rc = r.error;
	if (started == 0 && n > 0)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "could not start a worker thread");
	else if (rc != MNEMO_OK)
		rc = mn_fail(st, rc, "%s", r.errmsg);
	pthread_mutex_destroy(&r.mu);
	pthread_mutex_destroy(&r.record_mu);
	pthread_cond_destroy(&r.cv);
	mn_map_clear(&m);
	return rc;
}
