/*
 * t_import_input.c
 *		What mnemo_import_jsonl makes of its input before a reader sees it,
 *		whatever the format:
 *
 *	- a UTF-8 byte order mark at the very start is skipped (a JSON array, a
 *	  mnemo export, stdin alike); one anywhere else is an error of its line;
 *	- lenient skips a last line cut short even when blank lines follow it
 *	  (blank lines are skipped everywhere), and reports it through skipped;
 *	  a bad line with a record after it still fails; a last line that is
 *	  whole but malformed is not cut short: no hint of --lenient, and
 *	  lenient does not skip it; one cut inside a UTF-8 character is;
 *	- a pretty-printed document cut short says so, naming where it began;
 *	- a line of null (json-c's NULL, no error) is named as not a record;
 *	- --format named wrong: the first record's error says what it was read
 *	  as (a later record's does not: the format read the first);
 *	- a compressed file (gzip, zstd, xz, bzip2, zip) is named as such;
 *	- UTF-16 input (with a byte order mark or without) is named as such,
 *	  not as invalid UTF-8 or JSON;
 *	- \u0000 and lone surrogates made U+FFFD are reported through replaced,
 *	  never through skipped: nothing was left out;
 *	- mnemo_import_formats names what options.format takes, and
 *	  mnemo_import_format_known knows each of them and nothing else.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "transcript_helpers.h"

#define BOM "\xEF\xBB\xBF"

typedef struct heard
{
	int			skipped;
	int			truncated;		/* of them, "truncated last line" */
	int			replaced;
	char		replaced_kind[128];
} heard;

static void
on_skipped(int64_t line, const char *kind, void *arg)
{
	heard	   *h = arg;

	(void) line;
	h->skipped++;
	if (strcmp(kind, "truncated last line") == 0)
		h->truncated++;
}

static void
on_replaced(int64_t line, const char *kind, void *arg)
{
	heard	   *h = arg;

	(void) line;
	h->replaced++;
	snprintf(h->replaced_kind, sizeof(h->replaced_kind), "%s", kind);
}

/* text imported with the callbacks above; *h is cleared first. */
static int
import_heard(mnemo_store *st, const char *text, bool lenient, heard *h, int64_t *n)
{
	mnemo_import_options opts = MNEMO_IMPORT_OPTIONS_INIT;
	char		sid[MNEMO_ID_MAX + 1];

	memset(h, 0, sizeof(*h));
	opts.skipped = on_skipped;
	opts.replaced = on_replaced;
	opts.progress_arg = h;
	opts.lenient = lenient;
	opts.new_ids = true;
	return import_text(st, text, &opts, sid, n);
}

static void
test_bom(mnemo_store *st)
{
	heard		h;
	int64_t		n = -1;
	int			rc;

	rc = import_heard(st, BOM "[{\"role\": \"user\", \"content\": \"hi\"}, "
					  "{\"role\": \"assistant\", \"content\": \"hello\"}]\n", false, &h, &n);
	is_code(st, rc, MNEMO_OK, "a JSON array after a byte order mark imports");
	is_int((int) n, 2, "both its messages");
	rc = import_heard(st, BOM "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"x\"}]}\n",
					  false, &h, &n);
	is_code(st, rc, MNEMO_OK, "so does a mnemo line after one");
	rc = import_heard(st, BOM "\n\n{\"role\": \"user\", \"content\": \"hi\"}\n", false, &h, &n);
	is_code(st, rc, MNEMO_OK, "and JSON Lines whose first line is the mark alone");
	rc = import_heard(st, "{\"role\": \"user\", \"content\": \"a\"}\n" BOM "{\"role\": \"user\", \"content\": \"b\"}\n",
					  false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a byte order mark on a later line is not skipped");
	ok(strstr(mnemo_errmsg(st), "line 2: not valid JSON") != NULL, "but named as its line's error: %s",
	   mnemo_errmsg(st));
}

static void
test_lenient(mnemo_store *st)
{
	static const char cut[] =
		"{\"role\": \"user\", \"content\": \"one\"}\n"
		"{\"role\": \"assistant\", \"content\": \"two\"}\n"
		"{\"role\": \"user\", \"content\": \"thr";
	char		text[512];
	heard		h;
	int64_t		n = -1;
	int			rc;

	snprintf(text, sizeof(text), "%s\n\n \t\n\n", cut);
	rc = import_heard(st, text, false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a cut last line with blank lines after it fails");
	ok(strstr(mnemo_errmsg(st), "line 3: ") != NULL && strstr(mnemo_errmsg(st), "--lenient") != NULL,
	   "naming its line and lenient: %s", mnemo_errmsg(st));
	rc = import_heard(st, text, true, &h, &n);
	is_code(st, rc, MNEMO_OK, "lenient: it imports");
	is_int((int) n, 2, "the two whole lines");
	is_int(h.truncated, 1, "and the cut line is reported as skipped");

	snprintf(text, sizeof(text), "%s\n\n{\"role\": \"user\", \"content\": \"four\"}\n", cut);
	rc = import_heard(st, text, true, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "lenient: a bad line with a record after it still fails");
	ok(strstr(mnemo_errmsg(st), "line 3: ") != NULL, "naming its line: %s", mnemo_errmsg(st));
}

/* len bytes (NULs too) imported as import_heard does. */
static int
import_bytes(mnemo_store *st, const char *bytes, size_t len, bool lenient, heard *h)
{
	mnemo_import_options opts = MNEMO_IMPORT_OPTIONS_INIT;
	char		sid[MNEMO_ID_MAX + 1];
	FILE	   *f = file_of(bytes, len);
	int			rc;

	memset(h, 0, sizeof(*h));
	opts.skipped = on_skipped;
	opts.progress_arg = h;
	opts.lenient = lenient;
	opts.new_ids = true;
	rc = mnemo_import_jsonl(st, f, &opts, sid, NULL);
	fclose(f);
	return rc;
}

/* Only a last line cut short is what --lenient is for. */
static void
test_not_cut(mnemo_store *st)
{
	static const char extra[] =
		"{\"role\": \"user\", \"content\": \"one\"}\n"
		"{\"role\": \"user\", \"content\": \"two\"}}\n";
	/* the last line cut after the first byte of a two-byte character */
	static const char mid_char[] =
		"{\"role\": \"user\", \"content\": \"one\"}\n"
		"{\"role\": \"user\", \"content\": \"caf\xC3";
	static const char garbage[] = "{\"role\": \"user\", \"content\": \"one\"}\n\x7F" "ELF\xFF\xFE\x01\n";
	heard		h;
	int64_t		n = -1;
	int			rc;

	rc = import_heard(st, extra, false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a whole last line with text after its value fails");
	ok(strstr(mnemo_errmsg(st), "line 2: ") != NULL && strstr(mnemo_errmsg(st), "lenient") == NULL,
	   "naming its line, and not calling it cut short: %s", mnemo_errmsg(st));
	rc = import_heard(st, extra, true, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "lenient does not skip it: it is not cut short");
	rc = import_bytes(st, garbage, strlen(garbage), true, &h);
	is_code(st, rc, MNEMO_ERR_FORMAT, "nor a last line of binary garbage");
	ok(strstr(mnemo_errmsg(st), "line 2: not valid UTF-8") != NULL &&
	   strstr(mnemo_errmsg(st), "lenient") == NULL, "named as what it is: %s", mnemo_errmsg(st));
	rc = import_heard(st, mid_char, false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a last line cut inside a UTF-8 character fails");
	ok(strstr(mnemo_errmsg(st), "line 2: ") != NULL && strstr(mnemo_errmsg(st), "--lenient") != NULL,
	   "as cut short, --lenient named: %s", mnemo_errmsg(st));
	rc = import_heard(st, mid_char, true, &h, &n);
	is_code(st, rc, MNEMO_OK, "lenient: it imports");
	is_int(h.truncated, 1, "the cut line reported");
}

/* json-c parses null to NULL with no error: a record it is not. */
static void
test_null_line(mnemo_store *st)
{
	heard		h;
	int64_t		n = -1;
	int			rc;

	rc = import_heard(st, "{\"role\": \"user\", \"content\": \"one\"}\nnull\n"
					  "{\"role\": \"user\", \"content\": \"two\"}\n", false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a line of null fails");
	ok(strstr(mnemo_errmsg(st), "line 2: null is not a record") != NULL &&
	   strstr(mnemo_errmsg(st), "success") == NULL, "saying so, naming its line: %s", mnemo_errmsg(st));
	{
		static const char nul[] = "{\"role\": \"user\", \"content\": \"one\"}\n\0\1bin\n"
			"{\"role\": \"user\", \"content\": \"two\"}\n";

		rc = import_bytes(st, nul, sizeof(nul) - 1, false, &h);
		is_code(st, rc, MNEMO_ERR_FORMAT, "a line with a NUL byte fails");
		ok(strstr(mnemo_errmsg(st), "line 2: a NUL byte") != NULL, "named as such, not as the end "
		   "of the data: %s", mnemo_errmsg(st));
	}
	rc = import_heard(st, "null\n", false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a file of null fails");
	ok(strstr(mnemo_errmsg(st), "line 1: null is not a record") != NULL, "saying so: %s",
	   mnemo_errmsg(st));
}

static void
test_cut_document(mnemo_store *st)
{
	static const char doc[] =
		"[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"assistant\",\n   \"content\": \"hel";
	heard		h;
	int64_t		n = -1;
	int			rc;

	rc = import_heard(st, doc, false, &h, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a pretty-printed document cut short fails");
	ok(strstr(mnemo_errmsg(st), "line 4: ") != NULL && strstr(mnemo_errmsg(st), "cut short") != NULL &&
	   strstr(mnemo_errmsg(st), "line 1") != NULL,
	   "naming the line it ends on, the document's first, and saying it is cut short: %s",
	   mnemo_errmsg(st));
}

/* --format named wrong: the first record's error says what it was read as. */
static void
test_wrong_format(mnemo_store *st)
{
	mnemo_import_options opts = MNEMO_IMPORT_OPTIONS_INIT;
	char		sid[MNEMO_ID_MAX + 1];
	int			rc;

	opts.format = "openai";
	rc = import_text(st, "{\"type\": \"session\", \"id\": \"p\", \"cwd\": \"/\"}\n"
					 "{\"type\": \"message\", \"message\": {\"role\": \"user\", \"content\": \"hi\"}}\n",
					 &opts, sid, NULL);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a pi log read as openai fails");
	ok(strstr(mnemo_errmsg(st), "line 1: ") != NULL &&
	   strstr(mnemo_errmsg(st), "(read as openai, as --format said: is that the format?)") != NULL,
	   "saying what it was read as: %s", mnemo_errmsg(st));
	opts.format = "openai";
	rc = import_text(st, "{\"role\": \"user\", \"content\": \"hi\"}\n{\"role\": 5}\n", &opts, sid, NULL);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a bad later record of the named format");
	ok(strstr(mnemo_errmsg(st), "line 2: ") != NULL && strstr(mnemo_errmsg(st), "read as") == NULL,
	   "is its own error, the format not in doubt: %s", mnemo_errmsg(st));
}

static void
test_utf16(mnemo_store *st)
{
	static const char le_bom[] = "\xFF\xFE{\0\"\0r\0o\0l\0e\0\"\0:\0 \0\"\0u\0\"\0}\0\n\0";
	static const char be_bom[] = "\xFE\xFF\0{\0\"\0r\0o\0l\0e\0\"\0:\0 \0\"\0u\0\"\0}\0\n";
	static const char le[] = "{\0\"\0r\0o\0l\0e\0\"\0:\0 \0\"\0u\0\"\0}\0\n\0";
	static const struct
	{
		const char *text;
		size_t		len;
		const char *name;
	}			cases[] = {
		{le_bom, sizeof(le_bom) - 1, "UTF-16LE with a byte order mark"},
		{be_bom, sizeof(be_bom) - 1, "UTF-16BE with a byte order mark"},
		{le, sizeof(le) - 1, "UTF-16LE without one"},
	};
	heard		h;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			rc = import_bytes(st, cases[i].text, cases[i].len, false, &h);

		is_code(st, rc, MNEMO_ERR_FORMAT, cases[i].name);
		ok(strstr(mnemo_errmsg(st), "line 1: ") != NULL && strstr(mnemo_errmsg(st), "UTF-16") != NULL,
		   "%s: named as UTF-16: %s", cases[i].name, mnemo_errmsg(st));
	}
}

/* A compressed log (a .jsonl.gz kept to save room) is named as such. */
static void
test_compressed(mnemo_store *st)
{
	static const struct
	{
		const char *bytes;
		size_t		len;
		const char *name;
	}			cases[] = {
		{"\x1F\x8B\x08\x00\x00\x00\x00\x00\x00\x03\xAB\xAE\x05\x00", 14, "gzip"},
		{"\x28\xB5\x2F\xFD\x20\x02\x11\x00\x00\x7B\x7D", 11, "zstd"},
		{"\xFD\x37\x7A\x58\x5A\x00\x00\x04", 8, "xz"},
		{"BZh91AY&SY\x01\x02", 12, "bzip2"},
		{"PK\x03\x04\x14\x00\x00\x00", 8, "zip"},
	};
	heard		h;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		int			rc = import_bytes(st, cases[i].bytes, cases[i].len, false, &h);
		char		want[64];

		snprintf(want, sizeof(want), "line 1: the file is %s-compressed", cases[i].name);
		is_code(st, rc, MNEMO_ERR_FORMAT, cases[i].name);
		ok(strstr(mnemo_errmsg(st), want) != NULL, "%s: named as such: %s", cases[i].name,
		   mnemo_errmsg(st));
	}
}

static void
test_replaced(mnemo_store *st)
{
	heard		h;
	int64_t		n = -1;
	int			rc;

	rc = import_heard(st, "[{\"role\": \"user\", \"content\": \"nul \\u0000 and \\ud800 x\"}]\n", false,
					  &h, &n);
	is_code(st, rc, MNEMO_OK, "\\u0000 and a lone surrogate import");
	is_int(h.replaced, 2, "each reported through replaced");
	is_str(h.replaced_kind, "\\u0000 or lone surrogate made U+FFFD", "saying what was made of it");
	is_int(h.skipped, 0, "and nothing through skipped: no record was left out");
}

static void
test_format_names(void)
{
	char	   *names = strdup(mnemo_import_formats());
	char	   *save = NULL;
	int			known = 0,
				total = 0;

	if (names == NULL)
		bail_out("out of memory");
	for (char *name = strtok_r(names, ", ", &save); name != NULL; name = strtok_r(NULL, ", ", &save))
	{
		total++;
		if (mnemo_import_format_known(name))
			known++;
		else
			diag("not known: %s", name);
	}
	free(names);
	is_int(total, 8, "mnemo_import_formats names eight formats");
	is_int(known, total, "and each is known");
	ok(!mnemo_import_format_known("bogus") && !mnemo_import_format_known("") &&
	   !mnemo_import_format_known(NULL) && !mnemo_import_format_known("PI"),
	   "no other name is (bogus, empty, NULL, PI)");
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);

	test_bom(st);
	test_lenient(st);
	test_not_cut(st);
	test_cut_document(st);
	test_null_line(st);
	test_utf16(st);
	test_compressed(st);
	test_wrong_format(st);
	test_replaced(st);
	test_format_names();
	mnemo_store_close(st);
	return tap_done();
}
