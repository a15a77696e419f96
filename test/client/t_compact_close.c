/*
 * t_compact_close.c
 *		mnemo_store_close while a background compaction waits on a model
 *		that stalls behind keep-alives: the close stops it and returns
 *		promptly, the claim is released, and nothing is half-written (no
 *		summary: the level that was cut short does not fall through to the
 *		next and commit).
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"
#include "compact_helpers.h"

static void
test_close_stops_compaction(void)
{
	server		s;
	char		url[96];
	mnemo_compact_options o;
	mnemo_store *st = open_store(NULL);
	mnemo_store *other;
	mnemo_summary_nodes *nodes = NULL;
	mnemo_compact_result r;
	int			rc;
	json_object **log;
	int			n = 0;
	int64_t		until,
				t0,
				took;

	/* the model answers a word, then only keep-alives for 30 s */
	server_start(&s, "reply repeat=2\n  text \"slow\" \" summary\"\n"
				 "  stall at=1 seconds=30 keepalive_ms=200\n");
	conversation(st, "cmp-close", 6);
	options(&o, &s, url, sizeof(url));
	o.budget_tokens = 100;
	is_int(mnemo_compact_hook(st, "cmp-close", false, &o), 0, "the background compaction starts");

	/* it has the claim and waits on the model */
	for (until = now_ms() + 10000; now_ms() < until && n == 0; sleep_ms(20))
	{
		log = log_read(&s, &n);
		log_free(log, n);
	}
	is_int(n, 1, "it asked the model");
	sleep_ms(300);

	t0 = now_ms();
	mnemo_store_close(st);
	took = now_ms() - t0;
	ok(took < 2000, "mnemo_store_close returns promptly (%lld ms)", (long long) took);

	log = log_read(&s, &n);
	log_free(log, n);
	is_int(n, 1, "no second level asked the model");
	other = open_store(NULL);
	if (mnemo_summary_nodes_get(other, "cmp-close", true, &nodes) != MNEMO_OK)
		bail_out("summary nodes: %s", mnemo_errmsg(other));
	is_int((int) nodes->count, 0, "no summary committed");
	mnemo_summary_nodes_free(nodes);
	is_int(count_sql("SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cmp-close'"), 0,
		   "the claim is released");

	/* the next compactor claims and compacts at once */
	o.first_level = 3;
	/* (a budget of 100 is below this session's floor: OVER_BUDGET, once
	 * it compacted as far as it goes) */
	rc = mnemo_compact(other, "cmp-close", &o, &r);
	ok(rc == MNEMO_OK || rc == MNEMO_ERR_OVER_BUDGET, "the next compaction runs (%s)",
	   mnemo_errmsg(other));
	ok(!r.lost && r.summaries > 0, "and commits (lost %d, %d summaries)", r.lost, r.summaries);
	mnemo_store_close(other);
	server_stop(&s);
}

int
main(void)
{
	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	test_close_stops_compaction();
	mnemo_global_cleanup();
	return tap_done();
}
