/*
 * jsonb_text.c
 *		The text of a jsonb value exactly as jsonb_out prints it, without
 *		jsonb_out's byte-at-a-time escaping.
 *
 * PostgreSQL 15's escape_json appends a string to its buffer one byte at a
 * time; printing the contents of a session's parts that way was about half
 * of what loading its history cost the server (bench/profiles/reads.txt).
 * Here each run of bytes that needs no escape is copied at once and the
 * others are escaped as escape_json escapes them, so the text is jsonb_out's
 * byte for byte: members in jsonb's order, ", " and ": " between them,
 * numbers by numeric_out.  The client relies on that canonical form
 * (client/src/store/convert.c); sql/reads.sql compares the two.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"

#define BYTES(b) (UINT64CONST(0x0101010101010101) * (b))

/*
 * Whether one of the 8 bytes of w needs escaping: a control character
 * (below 0x20), '"' or '\\'.  A byte is below n (n <= 0x80) when subtracting
 * n borrows into its high bit while that bit was clear; a byte equals c when
 * w ^ c has a zero byte, found the same way with n = 1.
 */
static inline bool
NeedsEscape(uint64 w)
{
	uint64		quote = w ^ BYTES('"');
	uint64		backslash = w ^ BYTES('\\');

	return (((w - BYTES(0x20)) & ~w) |
			((quote - BYTES(1)) & ~quote) |
			((backslash - BYTES(1)) & ~backslash)) & BYTES(0x80);
}

/* A JSON string of len bytes, quoted and escaped as escape_json does. */
static void
AppendString(StringInfo out, const char *s, int len)
{
	int			start = 0;
	int			i = 0;

	appendStringInfoCharMacro(out, '"');
	while (i < len)
	{
		unsigned char c;
		const char *escape;
		uint64		w;

		/* text is mostly plain: step over it 8 bytes at a time */
		if (len - i >= 8)
		{
			memcpy(&w, s + i, 8);
			if (!NeedsEscape(w))
			{
				i += 8;
				continue;
			}
		}
		c = (unsigned char) s[i++];
		if (c >= ' ' && c != '"' && c != '\\')
			continue;
		appendBinaryStringInfo(out, s + start, i - 1 - start);
		start = i;
		switch (c)
		{
			case '\b':
				escape = "\\b";
				break;
			case '\f':
				escape = "\\f";
				break;
			case '\n':
				escape = "\\n";
				break;
			case '\r':
				escape = "\\r";
				break;
			case '\t':
				escape = "\\t";
				break;
			case '"':
				escape = "\\\"";
				break;
			case '\\':
				escape = "\\\\";
				break;
			default:
				appendStringInfo(out, "\\u%04x", (int) c);
				continue;
		}
		appendBinaryStringInfo(out, escape, 2);
	}
	appendBinaryStringInfo(out, s + start, len - start);
	appendStringInfoCharMacro(out, '"');
}

static void
AppendScalar(StringInfo out, JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			appendBinaryStringInfo(out, "null", 4);
			break;
		case jbvString:
			AppendString(out, v->val.string.val, v->val.string.len);
			break;
		case jbvNumeric:
			appendStringInfoString(out, DatumGetCString(DirectFunctionCall1(numeric_out,
																			NumericGetDatum(v->val.numeric))));
			break;
		case jbvBool:
			if (v->val.boolean)
				appendBinaryStringInfo(out, "true", 4);
			else
				appendBinaryStringInfo(out, "false", 5);
			break;
		default:
			elog(ERROR, "unknown jsonb scalar type %d", (int) v->type);
	}
}

/*
 * Append the text of jb to out.  A container is opened, then each key, value
 * or element follows ", " unless it is the first of its container; a key's
 * value follows ": " directly.
 */
void
MnemoJsonbAppendText(StringInfo out, Jsonb *jb)
{
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		first = true;
	bool		raw_scalar = false;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_ARRAY:
			case WJB_BEGIN_OBJECT:
				if (!first)
					appendBinaryStringInfo(out, ", ", 2);
				if (tok == WJB_BEGIN_ARRAY && v.val.array.rawScalar)
					raw_scalar = true;
				else
					appendStringInfoCharMacro(out, tok == WJB_BEGIN_ARRAY ? '[' : '{');
				first = true;
				break;
			case WJB_KEY:
				if (!first)
					appendBinaryStringInfo(out, ", ", 2);
				AppendScalar(out, &v);
				appendBinaryStringInfo(out, ": ", 2);
				/* the value, or the container it opens, comes next: no comma */
				first = true;
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				if (!first)
					appendBinaryStringInfo(out, ", ", 2);
				AppendScalar(out, &v);
				first = false;
				break;
			case WJB_END_ARRAY:
				if (!raw_scalar)
					appendStringInfoCharMacro(out, ']');
				first = false;
				break;
			case WJB_END_OBJECT:
				appendStringInfoCharMacro(out, '}');
				first = false;
				break;
			default:
				elog(ERROR, "unknown jsonb iterator token %d", (int) tok);
		}
	}
}
