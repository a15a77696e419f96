/*
 * map.c
 *		bench/map: LLMMap's throughput against its ideal.  A map of N items
 *		over the local provider server, which answers each request after a
 *		fixed delay; with C workers the ideal is N x delay / C seconds (the
 *		model is the only cost).  The figure is items/s, and the ratio of
 *		the ideal time to the measured one: what the durable map (a claim,
 *		a rendered prompt, a request, a validated reply and a recorded
 *		result per item, each in its own commit) leaves of the model's
 *		concurrency.
 *
 *	bench/map --server PATH [--items N] [--delay-ms D] [--concurrency C]
 *	          [--rounds R]
 *
 * Each round makes a new session and map, outside the timed region, and
 * times mnemo_map_run from the call to the last item recorded (worker
 * threads and their connections included).  The median round is reported.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "mnemo.h"
#include "provider.h"

const char *bench_name = "bench/map";

int
main(int argc, char **argv)
{
	const char *server_path = NULL;
	int			items = 320;
	int			delay_ms = 100;
	int			concurrency = 16;
	int			rounds = 3;
	char		script[256];
	char	   *json;
	size_t		len = 0;
	bench_server srv;
	mnemo_store *st;
	double		times[32];
	double		ideal;
	double		seconds;

	for (int i = 1; i < argc; i++)
	{
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--server") == 0 && v)
			server_path = argv[++i];
		else if (strcmp(argv[i], "--items") == 0 && v)
			items = atoi(argv[++i]);
		else if (strcmp(argv[i], "--delay-ms") == 0 && v)
			delay_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--concurrency") == 0 && v)
			concurrency = atoi(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && v)
			rounds = atoi(argv[++i]);
		else
			die("usage: bench/map --server PATH [--items N] [--delay-ms D] [--concurrency C] "
				"[--rounds R]");
	}
	if (server_path == NULL || items < 1 || delay_ms < 0 || concurrency < 1 || concurrency > 128 ||
		rounds < 1 || rounds > 32)
		die("--server is required; items >= 1, delay >= 0, concurrency 1..128, rounds 1..32");
	snprintf(script, sizeof(script),
			 "model gpt-4o-mini\nreply repeat=forever\n  text \"{\\\"ok\\\": true}\"\n  wait_ms %d\n",
			 delay_ms);
	bench_server_start(&srv, server_path, script, false);
	if ((json = malloc((size_t) items * 16 + 2)) == NULL)
		die("out of memory");
	json[len++] = '[';
	for (int i = 0; i < items; i++)
		len += (size_t) sprintf(json + len, "%s{\"n\": %d}", i ? "," : "", i);
	json[len++] = ']';
	json[len] = '\0';
	if (mnemo_global_init() != MNEMO_OK)
		die("mnemo_global_init");
	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
		die("mnemo_store_open: %s", st ? mnemo_errmsg(st) : "out of memory");

	for (int r = 0; r < rounds; r++)
	{
		mnemo_map_options o = MNEMO_MAP_OPTIONS_INIT;
		mnemo_map_run_stats stats;
		mnemo_session *s = NULL;
		char	   *map_id = NULL;
		double		t0;

		o.schema = "{\"type\": \"object\", \"required\": [\"ok\"]}";
		o.concurrency = concurrency;
		o.turn.provider = "openai";
		o.turn.model = "gpt-4o-mini";
		o.turn.base_url = srv.url;
		o.turn.api_key = "bench-key";
		if (mnemo_session_create(st, NULL, &s) != MNEMO_OK ||
			mnemo_map_create(st, s->id, "Is {{ item.n }} even?", json, &o, &map_id) != MNEMO_OK)
			die("create: %s", mnemo_errmsg(st));
		t0 = now_s();
		if (mnemo_map_run(st, s->id, map_id, &o, &stats) != MNEMO_OK)
			die("run: %s", mnemo_errmsg(st));
		times[r] = now_s() - t0;
		if (stats.done != items)
			die("round %d: %d of %d items done (%d failed)", r + 1, stats.done, items, stats.failed);
		mnemo_session_free(s);
		free(map_id);
	}
	seconds = median(times, rounds);
	ideal = (double) items * delay_ms / 1000.0 / concurrency;
	printf("map: %d items, server delay %d ms, %d workers, median of %d rounds\n",
		   items, delay_ms, concurrency, rounds);
	printf("%-12s %10s %10s %12s %8s\n", "", "seconds", "items/s", "ideal items/s", "ratio");
	printf("%-12s %10.3f %10.1f %12.1f %8.2f\n", "LLMMap", seconds, items / seconds,
		   items / ideal, ideal / seconds);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	bench_server_stop(&srv);
	free(json);
	return 0;
}
