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

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lib/stringinfo.h"
#include "port/pg_bitutils.h"
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

/*
 * The offset of the first of the len bytes at s that needs escaping, or len.
 * Where SSE2 is (every x86-64), 16 bytes at a time: a byte needs escaping
 * when it is '"', '\\' or at most 0x1f (the unsigned minimum with 0x1f is
 * itself), and the first such is the lowest bit of the compare's mask.
 */
static inline int
PlainRun(const char *s, int len)
{
	int			i = 0;
	uint64		w;

#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"');
	const __m128i backslash = _mm_set1_epi8('\\');
	const __m128i control = _mm_set1_epi8(0x1f);

	for (; len - i >= 16; i += 16)
	{
		__m128i		v = _mm_loadu_si128((const __m128i *) (s + i));
		__m128i		hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
													_mm_cmpeq_epi8(v, backslash)),
									   _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
		int			mask = _mm_movemask_epi8(hit);

		if (mask != 0)
			return i + pg_rightmost_one_pos32((uint32) mask);
	}
#endif
	for (; len - i >= 8; i += 8)
	{
		memcpy(&w, s + i, 8);
		if (NeedsEscape(w))
			break;
	}
	for (; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c < ' ' || c == '"' || c == '\\')
			return i;
	}
	return len;
}

/*
 * A JSON string of len bytes, quoted and escaped as escape_json does: each
 * run of bytes that needs no escape copied at once.
 */
static void
AppendString(StringInfo out, const char *s, int len)
{
	int			start = 0;

	appendStringInfoCharMacro(out, '"');
	for (;;)
	{
		int			i = start + PlainRun(s + start, len - start);
		const char *escape;

		appendBinaryStringInfo(out, s + start, i - start);
		if (i == len)
			break;
		start = i + 1;
		switch ((unsigned char) s[i])
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
				appendStringInfo(out, "\\u%04x", (int) (unsigned char) s[i]);
				continue;
		}
		appendBinaryStringInfo(out, escape, 2);
	}
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
