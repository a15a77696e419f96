/*
 * t_map_hostile.c
 *		Maps fed what an application gets wrong or a model gets wrong: a
 *		reply with text after its JSON, an items file line holding two
 *		values, an item member that is JSON null.
 *
 * Needs MNEMO_PROVIDER_SERVER and MNEMO_BIN (test/client/run.sh exports
 * both) and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"

typedef struct seen
{
	int			n;
	char		kinds[8][16];
	char		outputs[8][256];
	int			attempts[8];
} seen;

static int
collect(const mnemo_map_result *r, void *arg)
{
	seen	   *s = arg;

	if (s->n < 8)
	{
		snprintf(s->kinds[s->n], sizeof(s->kinds[0]), "%s", r->success ? "ok" : r->error_kind);
		snprintf(s->outputs[s->n], sizeof(s->outputs[0]), "%s",
				 r->output ? r->output : r->error ? r->error : "");
		s->attempts[s->n] = r->attempts;
	}
	s->n++;
	return 0;
}

static void
options_for(mnemo_map_options *o, const server *srv, seen *s, char *url)
{
	memset(o, 0, sizeof(*o));
	o->turn.provider = "openai";
	o->turn.model = "gpt-4o-mini";
	o->turn.api_key = KEY;
	snprintf(url, 128, "%s/v1", srv->url);
	o->turn.base_url = url;
	o->backoff_ms = 10;
	o->on_result = collect;
	o->arg = s;
}

/* A reply with prose after its JSON is not JSON: the schema'd item retries. */
static void
test_trailing_text(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	char		url[128];
	char	   *map_id = NULL;
	mnemo_map_options o;
	mnemo_map_run_stats stats;

	server_start(&srv, "model gpt-4o-mini\n"
				 "reply\n  text \"{\\\"ok\\\": true} Hope this helps!\"\n"
				 "reply\n  text \"{\\\"ok\\\": false}\"\n");
	new_session(st, "mh_trail");
	options_for(&o, &srv, &s, url);
	o.schema = "{\"type\": \"object\", \"required\": [\"ok\"]}";
	o.map_id = "m_trail";
	is_int(mnemo_map_create(st, "mh_trail", "Is {{ item }} even?", "[1]", &o, &map_id), MNEMO_OK,
		   "the map is created");
	is_int(mnemo_map_run(st, "mh_trail", "m_trail", &o, &stats), MNEMO_OK, "the map runs");
	is_str(s.kinds[0], "ok", "the item succeeds in the end");
	is_int(s.attempts[0], 2, "a reply with text after its JSON is not JSON: retried");
	is_str(s.outputs[0], "{\"ok\":false}", "the output is the second reply's");
	is_int(mnemo_map_validate(st, "{\"type\": \"object\"}", "{\"ok\": true} and more"),
		   MNEMO_ERR_FORMAT, "mnemo_map_validate: text after the value is not JSON");
	is_int(mnemo_map_validate(st, "{\"type\": \"object\"}", "{\"ok\": true}\n"), MNEMO_OK,
		   "mnemo_map_validate: white space after the value is fine");
	free(map_id);
	server_stop(&srv);
}

/* {{ item.a }} of {"a": null} is there: rendered, not "no member". */
static void
test_null_member(mnemo_store *st)
{
	char	   *out = NULL;

	is_int(mnemo_map_render(st, "a={{ item.a }}", "{\"a\": null}", &out), MNEMO_OK,
		   "a member that is null renders");
	is_str(out, "a=null", "as JSON null");
	free(out);
	out = NULL;
	is_int(mnemo_map_render(st, "a={{ item.a.b }}", "{\"a\": null}", &out), MNEMO_ERR_INVALID_ARGUMENT,
		   "a member under a null one is missing");
	free(out);
}

/* Map ids are per session: two sessions' AgenticMaps may share one. */
static void
test_same_map_id(mnemo_store *st)
{
	server		srv;
	seen		s = {0};
	char		url[128];
	char	   *map_id = NULL;
	mnemo_map_options o;
	mnemo_map_run_stats stats;
	const char *sessions[2] = {"mh_same1", "mh_same2"};

	server_start(&srv, "model gpt-4o-mini\nreply repeat=forever\n  text \"done\"\n");
	options_for(&o, &srv, &s, url);
	o.agentic = true;
	o.map_id = "m_same";
	for (int i = 0; i < 2; i++)
	{
		new_session(st, sessions[i]);
		is_int(mnemo_map_create(st, sessions[i], "Do {{ item }}", "[\"x\"]", &o, &map_id), MNEMO_OK,
			   "%s: an AgenticMap m_same", sessions[i]);
		free(map_id);
		map_id = NULL;
		is_int(mnemo_map_run(st, sessions[i], "m_same", &o, &stats), MNEMO_OK, "%s: it runs", sessions[i]);
		is_int(stats.done, 1, "%s: its item is done", sessions[i]);
		is_str(s.kinds[i], "ok", "%s: %s", sessions[i], s.outputs[i]);
	}
	server_stop(&srv);
}

/* An items line holding two values, or one and junk, is refused with its line. */
static void
test_items_file(void)
{
	const char *bin = getenv("MNEMO_BIN");
	char		dir[] = "/tmp/mnemo-mh.XXXXXX";
	char		cmd[2048];
	char		path[256];
	FILE	   *f;
	char	   *err;
	int			rc;

	if (bin == NULL || mkdtemp(dir) == NULL)
		bail_out("MNEMO_BIN is not set, or no temporary directory");
	snprintf(path, sizeof(path), "%s/tpl", dir);
	f = fopen(path, "w");
	fputs("Is {{ item.n }} even?\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/items.jsonl", dir);
	f = fopen(path, "w");
	fputs("{\"n\": 1}\n{\"n\": 2} {\"n\": 3}\n", f);
	fclose(f);
	/* no provider is reachable: the file is refused before any map exists */
	snprintf(cmd, sizeof(cmd),
			 "OPENAI_BASE_URL=http://127.0.0.1:9/v1 OPENAI_API_KEY=x %s map --template %s/tpl "
			 "--items %s/items.jsonl --provider openai --model gpt-4o-mini --max-retries 0 "
			 "--id mh_two >%s/out 2>%s/err", bin, dir, dir, dir, dir);
	rc = system(cmd);
	ok(rc != 0, "two values on one line: mnemo map fails (status %d)", rc);
	snprintf(path, sizeof(path), "%s/err", dir);
	err = slurp(path);
	ok(err && strstr(err, "items.jsonl:2: not JSON"), "the message names the line: %s", err ? err : "");
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void) system(cmd);
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);
	test_trailing_text(st);
	test_null_member(st);
	test_same_map_id(st);
	test_items_file();
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
