/*
 * t_files.c
 *		Large files (mnemo_file_handle) against a real server: inline below
 *		the threshold, a sha256-addressed reference at or above it, the
 *		cache, the exploration summary of each type on the fixtures
 *		test/data/file-* and the repo's own sources, binary files refused,
 *		the content never stored, processes handling one file at once, and
 *		the file's id in the compaction footer at every level.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"

static char tmpdir[64];

/* Write len bytes of data to tmpdir/name; the path in a static buffer. */
static const char *
write_tmp(const char *name, const char *data, size_t len)
{
	static char path[160];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		bail_out("cannot write %s", path);
	return path;
}

/* A file of n characters: lines of 'x' with a marker line in the middle. */
static char *
text_of(size_t n, const char *marker)
{
	char	   *s = malloc(n + 1);
	size_t		mid = n / 2;

	if (s == NULL)
		bail_out("out of memory");
	for (size_t i = 0; i < n; i++)
		s[i] = i % 80 == 79 ? '\n' : 'x';
	if (marker != NULL && mid + strlen(marker) < n)
		memcpy(s + mid, marker, strlen(marker));
	s[n] = '\0';
	return s;
}

static int
count_refs(void)
{
	char	   *v = sql_value("SELECT count(*) FROM mnemo.file_references", NULL);
	int			n = atoi(v);

	free(v);
	return n;
}

/* "sha256:" and the sha256sum of the file, computed by coreutils. */
static void
sha256_of(const char *path, char id[72])
{
	char		cmd[256];
	FILE	   *p;

	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	memcpy(id, "sha256:", 7);
	if ((p = popen(cmd, "r")) == NULL || fread(id + 7, 1, 64, p) != 64)
		bail_out("sha256sum %s", path);
	id[71] = '\0';
	pclose(p);
}

static mnemo_file_result *
handle(mnemo_store *st, const char *path, int threshold)
{
	mnemo_file_options o = MNEMO_FILE_OPTIONS_INIT;
	mnemo_file_result *r = NULL;

	o.inline_threshold = threshold;
	if (mnemo_file_handle(st, path, &o, &r) != MNEMO_OK)
		bail_out("mnemo_file_handle(%s): %s", path, mnemo_errmsg(st));
	if (r->ref == NULL)
		bail_out("%s: inline at threshold %d", path, threshold);
	return r;
}

static void
test_threshold(mnemo_store *st)
{
	char	   *below = text_of(39999, NULL);
	char	   *at = text_of(40000, "MARKER-IN-THE-MIDDLE-31337");
	const char *path;
	mnemo_file_result *r = NULL;
	char		id[72];
	char	   *v;
	int			before = count_refs();

	path = write_tmp("below.txt", below, strlen(below));
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_OK, "threshold: 9,999 tokens handled");
	is_int(r->token_count, 9999, "threshold: estimated by mnemo_estimate_tokens");
	ok(r->inline_text != NULL && strcmp(r->inline_text, below) == 0 && r->ref == NULL,
	   "threshold: below the default 10,000 the content is returned inline");
	ok(r->part != NULL && strstr(r->part, "\"type\":\"text\"") != NULL,
	   "threshold: an inline file's part is a text part");
	is_int(count_refs(), before, "threshold: an inline file stores nothing");
	mnemo_file_result_free(r);
	r = NULL;

	path = write_tmp("at.txt", at, strlen(at));
	sha256_of(path, id);
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_OK, "threshold: 10,000 tokens handled");
	ok(r->inline_text == NULL && r->ref != NULL, "threshold: at 10,000 tokens a reference");
	is_str(r->ref->content_id, id, "threshold: the content id is sha256: and sha256sum's digest");
	is_int(r->ref->token_count, 10000, "threshold: the reference keeps the estimate");
	is_str(r->ref->file_type, "text", "threshold: .txt is text");
	ok(!r->cached, "threshold: the first handling is a miss");
	ok(r->part != NULL && strstr(r->part, "\"type\":\"file_ref\"") != NULL &&
	   strstr(r->part, id) != NULL && strstr(r->part, "\"token_count\":10000") != NULL,
	   "threshold: the part is a file_ref with the id and token count");
	is_int(count_refs(), before + 1, "threshold: one reference stored");
	v = sql_value("SELECT count(*) FROM mnemo.file_references WHERE content_id = $1 AND "
				  "strpos(path || file_type || exploration_summary, 'MARKER-IN-THE-MIDDLE') = 0",
				  id);
	is_str(v, "1", "threshold: the content itself is not stored (its middle is nowhere)");
	free(v);
	mnemo_file_result_free(r);
	r = NULL;

	/* the same bytes again, and under another name */
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_OK, "cache: handled again");
	ok(r->cached && strcmp(r->ref->content_id, id) == 0, "cache: a hit, the same id");
	mnemo_file_result_free(r);
	r = NULL;
	path = write_tmp("renamed.md", at, strlen(at));
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_OK, "cache: the bytes under another name");
	ok(r->cached && strcmp(r->ref->file_type, "text") == 0,
	   "cache: content-addressed, the cached reference (type text, not markdown)");
	ok(strstr(r->part, "renamed.md") != NULL, "cache: the part names the path handled now");
	is_int(count_refs(), before + 1, "cache: still one reference");
	mnemo_file_result_free(r);
	free(below);
	free(at);
}

/* The summary of a fixture handled with threshold 1. */
static void
summary_is(mnemo_store *st, const char *path, const char *type, const char *want)
{
	mnemo_file_result *r = handle(st, path, 1);

	is_str(r->ref->file_type, type, "%s: its type", path);
	is_str(r->ref->exploration_summary, want, "%s: the summary", path);
	mnemo_file_result_free(r);
}

static void
summary_has(mnemo_store *st, const char *path, const char *type, const char *const *want,
			size_t n)
{
	mnemo_file_result *r = handle(st, path, 1);

	is_str(r->ref->file_type, type, "%s: its type", path);
	for (size_t i = 0; i < n; i++)
		ok(strstr(r->ref->exploration_summary, want[i]) != NULL,
		   "%s: the summary has \"%s\"", path, want[i]);
	mnemo_file_result_free(r);
}

static void
test_summaries(mnemo_store *st)
{
	static const char *const c_src[] = {
		"\nImports (", "<openssl/evp.h>", "\"files/files.h\"",
		"\nFunctions (6): mnemo_file_result_free, read_file, content_id, make_part, "
		"mn_file_reference, mnemo_file_handle"
	};
	static const char *const c_header[] = {
		"\nTypes (", "mnemo_file_options", "mnemo_file_result", "mnemo_file_handle"
	};
	static const char *const pg_src[] = {"LookupOne", "mnemo_store_file_reference"};
	static const char *const readme[] = {"\nHeadings:\n- mnemo\n  - Contents\n",
	"  - The `mnemo` command\n"};

	summary_is(st, "test/data/file-package.json", "json",
			   "json, 9 lines\n"
			   "Top-level keys (4): name, version, keywords, items\n"
			   "Array fields:\n"
			   "  keywords: 2 items\n"
			   "  items: 2 items; item keys (2): id, label");
	summary_is(st, "test/data/file-broken.json", "json",
			   "json, 2 lines\nNot valid JSON.\nPreview:\n{\"a\": 1, \"b\": [1, 2\nnot json at all");
	summary_is(st, "test/data/file-guide.md", "markdown",
			   "markdown, 16 lines\nHeadings:\n- Guide\n  - Install\n    - From source\n  - Use");
	summary_is(st, "test/data/file-scores.csv", "csv",
			   "csv, 6 lines\nColumns (3): id, full name, score\nRows: 4 (after the header)");
	summary_is(st, "test/data/file-cities.tsv", "tsv",
			   "tsv, 3 lines\nColumns (3): id, city, population\nRows: 2 (after the header)");
	summary_is(st, "test/data/file-compose.yaml", "yaml",
			   "yaml, 9 lines\nTop-level keys (3): version, services, volumes");
	summary_is(st, "test/data/file-settings.toml", "toml",
			   "toml, 8 lines\nTop-level keys (2): title, debug\n"
			   "Sections (2): owner, database.replicas");
	summary_is(st, "test/data/file-parser.py", "python",
			   "python, 24 lines\nImports (2): import os, from typing import List\n"
			   "Classes and types (2): Token (1 methods), Parser (2 methods)\n"
			   "Functions (2): main, serve");
	summary_is(st, "test/data/file-store.ts", "typescript",
			   "typescript, 24 lines\n"
			   "Imports (2): import { Pool } from \"pg\", import type { Config } from \"./config\"\n"
			   "Classes and types (4): Session, SessionId, Role, Store\n"
			   "Functions (3): openStore, close, helper");
	summary_is(st, "test/data/file-app.js", "javascript",
			   "javascript, 13 lines\n"
			   "Imports (2): const express = require(\"express\"), import fs from \"fs\"\n"
			   "Classes and types (1): Server\nFunctions (2): start, stop");
	summary_is(st, "test/data/file-notes.log", "unknown",
			   "unknown, 7 lines\nPreview:\nline one\nline two\nline three\nline four\nline five");
	/* the repo's own files */
	summary_has(st, "client/src/files/handle.c", "c", c_src, 4);
	summary_has(st, "client/include/mnemo/search.h", "c", c_header, 4);
	summary_has(st, "src/context/file_references.c", "c", pg_src, 2);
	summary_has(st, "README.md", "markdown", readme, 2);
}

static void
test_refused(mnemo_store *st)
{
	mnemo_file_result *r = NULL;
	int			before = count_refs();
	const char *path;

	path = write_tmp("image.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_ERR_BINARY_FILE,
		   "binary: NUL bytes are refused (MNEMO_ERR_BINARY_FILE)");
	ok(strstr(mnemo_errmsg(st), "binary") != NULL, "binary: the message says so: %s",
	   mnemo_errmsg(st));
	path = write_tmp("latin1.txt", "caf\xe9 cr\xe8me\n", 11);
	is_int(mnemo_file_handle(st, path, NULL, &r), MNEMO_ERR_BINARY_FILE,
		   "binary: text that is not UTF-8 is refused");
	ok(r == NULL, "binary: out is left NULL");
	is_int(count_refs(), before, "binary: nothing stored");
	is_int(mnemo_file_handle(st, "test/data/file-no-such-file.txt", NULL, &r), MNEMO_ERR_IO,
		   "missing: MNEMO_ERR_IO");
	ok(strstr(mnemo_errmsg(st), "file-no-such-file.txt") != NULL, "missing: names the path");
	is_int(mnemo_file_handle(st, "test/data", NULL, &r), MNEMO_ERR_IO,
		   "a directory: MNEMO_ERR_IO");
	is_int(mnemo_file_handle(st, NULL, NULL, &r), MNEMO_ERR_INVALID_ARGUMENT,
		   "no path: INVALID_ARGUMENT");
	is_int(mnemo_file_handle(st, "test/data/file-app.js", NULL, NULL),
		   MNEMO_ERR_INVALID_ARGUMENT, "no out: INVALID_ARGUMENT");
}

/* The part appended to a session renders as the [FILE: ...] block. */
static void
test_attach(mnemo_store *st)
{
	mnemo_file_result *r = handle(st, "test/data/file-parser.py", 1);
	mnemo_new_part part = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
	mnemo_context *ctx = NULL;
	char		want[512];

	new_session(st, "files-attach");
	part.content = r->part;
	msg.role = "user";
	msg.parts = &part;
	msg.n_parts = 1;
	is_int(mnemo_message_append(st, "files-attach", &msg, NULL), MNEMO_OK,
		   "attach: the part appends as is");
	is_int(mnemo_context_build(st, "files-attach", 100000, &ctx), MNEMO_OK, "attach: context");
	snprintf(want, sizeof(want),
			 "[FILE: test/data/file-parser.py]\nContent-ID: %s\nType: python\nTokens: %d\n"
			 "Exploration Summary:\n%s\n[/FILE]",
			 r->ref->content_id, r->ref->token_count, r->ref->exploration_summary);
	is_str(ctx && ctx->count == 1 ? ctx->items[0].content : NULL, want,
		   "attach: build_context renders the [FILE: ...] block with the Content-ID line");
	mnemo_context_free(ctx);
	mnemo_file_result_free(r);
}

/*
 * Processes that handle one new file at the same moment: each gets its
 * reference, none an error, and one row is stored.
 */
static void
test_processes(void)
{
	enum
	{
	NPROC = 6};
	char	   *text = text_of(4000, "PROCESSES");
	const char *path = write_tmp("shared.c", text, strlen(text));
	char		id[72];
	int			go[2];
	pid_t		pids[NPROC];
	int			good = 0;
	char	   *v;

	sha256_of(path, id);
	if (pipe(go) != 0)
		bail_out("pipe");
	fflush(stdout);
	for (int i = 0; i < NPROC; i++)
	{
		if ((pids[i] = fork()) == 0)
		{
			mnemo_store *st = mnemo_store_open(NULL);
			mnemo_file_options o = MNEMO_FILE_OPTIONS_INIT;
			mnemo_file_result *r = NULL;
			char		c;
			int			rc;

			close(go[1]);
			/* connected; wait for the others, then all at once */
			if (read(go[0], &c, 1) != 0)
				_exit(3);
			o.inline_threshold = 1;
			rc = mnemo_file_handle(st, path, &o, &r);
			if (rc != MNEMO_OK)
				fprintf(stderr, "child %d: %s\n", i, mnemo_errmsg(st));
			rc = rc == MNEMO_OK && strcmp(r->ref->content_id, id) == 0 ? 0 : 1;
			mnemo_file_result_free(r);
			mnemo_store_close(st);
			_exit(rc);
		}
	}
	close(go[0]);
	sleep_ms(300);
	close(go[1]);				/* every child's read returns now */
	for (int i = 0; i < NPROC; i++)
	{
		int			status;

		if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0)
			good++;
	}
	is_int(good, NPROC, "processes: %d processes handling one new file at once all succeed",
		   NPROC);
	v = sql_value("SELECT count(*) FROM mnemo.file_references WHERE content_id = $1", id);
	is_str(v, "1", "processes: one reference stored");
	free(v);
	free(text);
}

/*
 * A file attached in the first user message: its id is in the footer of
 * the level-1 summaries, of the condensation above them, and of level 3.
 */
static void
test_footer(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result cr;
	mnemo_new_session spec = {0};
	mnemo_file_result *f = handle(st, "test/data/file-store.ts", 1);
	mnemo_summary_nodes *nodes = NULL;
	char		url[96];
	char		footer[128];
	int			leaves_with = 0;

	snprintf(footer, sizeof(footer), "[LCM File IDs: %s]", f->ref->content_id);
	spec.id = "files-footer";
	spec.provider_id = "openai";
	spec.model_id = "gpt-chat";
	create_session(st, &spec);
	for (int i = 0; i < 9; i++)
	{
		mnemo_new_message m[2] = {MNEMO_NEW_MESSAGE_INIT, MNEMO_NEW_MESSAGE_INIT};
		mnemo_new_part user[2] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
		mnemo_new_part answer = MNEMO_NEW_PART_INIT;
		char		utext[700],
					atext[700];

		snprintf(utext, sizeof(utext), "Question %d: %0600d", i, i);
		snprintf(atext, sizeof(atext), "Answer %d: %0600d", i, i);
		user[0].type = "text";
		user[0].text = utext;
		user[1].content = f->part;
		answer.type = "text";
		answer.text = atext;
		m[0].role = "user";
		m[0].parts = user;
		m[0].n_parts = i == 0 ? 2 : 1;
		m[1].role = "assistant";
		m[1].parts = &answer;
		m[1].n_parts = 1;
		if (mnemo_messages_append(st, "files-footer", m, 2, NULL) != MNEMO_OK)
			bail_out("append: %s", mnemo_errmsg(st));
	}

	/* two leaves by L1, the model naming no file */
	server_start(&s, "reply\n  text \"first\"\nreply\n  text \"second\"\n");
	o.provider = "openai";
	o.model = "gpt-compact";
	snprintf(url, sizeof(url), "%s/v1", s.url);
	o.base_url = url;
	o.api_key = KEY;
	o.max_retries = -1;
	o.tail_messages = 2;
	o.block_tokens = 1;
	o.budget_tokens = 1;
	o.max_rounds = 2;
	is_int(mnemo_compact(st, "files-footer", &o, &cr), MNEMO_OK, "footer: two rounds");
	is_int(cr.levels[1], 2, "footer: both at L1");
	server_stop(&s);
	if (mnemo_summary_nodes_get(st, "files-footer", false, &nodes) != MNEMO_OK)
		bail_out("nodes: %s", mnemo_errmsg(st));
	for (size_t i = 0; i < nodes->count; i++)
	{
		mnemo_parts *parts = NULL;

		if (mnemo_parts_get(st, "files-footer", nodes->items[i].id, &parts) != MNEMO_OK)
			bail_out("parts: %s", mnemo_errmsg(st));
		if (i == 0 && parts->count > 0 && parts->items[0].text != NULL &&
			strstr(parts->items[0].text, footer) != NULL)
			leaves_with++;
		mnemo_parts_free(parts);
	}
	is_int(leaves_with, 1, "footer: the L1 summary of the first block carries the file's id");
	mnemo_summary_nodes_free(nodes);
	nodes = NULL;

	/* then, the provider down: L3 leaves and a condensation */
	o.base_url = "http://127.0.0.1:9/v1";
	o.max_rounds = 10;
	is_int(mnemo_compact(st, "files-footer", &o, &cr), MNEMO_OK, "footer: down to condensation");
	ok(cr.levels[3] >= 1, "footer: L3 with the provider down");
	if (mnemo_summary_nodes_get(st, "files-footer", false, &nodes) != MNEMO_OK ||
		nodes->count == 0)
		bail_out("nodes: %s", mnemo_errmsg(st));
	is_str(nodes->items[0].kind, "condensed", "footer: the oldest live node is a condensation");
	is_int(nodes->items[0].level, 3, "footer: made by L3");
	{
		mnemo_parts *parts = NULL;

		if (mnemo_parts_get(st, "files-footer", nodes->items[0].id, &parts) != MNEMO_OK)
			bail_out("parts: %s", mnemo_errmsg(st));
		ok(parts->count > 0 && parts->items[0].text != NULL &&
		   strstr(parts->items[0].text, footer) != NULL,
		   "footer: the file's id survives L1 -> condensation -> L3 (%s)", footer);
		mnemo_parts_free(parts);
	}
	mnemo_summary_nodes_free(nodes);
	mnemo_file_result_free(f);
}

int
main(void)
{
	mnemo_store *st;
	char		cmd[96];
	int			rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mnemo-files.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		bail_out("mkdtemp");
	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);
	test_threshold(st);
	test_summaries(st);
	test_refused(st);
	test_attach(st);
	test_processes();
	test_footer(st);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	rc = system(cmd);
	(void) rc;
	return tap_done();
}
