/*
 * import.c
 *		mnemo_import_jsonl: a transcript into a new session, in one
 *		transaction.
 *
 * The driver reads lines of any length (getline), parses each with json-c,
 * asks its readers in turn whether the first record is their format
 * (options.format names it instead) and hands every record to that reader,
 * which builds messages and pushes them (import_batch.c).  A record is a
 * line of JSON Lines, an element of a top-level JSON array, or an element
 * of the array that a session document holds (the reader's document
 * callback names it); a first value that does not end with its line makes the input
 * one JSON document, read whole.
 *
 * Atomicity: the session is created and every batch is appended between one
 * BEGIN and COMMIT, and any error rolls it all back, so a failed import
 * leaves no session and no message behind.  A file of several sessions
 * (next_session) makes them all in that one transaction.
 *
 * Events: the handle's subscribers are set aside for the transaction and
 * hear one session_created a session after the commit, never of rows that a
 * rollback took back.
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

/* The formats, asked in this order whether a first record is theirs (the
 * narrower tests first: an OpenAI message is any object with a "role"). */
static const mn_reader *const readers[] = {
	&mn_mnemo_reader,
	&mn_pi_reader,
	&mn_claude_code_reader,
	&mn_swe_agent_reader,
	&mn_openhands_reader,
	&mn_codex_reader,
	&mn_anthropic_reader,
	&mn_openai_reader,
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

/* Whether nothing but blank lines is left in in (read to find out; a read
 * error ends it too, and shows in ferror). */
static bool
rest_is_blank(FILE *in, char **line, size_t *cap)
{
	ssize_t		n;

	while ((n = getline(line, cap, in)) >= 0)
		if (!blank(*line, (size_t) n))
			return false;
	return true;
}

/*
 * A UTF-8 byte order mark at the very start of the input dropped: editors
 * on Windows and PowerShell's redirection write one, and no JSON parser
 * takes it (RFC 8259 lets a parser ignore it).  Anywhere else it stays, and
 * is what it is there: a character, or an error outside a string.
 */
static void
skip_bom(char *line, ssize_t *n)
{
	if (*n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
	{
		memmove(line, line + 3, (size_t) (*n - 3) + 1);
		*n -= 3;
	}
}

/*
 * What the first line says the file is when it is not UTF-8 text, or NULL:
 * a compressed log (by its magic number: a .jsonl.gz kept to save room),
 * or UTF-16 (or UTF-32): a UTF-16 byte order mark, or a NUL among its
 * first two bytes, which no UTF-8 JSON has (JSON escapes NUL; Windows
 * PowerShell 5's ">" writes UTF-16 with a mark).  Naming it tells the user
 * what to do where "not valid UTF-8" or a JSON error would not.
 */
static const char *
not_text(const char *line, ssize_t n)
{
	static const struct
	{
		const char *magic;
		size_t		len;
		const char *what;
	}			packed[] = {
		{"\x1F\x8B", 2, "the file is gzip-compressed: decompress it first (gunzip, or zcat FILE | mnemo import -)"},
		{"\x28\xB5\x2F\xFD", 4, "the file is zstd-compressed: decompress it first (zstd -d)"},
		{"\xFD\x37\x7A\x58\x5A\x00", 6, "the file is xz-compressed: decompress it first (unxz)"},
		{"BZh", 3, "the file is bzip2-compressed: decompress it first (bunzip2)"},
		{"PK\x03\x04", 4, "the file is zip-compressed: unzip it first"},
	};

	for (size_t i = 0; i < mn_lengthof(packed); i++)
		if ((size_t) n >= packed[i].len && memcmp(line, packed[i].magic, packed[i].len) == 0 &&
			(i != 3 || (n >= 4 && line[3] >= '1' && line[3] <= '9')))
			return packed[i].what;
	if (n >= 2 && (memcmp(line, "\xFF\xFE", 2) == 0 || memcmp(line, "\xFE\xFF", 2) == 0 ||
				   line[0] == '\0' || line[1] == '\0'))
		return "the file is UTF-16 (or UTF-32), not UTF-8: convert it first "
			"(iconv -f UTF-16 -t UTF-8)";
	return NULL;
}

/*
 * Whether text, valid UTF-8 but for its end, stops inside a character (a
 * lead byte without all its continuation bytes): a line cut short there by
 * a killed writer, not a file that is not UTF-8.  Trailing line ends, which
 * a cut line with blank lines after it keeps, are not part of it.
 */
static bool
utf8_cut_short(const char *text, size_t len)
{
	size_t		end = len,
				lead;
	unsigned char c;
	size_t		want;

	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r'))
		end--;
	for (lead = end; lead > 0 && end - lead < 4 && ((unsigned char) text[lead - 1] & 0xC0) == 0x80;)
		lead--;
	if (lead == 0)
		return false;
	lead--;
	c = (unsigned char) text[lead];
	want = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
	return want > end - lead && mn_utf8_valid(text, lead);
}

static int64_t
newlines(const char *from, const char *to)
{
	int64_t		n = 0;

	for (; from < to; from++)
		n += *from == '\n';
	return n;
}

/*
 * text parsed strictly as one value, nothing but white space after it.  A
 * value cut short is *incomplete (the first line of a pretty-printed
 * document, or a truncated last line, cut inside a character too); the
 * error names the line where the parser stopped.  Any other error (text
 * after the value, a bad character) is not a cut: --lenient is no remedy.
 */
static int
parse_value(mn_import *imp, struct json_tokener *tok, int64_t lineno, const char *text,
			size_t len, struct json_object **out, bool *incomplete)
{
	struct json_object *obj;
	const char *nul;
	size_t		end;

	*incomplete = false;
	if (len > INT_MAX)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": longer than %d bytes",
					   lineno, INT_MAX);
	if (!mn_utf8_valid(text, len))
	{
		*incomplete = utf8_cut_short(text, len);
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid UTF-8", lineno);
	}
	/* valid UTF-8, but not text: json-c would stop at it, "unexpected end
	 * of data" on a line that goes on */
	if ((nul = memchr(text, '\0', len)) != NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": a NUL byte: not a text "
					   "file (binary data, or UTF-16?)", lineno + newlines(text, nul));
	json_tokener_reset(tok);
	obj = json_tokener_parse_ex(tok, text, (int) len);
	/* json-c parses null to NULL, and no error */
	if (obj == NULL && json_tokener_get_error(tok) == json_tokener_success)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": null is not a record (a "
					   "JSON object)", lineno + newlines(text, text + json_tokener_get_parse_end(tok)) -
					   (json_tokener_get_parse_end(tok) > 0 &&
						text[json_tokener_get_parse_end(tok) - 1] == '\n'));
	if (obj == NULL)
	{
		enum json_tokener_error err = json_tokener_get_error(tok);
		size_t		at = json_tokener_get_parse_end(tok);

		/* the line the parser stopped on, not the one after its newline */
		if (at > len)
			at = len;
		if (at > 0 && text[at - 1] == '\n')
			at--;
		*incomplete = err == json_tokener_continue;
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid JSON: %s",
					   lineno + newlines(text, text + at),
					   *incomplete ? "unexpected end of line" : json_tokener_error_desc(err));
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
	{
		if (strchr(" \t\r\n", text[end]) == NULL)
		{
			json_object_put(obj);
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": not valid JSON: text after the value",
						   lineno + newlines(text, text + end));
		}
	}
	*out = obj;
	return MNEMO_OK;
}

MNEMO_API const char *
mnemo_import_formats(void)
{
	return "mnemo, claude-code, pi, openai, anthropic, swe-agent, openhands, codex";
}

MNEMO_API bool
mnemo_import_format_known(const char *name)
{
	for (size_t i = 0; name != NULL && i < mn_lengthof(readers); i++)
		if (strcmp(readers[i]->name, name) == 0)
			return true;
	return false;
}

static int
choose(mn_import *imp, const mn_reader *r)
{
	imp->reader = r;
	if (r->create != NULL && (imp->rstate = r->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

/* The reader of --format, before anything is read. */
static int
named_reader(mn_import *imp, const char *name)
{
	for (size_t i = 0; i < mn_lengthof(readers); i++)
		if (strcmp(readers[i]->name, name) == 0)
			return choose(imp, readers[i]);
	return mn_fail(imp->st, MNEMO_ERR_INVALID_ARGUMENT, "unknown transcript format \"%s\" (one of %s)",
				   name, mnemo_import_formats());
}

/* The format of the first value: an object, or an array's first element. */
static int
detect(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	struct json_object *probe = obj;

	if (json_object_is_type(obj, json_type_array))
	{
		if (json_object_array_length(obj) == 0)
			return MNEMO_OK;	/* nothing yet: the end says so */
		probe = json_object_array_get_idx(obj, 0);
	}
	if (json_object_is_type(probe, json_type_object))
		for (size_t i = 0; i < mn_lengthof(readers); i++)
			if (readers[i]->detect(probe))
				return choose(imp, readers[i]);
	return mn_fail(imp->st, MNEMO_ERR_FORMAT,
				   "line %" PRId64 ": not a transcript format mnemo knows (%s); --format "
				   "names one", lineno, mnemo_import_formats());
}

/*
 * --format named the reader: a first value that it would not detect and
 * another format would (by what only that one has) is read as named, with
 * a warning, since it more likely is the other.
 */
static void
check_named(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	struct json_object *probe = obj;
	char		msg[256];

	imp->format_checked = true;
	if (json_object_is_type(obj, json_type_array))
		probe = json_object_array_length(obj) > 0 ? json_object_array_get_idx(obj, 0) : NULL;
	if (imp->opts->warning == NULL || !json_object_is_type(probe, json_type_object) ||
		imp->reader->detect(probe))
		return;
	for (size_t i = 0; i < mn_lengthof(readers); i++)
	{
		const mn_reader *r = readers[i];

		if (r == imp->reader || !(r->distinct != NULL ? r->distinct : r->detect) (probe))
			continue;
		snprintf(msg, sizeof(msg), "--format %s, but the content reads as %s (--format %s, "
				 "or none, reads it so); read as %s", imp->reader->name, r->name, r->name,
				 imp->reader->name);
		imp->opts->warning(lineno, msg, imp->opts->progress_arg);
		return;
	}
}

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
 * An import that stores nothing, or leaves out most of what it read, is the
 * wrong format or not a transcript: it fails rather than leave an empty
 * session behind.
 */
static int
worth_storing(mn_import *imp, bool several)
{
	/* (a log read again counts what it matched of its session's) */
	int64_t		messages = imp->imported + (int64_t) imp->n_flight + (int64_t) imp->n_batch +
		(int64_t) imp->n_matched;
	char		which[64] = "the transcript";

	if (imp->reader == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "the transcript is empty: nothing to import");
	if (imp->session.header)
		return MNEMO_OK;
	/* in a file of several, the session at fault is named by its line */
	if (several)
		snprintf(which, sizeof(which), "the session of line %" PRId64, imp->session_line);
	if (messages == 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "no message in %s (read as %s: %" PRId64 " record%s, %" PRId64
					   " left out); nothing imported", which, imp->reader->name, imp->records,
					   imp->records == 1 ? "" : "s", imp->left_out);
	if (imp->left_out * 2 > imp->records)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "%" PRId64 " of %" PRId64 " records of %s left out: not a %s transcript? "
					   "(--format names the format); nothing imported", imp->left_out,
					   imp->records, which, imp->reader->name);
	return MNEMO_OK;
}

static void
session_clear(mn_import_session *s)
{
	free(s->want_id);
	free(s->parent_id);
	free(s->model_id);
	free(s->provider_id);
	free(s->agent);
	free(s->title);
	free(s->system_prompt);
	free(s->metadata);
	free(s->state);
	memset(s, 0, sizeof(*s));
}

/*
 * The end of a session's records: what the reader holds back pushed
 * (finish_session), the session judged (worth_storing; several: the file
 * holds more than this one), stored, its checkpoints restored, and set
 * aside in finished to be reported after the commit (store_session).
 */
static int
store_session(mn_import *imp, bool several)
{
	mn_import_done *grown;
	int			rc;

	rc = worth_storing(imp, several);
	if (rc == MNEMO_OK)
		rc = mn_import_flush(imp);
	if (rc == MNEMO_OK)
		rc = mn_import_checkpoints_flush(imp);
	if (rc != MNEMO_OK)
		return rc;
	if ((grown = realloc(imp->finished, (imp->n_finished + 1) * sizeof(*grown))) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	imp->finished = grown;
	memcpy(grown[imp->n_finished].id, imp->session_id, sizeof(imp->session_id));
	grown[imp->n_finished].line = imp->session_line > 0 ? imp->session_line : 1;
	grown[imp->n_finished].resumed = imp->resumed;
	grown[imp->n_finished++].messages = imp->imported;
	return MNEMO_OK;
}

static int
finish_session(mn_import *imp, bool several)
{
	int			rc = MNEMO_OK;

	if (imp->reader != NULL && imp->reader->finish != NULL)
		rc = imp->reader->finish(imp, imp->rstate);
	return rc == MNEMO_OK ? store_session(imp, several) : rc;
}

int
mn_import_fork(mn_import *imp, int64_t line, const char *source, int64_t at)
{
	mnemo_session *fork = NULL;
	char		seq[24];
	int			rc;

	if ((rc = store_session(imp, true)) != MNEMO_OK)
		return rc;
	snprintf(seq, sizeof(seq), "%" PRId64, at);
	if ((rc = mnemo_session_fork(imp->st, source, seq, NULL, &fork)) != MNEMO_OK)
		return mn_import_at_line(imp->st, rc, line, 0);
	if (strlen(fork->id) > MNEMO_ID_MAX)
		rc = mn_fail(imp->st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(fork->id));
	else
		memcpy(imp->session_id, fork->id, strlen(fork->id) + 1);
	mnemo_session_free(fork);
	imp->session_line = line;
	imp->imported = imp->records = imp->left_out = 0;
	imp->resumed = false;
	mn_import_update_close(imp);
	/* a fork is stored even when it adds no message of its own */
	imp->session.header = true;
	mn_import_checkpoints_reset(imp);
	return rc;
}

/*
 * The document at line starts a second session in the file (one run a line
 * of an OpenHands resolver output, an element of a tau-bench results file,
 * the header of a second mnemo export): the session before is finished, and
 * the import starts afresh, in the same transaction.  Callers that take one
 * session (no options.session) and --session, which names one, refuse it.
 */
static int
next_session(mn_import *imp, int64_t lineno)
{
	int			rc;

	if (imp->opts->session == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a second session in the file (of %s); this import "
					   "takes one", lineno, imp->reader->name);
	if (imp->opts->session_id != NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a second session in the file, and --session names "
					   "one", lineno);
	if ((rc = finish_session(imp, true)) != MNEMO_OK)
		return rc;
	imp->session_line = lineno;
	session_clear(&imp->session);
	imp->session_id[0] = '\0';
	imp->created = false;
	imp->imported = imp->records = imp->left_out = 0;
	imp->resumed = false;
	mn_import_update_close(imp);
	mn_import_checkpoints_reset(imp);
	if (imp->reader->destroy != NULL)
		imp->reader->destroy(imp->rstate);
	imp->rstate = NULL;
	if (imp->reader->create != NULL && (imp->rstate = imp->reader->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
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

	if (imp->reader == NULL && (rc = detect(imp, lineno, obj)) != MNEMO_OK)
		return rc;
	if (imp->reader == NULL)
		return MNEMO_OK;
	if (imp->opts->format != NULL && !imp->format_checked)
		check_named(imp, lineno, obj);
	if (top && json_object_is_type(obj, json_type_array))
		arr = obj;
	else if (json_object_is_type(obj, json_type_object) && imp->reader->document != NULL &&
			 (key = imp->reader->document(obj)) != NULL)
	{
		if (imp->documents++ > 0 && (rc = next_session(imp, lineno)) != MNEMO_OK)
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
		lineno += newlines(at, el.p);
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
		rc = parse_value(imp, tok, first_line, doc.data, doc.len, &obj, &incomplete);
	/* the input ended inside the document: a file cut short, which
	 * --lenient cannot mend (there is no last line to leave out) */
	if (rc != MNEMO_OK && incomplete)
		rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
					 "line %" PRId64 ": not valid JSON: the file ends inside the document begun "
					 "on line %" PRId64 " (it is cut short)",
					 first_line + newlines(doc.data, doc.data + doc.len) -
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
		if (lineno == 1 && not_text(line, n) != NULL)
		{
			rc = mn_fail(imp->st, MNEMO_ERR_FORMAT, "line 1: %s", not_text(line, n));
			break;
		}
		if (lineno == 1)
			skip_bom(line, &n);
		if (blank(line, (size_t) n))
			continue;
		rc = parse_value(imp, tok, lineno, line, (size_t) n, &obj, &incomplete);
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
			bool		last = incomplete && rest_is_blank(in, &line, &cap);

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
	session_clear(&imp->session);
	imp->session_id[0] = '\0';
	imp->created = false;
	imp->imported = imp->records = imp->left_out = 0;
	imp->resumed = false;
	mn_import_update_close(imp);
	imp->session_line = n > 0 ? held->recs[idx[0]].line : 1;
	mn_import_checkpoints_reset(imp);
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
		rc = finish_session(imp, true);
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

	rc = imp.opts->format != NULL ? named_reader(&imp, imp.opts->format) : MNEMO_OK;
	if (rc == MNEMO_OK)
		rc = read_all(&imp, in);
	if (rc == MNEMO_OK)
		rc = finish_session(&imp, imp.n_finished > 0);
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
	mn_import_checkpoints_reset(&imp);
	free(imp.finished);
	mn_import_update_close(&imp);
	if (imp.reader != NULL && imp.reader->destroy != NULL)
		imp.reader->destroy(imp.rstate);
	session_clear(&imp.session);
	return rc;
}
