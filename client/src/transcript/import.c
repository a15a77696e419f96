/*
 * import.c
 *		mnemo_import_jsonl: a transcript into a new session, in one
 *		transaction.
 *
 * The driver reads lines of any length (getline), parses each with json-c
 * (import_parse.c), asks its readers in turn whether the first record is
 * their format (options.format names it instead: import_formats.c) and
 * hands every record to that reader, which builds messages and pushes them
 * (import_batch.c).  A record is a line of JSON Lines, an element of a
 * top-level JSON array, or an element of the array that a session document
 * holds (the reader's document callback names it); a first value that does
 * not end with its line makes the input one JSON document, read whole.
 *
 * Atomicity: the session is created and every batch is appended between one
 * BEGIN and COMMIT, and any error rolls it all back, so a failed import
 * leaves no session and no message behind.  A file of several sessions
 * (import_sessions.c) makes them all in that one transaction.
 *
 * Events: the handle's subscribers are set aside for the transaction and
 * hear one session_created a session after the commit, never of rows that a
 * rollback took back.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <json.h>

#include "events/events.h"
#include "transcript/transcript.h"

/* A line holds its parts two levels down (the message, its parts array). */
#define JSON_DEPTH (MNEMO_MAX_JSON_DEPTH + 2)

/*
 * A record to the reader.  The first one refused, when --format named the
 * reader rather than the content, more likely says the format is wrong
 * than that the record is: the error says what it was read as.  An error
 * of the server, with a SQLSTATE, is left as it is.
 */
static int
feed_record(mn_import *imp, int64_t lineno, mn_span text, struct json_object *obj)
{
	int			rc;
	char	   *why;

	imp->records++;
	rc = imp->reader->line(imp, imp->rstate, lineno, text.p, text.len, obj);
	if (rc != MNEMO_ERR_FORMAT || imp->records != 1 || imp->opts->format == NULL ||
		imp->n_finished > 0 || imp->st->sqlstate[0] != '\0')
		return rc;					/* (a server's error keeps its SQLSTATE) */
	if ((why = strdup(imp->st->errmsg ? imp->st->errmsg : "")) == NULL)
		return rc;
	rc = mn_fail(imp->st, MNEMO_ERR_FORMAT, "%s (read as %s, as --format said: is that the "
				 "format?)", why, imp->reader->name);
	free(why);
	return rc;
}

/*
 * A value: a line, the whole document (top), or an element of a top-level
 * array.  Its records are the elements of a top-level array, the array a
 * session document holds (the reader's document callback names it; each
 * document after the first begins a session), or the value itself; a record
 * after a document joins that document's session (a header line is such a
 * document, and its session's first record).
 * Each element is named by the line it starts on.
 */
static int
feed_value(mn_import *imp, int64_t lineno, mn_span text, struct json_object *obj, bool top)
{
	struct json_object *arr = NULL;
	const char *key;
	mn_span		arr_text = text;
	const char *at = text.p;
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	if (imp->reader == NULL && (rc = mn_import_detect(imp, lineno, obj)) != MNEMO_OK)
		return rc;
	if (imp->reader == NULL)
		return MNEMO_OK;
	if (imp->opts->format != NULL && !imp->format_checked)
		mn_import_check_named(imp, lineno, obj);
	if (top && json_object_is_type(obj, json_type_array))
		arr = obj;
	else if (json_object_is_type(obj, json_type_object) && imp->reader->document != NULL &&
			 (key = imp->reader->document(obj)) != NULL)
	{
		if (imp->documents++ > 0 && (rc = mn_import_next_session(imp, lineno)) != MNEMO_OK)
			return rc;
		imp->session_line = lineno;
		if (imp->reader->open != NULL &&
			(rc = imp->reader->open(imp, imp->rstate, lineno, obj, text)) != MNEMO_OK)
			return rc;
		if (key[0] == '\0')
			return feed_record(imp, lineno, text, obj);
		if ((arr = mn_js_arr(obj, key)) == NULL || !mn_json_member(text, key, &arr_text))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"%s\" must be an array",
						   lineno, key);
	}
	if (arr == NULL)
		return feed_record(imp, lineno, text, obj);
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(arr); i++)
	{
		mn_span		el;

		if (!mn_json_next_element(arr_text, &pos, &el))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": element %zu not found",
						   lineno, i);
		lineno += mn_import_newlines(at, el.p);
		at = el.p;
		if (arr == obj)
			rc = feed_value(imp, lineno, el, json_object_array_get_idx(arr, i), false);
		else
			rc = feed_record(imp, lineno, el, json_object_array_get_idx(arr, i));
	}
	return rc;
}

/* The rest of in after the text read so far: one JSON document. */
static int
read_document(mn_import *imp, struct json_tokener *tok, FILE *in, int64_t first_line,
			  char **line, size_t *cap, ssize_t n)
{
	mn_buf		doc = {0};
	struct json_object *obj = NULL;
	bool		incomplete;
	int			rc;

	mn_buf_put(&doc, *line, (size_t) n);
	errno = 0;
	while ((n = getline(line, cap, in)) >= 0)
	{
		imp->done += (uint64_t) n;
		mn_buf_put(&doc, *line, (size_t) n);
	}
	if (ferror(in))
		rc = mn_fail(imp->st, errno == ENOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_IO,
					 "reading the transcript failed: %s", errno ? strerror(errno) : "read error");
	else if (doc.oom)
		rc = mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	else
		rc = mn_import_parse_value(imp, tok, first_line, doc.data, doc.len, &obj, &incomplete);
	/* the input ended inside the document: a file cut short, which
	 * --lenient cannot mend (there is no last line to leave out) */
	if (rc != MNEMO_OK && incomplete)
		rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
					 "line %" PRId64 ": not valid JSON: the file ends inside the document begun "
					 "on line %" PRId64 " (it is cut short)",
					 first_line + mn_import_newlines(doc.data, doc.data + doc.len) -
					 (doc.len > 0 && doc.data[doc.len - 1] == '\n'), first_line);
	if (rc == MNEMO_OK)
		rc = feed_value(imp, first_line, (mn_span) {doc.data, doc.len}, obj, true);
	json_object_put(obj);
	mn_buf_free(&doc);
	return rc;
}

/*
 * Read every line and send what the reader builds.  A first value that
 * does not end with its line is a JSON document (SWE-agent's trajectories,
 * a pretty-printed message array), read whole.  A last line cut short is
 * what the log of an agent still running, or killed, ends with: lenient
 * skips it and says so.
 */
static int
read_all(mn_import *imp, FILE *in)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n;
	int64_t		lineno = 0;
	bool		first = true;
	int			rc = MNEMO_OK;

	if (tok == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0)
	{
		struct json_object *obj = NULL;
		bool		incomplete;

		lineno++;
		imp->done += (uint64_t) n;
		if (lineno == 1 && mn_import_not_text(line, n) != NULL)
		{
			rc = mn_fail(imp->st, MNEMO_ERR_FORMAT, "line 1: %s", mn_import_not_text(line, n));
			break;
		}
		if (lineno == 1)
			mn_import_skip_bom(line, &n);
		if (mn_import_blank(line, (size_t) n))
			continue;
		rc = mn_import_parse_value(imp, tok, lineno, line, (size_t) n, &obj, &incomplete);
		if (rc != MNEMO_OK && incomplete && first)
		{
			rc = read_document(imp, tok, in, lineno, &line, &cap, n);
			break;
		}
		if (rc != MNEMO_OK)
		{
			/* cut short, and the last line with content? (blank lines,
			 * skipped everywhere, may follow it; a whole line that is
			 * malformed is an error wherever it is) */
			bool		last = incomplete && mn_import_rest_is_blank(in, &line, &cap);

			if (last && imp->opts->lenient)
			{
				mn_clear_error(imp->st);
				mn_import_bookkeeping(imp, lineno, "truncated last line");
				rc = MNEMO_OK;
			}
			else if (last)
			{
				char	   *why = strdup(imp->st->errmsg ? imp->st->errmsg : "");

				rc = mn_fail(imp->st, MNEMO_ERR_FORMAT, "%s (the last line is cut short: "
							 "--lenient skips it)", why ? why : "");
				free(why);
			}
			break;
		}
		first = false;
		rc = feed_value(imp, lineno, (mn_span) {line, (size_t) n}, obj, true);
		json_object_put(obj);
		if (rc != MNEMO_OK)
			break;
		errno = 0;
	}
	if (rc == MNEMO_OK && ferror(in))
	{
		const char *why = errno ? strerror(errno) : "read error";

		if (lineno == 0)
			rc = mn_fail(imp->st, errno == ENOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_IO,
						 "reading the transcript failed: %s", why);
		else
			rc = mn_fail(imp->st, errno == ENOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_IO,
						 "reading the transcript failed after line %" PRId64 ": %s", lineno, why);
	}
	free(line);
	json_tokener_free(tok);
	return rc;
}

int
mn_import_child(mn_import *imp, const char *parent_id, const char *path, const mn_tree *held,
				const size_t *idx, size_t n)
{
	void	   *parent_state = imp->rstate;
	FILE	   *in = NULL;
	int			rc = MNEMO_OK;

	/* the session before is stored: this one starts afresh */
	mn_import_session_reset(imp);
	imp->session_line = n > 0 ? held->recs[idx[0]].line : 1;
	if (!mn_import_strdup(parent_id, &imp->session.parent_id))
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	imp->rstate = NULL;
	if (imp->reader->create != NULL && (imp->rstate = imp->reader->create()) == NULL)
		rc = mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	if (rc == MNEMO_OK && path != NULL && (in = fopen(path, "r")) == NULL)
		rc = mn_fail(imp->st, MNEMO_ERR_IO, "%s", strerror(errno));
	if (rc == MNEMO_OK && in != NULL)
		rc = read_all(imp, in);
	for (size_t i = 0; rc == MNEMO_OK && path == NULL && i < n; i++)
		rc = feed_record(imp, held->recs[idx[i]].line,
						 (mn_span) {held->recs[idx[i]].text, held->recs[idx[i]].len},
						 held->recs[idx[i]].obj);
	if (rc == MNEMO_OK)
		rc = mn_import_finish_session(imp, true);
	if (in != NULL)
		fclose(in);
	if (rc != MNEMO_OK && path != NULL && imp->st->errmsg != NULL)
	{
		char	   *why = strdup(imp->st->errmsg);
		char		sqlstate[6];

		memcpy(sqlstate, imp->st->sqlstate, sizeof(sqlstate));
		rc = mn_fail(imp->st, rc, "%s: %s", path, why != NULL ? why : "");
		memcpy(imp->st->sqlstate, sqlstate, sizeof(sqlstate));
		free(why);
	}
	if (imp->reader->destroy != NULL)
		imp->reader->destroy(imp->rstate);
	imp->rstate = parent_state;
	return rc;
}

/*
 * After the commit: the sessions made, in file order, to the caller (the
 * first one's id and the messages of all) and to subscribers.
 */
static void
report(mn_import *imp, char session_id_out[MNEMO_ID_MAX + 1], int64_t *imported)
{
	int64_t		total = 0;

	if (session_id_out != NULL)
		memcpy(session_id_out, imp->finished[0].id, sizeof(imp->finished[0].id));
	for (size_t i = 0; i < imp->n_finished; i++)
	{
		total += imp->finished[i].messages;
		if (imp->opts->session != NULL)
			imp->opts->session(imp->finished[i].id, imp->finished[i].messages,
							   imp->opts->progress_arg);
		if (imp->finished[i].resumed && imp->opts->updated != NULL)
			imp->opts->updated(imp->finished[i].id, imp->finished[i].messages,
							   imp->opts->progress_arg);
		mn_emit(imp->st, MNEMO_EVENT_SESSION_CREATED, imp->finished[i].id, NULL, 0, NULL, false);
	}
	if (imported != NULL)
		*imported = total;
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

	rc = imp.opts->format != NULL ? mn_import_named_reader(&imp, imp.opts->format) : MNEMO_OK;
	if (rc == MNEMO_OK)
		rc = read_all(&imp, in);
	if (rc == MNEMO_OK)
		rc = mn_import_finish_session(&imp, imp.n_finished > 0);
	if (rc == MNEMO_OK && imp.reader->children != NULL)
		rc = imp.reader->children(&imp, imp.rstate);
	if (rc == MNEMO_OK)
		rc = mn_exec_command(st, "COMMIT");
	mn_import_abandon(&imp);
	if (rc != MNEMO_OK && imp.began)
		rc = mn_rollback(st);

	/* a subscriber added from a progress callback would be lost here */
	if (st->events == NULL)
		st->events = events;
	if (rc == MNEMO_OK)
		report(&imp, session_id_out, imported);

	for (size_t i = 0; i < imp.n_batch; i++)
		mn_import_msg_free(imp.batch[i]);
	free(imp.batch);
	mn_buf_free(&imp.text);
	free(imp.finished);
	if (imp.reader != NULL && imp.reader->destroy != NULL)
		imp.reader->destroy(imp.rstate);
	mn_import_session_reset(&imp);
	return rc;
}
