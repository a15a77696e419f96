/*
 * import_parse.c
 *		The import's input as text: what its first line says the file is
 *		when it is no UTF-8 text (compressed, UTF-16), its byte order mark,
 *		blank lines, and a value parsed strictly, its error named by the
 *		line it is on.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

bool
mn_import_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* Whether nothing but blank lines is left in in (read to find out; a read
 * error ends it too, and shows in ferror). */
bool
mn_import_rest_is_blank(FILE *in, char **line, size_t *cap)
{
	ssize_t		n;

	while ((n = getline(line, cap, in)) >= 0)
		if (!mn_import_blank(*line, (size_t) n))
			return false;
	return true;
}

/*
 * A UTF-8 byte order mark at the very start of the input dropped: editors
 * on Windows and PowerShell's redirection write one, and no JSON parser
 * takes it (RFC 8259 lets a parser ignore it).  Anywhere else it stays, and
 * is what it is there: a character, or an error outside a string.
 */
void
mn_import_skip_bom(char *line, ssize_t *n)
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
const char *
mn_import_not_text(const char *line, ssize_t n)
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

int64_t
mn_import_newlines(const char *from, const char *to)
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
int
mn_import_parse_value(mn_import *imp, struct json_tokener *tok, int64_t lineno,
					  const char *text, size_t len, struct json_object **out, bool *incomplete)
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
					   "file (binary data, or UTF-16?)", lineno + mn_import_newlines(text, nul));
	json_tokener_reset(tok);
	obj = json_tokener_parse_ex(tok, text, (int) len);
	/* json-c parses null to NULL, and no error */
	if (obj == NULL && json_tokener_get_error(tok) == json_tokener_success)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": null is not a record (a "
					   "JSON object)",
					   lineno + mn_import_newlines(text, text + json_tokener_get_parse_end(tok)) -
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
					   lineno + mn_import_newlines(text, text + at),
					   *incomplete ? "unexpected end of line" : json_tokener_error_desc(err));
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
	{
		if (strchr(" \t\r\n", text[end]) == NULL)
		{
			json_object_put(obj);
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": not valid JSON: text after the value",
						   lineno + mn_import_newlines(text, text + end));
		}
	}
	*out = obj;
	return MNEMO_OK;
}
