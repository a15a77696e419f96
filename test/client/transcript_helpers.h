/*
 * transcript_helpers.h
 *		What the transcript tests (t_jsonl.c, t_claude_code.c,
 *		t_import_sessions.c) do the same way: import a text, export a
 *		session to a string, compare exports, count sessions.  Include after
 *		helpers.h.
 */
#ifndef MNEMO_TEST_TRANSCRIPT_HELPERS_H
#define MNEMO_TEST_TRANSCRIPT_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo.h"
#include "tap.h"

/* A monotonic clock, in seconds. */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The export of a session as a string (NULL, with a failed test, on error). */
static inline char *
export_text(mnemo_store *st, const char *session_id, size_t *len)
{
	char	   *buf = NULL;
	size_t		size = 0;
	FILE	   *out = open_memstream(&buf, &size);
	int			rc;

	if (out == NULL)
		bail_out("open_memstream: %s", strerror(errno));
	rc = mnemo_export_jsonl(st, session_id, out);
	fclose(out);
	if (rc != MNEMO_OK)
	{
		ok(0, "export of %s: %s", session_id, mnemo_errmsg(st));
		free(buf);
		return NULL;
	}
	if (len != NULL)
		*len = size;
	return buf;
}

/* A temporary regular file holding len bytes of text, at its start. */
static inline FILE *
file_of(const char *text, size_t len)
{
	FILE	   *f = tmpfile();

	if (f == NULL)
		bail_out("tmpfile: %s", strerror(errno));
	if (len > 0 && fwrite(text, 1, len, f) != len)
		bail_out("writing a temporary file: %s", strerror(errno));
	fflush(f);
	rewind(f);
	return f;
}

/* mnemo_import_jsonl of text, read from a temporary file. */
static inline int
import_text(mnemo_store *st, const char *text, const mnemo_import_options *opts,
			char sid[MNEMO_ID_MAX + 1], int64_t *n)
{
	FILE	   *f = file_of(text, strlen(text));
	int			rc = mnemo_import_jsonl(st, f, opts, sid, n);

	fclose(f);
	return rc;
}

/* The sessions the store sees, inactive ones too. */
static inline size_t
count_sessions(mnemo_store *st)
{
	mnemo_session_filter filter = {.include_inactive = true,.limit = 100000};
	mnemo_sessions *list = NULL;
	size_t		n;

	if (mnemo_session_list(st, &filter, &list) != MNEMO_OK)
		bail_out("mnemo_session_list: %s", mnemo_errmsg(st));
	n = list->count;
	mnemo_sessions_free(list);
	return n;
}

/* Whether the store sees session id. */
static inline bool
session_exists(mnemo_store *st, const char *id)
{
	mnemo_session *s = NULL;
	int			rc = mnemo_session_get(st, id, &s);

	mnemo_session_free(s);
	if (rc != MNEMO_OK && rc != MNEMO_ERR_SESSION_NOT_FOUND)
		bail_out("mnemo_session_get: %s", mnemo_errmsg(st));
	return rc == MNEMO_OK;
}

/* The export after its header line: the messages. */
static inline const char *
body_of(const char *text)
{
	const char *nl = strchr(text, '\n');

	return nl != NULL ? nl + 1 : "";
}

/* Every "id": "..." value emptied, to compare exports made with new ids. */
static inline char *
without_ids(const char *text)
{
	char	   *out = malloc(strlen(text) + 1);
	const char *p = text;
	char	   *o = out;

	if (out == NULL)
		bail_out("out of memory");
	while (*p)
	{
		if (strncmp(p, "\"id\": \"", 7) == 0)
		{
			memcpy(o, p, 7);
			o += 7;
			p += 7;
			while (*p && *p != '"')
				p++;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return out;
}

#endif
