/*
 * import.c
 *		mnemo_import_jsonl: a transcript into a new session, in one
 *		transaction.
 *
 * The driver reads lines of any length (getline), parses each with json-c,
 * asks its readers in turn whether the first non-empty line is their
 * format (a line of mnemo's export has "role" and "parts"; a Claude Code
 * record has a "type" and neither) and hands every line to that reader,
 * which builds messages and pushes them (import_batch.c).
 *
 * Atomicity: the session is created and every batch is appended between one
 * BEGIN and COMMIT, and any error rolls it all back, so a failed import
 * leaves no session and no message behind.
 *
 * Events: the handle's subscribers are set aside for the transaction and
 * hear one session_created after the commit, never of rows that a rollback
 * took back.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <json.h>

#include "events/events.h"
#include "transcript/transcript.h"

/* A line holds its parts two levels down (the message, its parts array). */
#define JSON_DEPTH (MNEMO_MAX_JSON_DEPTH + 2)

#define lengthof(a) (sizeof(a) / sizeof((a)[0]))

/* The formats, asked in this order whether a first line is theirs. */
static const mn_reader *const readers[] = {
	&mn_mnemo_reader,
	&mn_claude_code_reader,
};

/* ------------------------------------------------------------------------
 * The driver
 * ------------------------------------------------------------------------ */

static bool
blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* The line parsed strictly, nothing but white space after the value. */
static int
parse_line(mn_import *imp, struct json_tokener *tok, int64_t lineno, const char *text,
		   size_t len, struct json_object **out)
{
	struct json_object *obj;
	size_t		end;

	if (len > INT_MAX)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": longer than %d bytes",
					   lineno, INT_MAX);
	if (!mn_utf8_valid(text, len))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid UTF-8", lineno);
	json_tokener_reset(tok);
	obj = json_tokener_parse_ex(tok, text, (int) len);
	if (obj == NULL)
	{
		enum json_tokener_error err = json_tokener_get_error(tok);

		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid JSON: %s", lineno,
					   err == json_tokener_continue ? "unexpected end of line"
					   : json_tokener_error_desc(err));
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
	{
		if (strchr(" \t\r\n", text[end]) == NULL)
		{
			json_object_put(obj);
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": not valid JSON: text after the value", lineno);
		}
	}
	*out = obj;
	return MNEMO_OK;
}

static int
detect(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	if (json_object_is_type(obj, json_type_object))
		for (size_t i = 0; imp->reader == NULL && i < lengthof(readers); i++)
			if (readers[i]->detect(obj))
				imp->reader = readers[i];
	if (imp->reader == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": neither a mnemo export line (a JSON object with "
					   "\"role\" and \"parts\") nor a Claude Code record (with \"type\")",
					   lineno);
	if (imp->reader->create != NULL && (imp->rstate = imp->reader->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

/* Read every line and send what the reader builds. */
static int
read_all(mn_import *imp, FILE *in)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n;
	int64_t		lineno = 0;
	int			rc = MNEMO_OK;

	if (tok == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0)
	{
		struct json_object *obj = NULL;

		lineno++;
		imp->done += (uint64_t) n;
		if (blank(line, (size_t) n))
			continue;
		if ((rc = parse_line(imp, tok, lineno, line, (size_t) n, &obj)) != MNEMO_OK)
			break;
		if (imp->reader == NULL)
			rc = detect(imp, lineno, obj);
		if (rc == MNEMO_OK)
			rc = imp->reader->line(imp, imp->rstate, lineno, line, (size_t) n, obj);
		json_object_put(obj);
		if (rc != MNEMO_OK)
			break;
		errno = 0;
	}
	if (rc == MNEMO_OK && ferror(in))
		rc = mn_fail(imp->st, errno == ENOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_IO,
					 "reading the transcript failed after line %" PRId64 ": %s", lineno,
					 errno ? strerror(errno) : "read error");
	free(line);
	json_tokener_free(tok);
	if (rc == MNEMO_OK && imp->reader != NULL && imp->reader->finish != NULL)
		rc = imp->reader->finish(imp, imp->rstate);
	return rc;
}

static void
session_clear(mn_import_session *s)
{
	free(s->want_id);
	free(s->model_id);
	free(s->provider_id);
	free(s->agent);
	free(s->title);
	free(s->metadata);
	memset(s, 0, sizeof(*s));
}

MNEMO_API int
mnemo_import_jsonl(mnemo_store *st, FILE *in, const mnemo_import_options *opts,
				   char session_id_out[MNEMO_ID_MAX + 1], int64_t *imported)
{
	static const mnemo_import_options defaults = {0};
	mn_import	imp = {0};
	struct mn_events *events;
	struct stat sb;
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (in == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the input stream is NULL");
	imp.st = st;
	imp.opts = opts != NULL ? opts : &defaults;
	imp.new_ids = imp.opts->new_ids;
	if (fstat(fileno(in), &sb) == 0 && S_ISREG(sb.st_mode))
	{
		off_t		at = ftello(in);

		imp.total = (uint64_t) sb.st_size - (at > 0 && at <= sb.st_size ? (uint64_t) at : 0);
	}

	/* subscribers hear of the session once it is committed */
	events = st->events;
	st->events = NULL;

	rc = read_all(&imp, in);
	if (rc == MNEMO_OK)
		rc = mn_import_flush(&imp);
	if (rc == MNEMO_OK)
		rc = mn_exec_command(st, "COMMIT");
	if (rc != MNEMO_OK && imp.began)
		rc = mn_rollback(st);

	/* a subscriber added from a progress callback would be lost here */
	if (st->events == NULL)
		st->events = events;
	if (rc == MNEMO_OK)
	{
		if (session_id_out != NULL)
			memcpy(session_id_out, imp.session_id, strlen(imp.session_id) + 1);
		if (imported != NULL)
			*imported = imp.imported;
		mn_emit(st, MNEMO_EVENT_SESSION_CREATED, imp.session_id, NULL, 0, NULL, false);
	}

	for (size_t i = 0; i < imp.n_batch; i++)
		mn_import_msg_free(imp.batch[i]);
	free(imp.batch);
	mn_buf_free(&imp.text);
	if (imp.reader != NULL && imp.reader->destroy != NULL)
		imp.reader->destroy(imp.rstate);
	session_clear(&imp.session);
	return rc;
}
