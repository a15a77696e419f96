/*
 * text_chunk.c
 *		The chunk that only adds text, read without json-c.
 *
 * Most events of a reply are one shape: an OpenAI chat.completion.chunk
 * whose single choice's delta holds only "content", an Anthropic
 * content_block_delta with a text_delta.  json-c spends about 2 us on each
 * (an object tree, and a locale switch per parse), as long as a plain
 * download takes to receive it.  These functions recognise exactly that
 * shape, byte by byte, in strict JSON with no \u escape, and answer false
 * for anything else, which the decoder then parses with json-c as always.
 *
 * So they never decide what an event means, only that it is the plain
 * case: on what they accept they must read what json-c reads, which the
 * fuzzers check by decoding every input with and without them
 * (mn_stream_limits.json_only) and comparing the deltas.  Unknown or
 * repeated keys, a value of another type, a number with a fraction or an
 * exponent, whitespace other than JSON's four, a raw control character or
 * a \u escape in a string: all are false.
 */
#include <string.h>

#include "core/json.h"
#include "stream/stream.h"

typedef struct cursor
{
	const char *p;
	const char *end;
} cursor;

static void
skip_ws(cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool
punct(cursor *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == ch)
	{
		c->p++;
		return true;
	}
	return false;
}

/* A string: its body between the quotes in *s, *n; *esc when it has
 * escapes, all of them two-byte ones. */
static bool
string(cursor *c, const char **s, size_t *n, bool *esc)
{
	if (!punct(c, '"'))
		return false;
	*s = c->p;
	*esc = false;
	while (c->p < c->end)
	{
		unsigned char ch = (unsigned char) *c->p;

		if (ch == '"')
		{
			*n = (size_t) (c->p - *s);
			c->p++;
			return true;
		}
		if (ch < 0x20)
			return false;
		if (ch == '\\')
		{
			if (c->end - c->p < 2 || c->p[1] == '\0' || strchr("\"\\/bfnrt", c->p[1]) == NULL)
				return false;
			*esc = true;
			c->p += 2;
			continue;
		}
		c->p++;
	}
	return false;
}

/* A string without escapes equal to want. */
static bool
string_is(cursor *c, const char *want)
{
	const char *s;
	size_t		n;
	bool		esc;

	return string(c, &s, &n, &esc) && !esc && n == strlen(want) && memcmp(s, want, n) == 0;
}

static bool
any_string(cursor *c)
{
	const char *s;
	size_t		n;
	bool		esc;

	return string(c, &s, &n, &esc);
}

static bool
null(cursor *c)
{
	skip_ws(c);
	if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0)
	{
		c->p += 4;
		return true;
	}
	return false;
}

/* An integer as JSON writes it, at most 18 digits; a fraction or an
 * exponent after it is not one. */
static bool
integer(cursor *c, int64_t *v)
{
	bool		neg = false;
	int			digits = 0;

	skip_ws(c);
	if (c->p < c->end && *c->p == '-')
	{
		neg = true;
		c->p++;
	}
	*v = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
	{
		if (++digits > 18 || (digits == 2 && *v == 0))
			return false;		/* too long, or a leading zero */
		*v = *v * 10 + (*c->p - '0');
		c->p++;
	}
	if (digits == 0 || (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')))
		return false;
	if (neg)
		*v = -*v;
	return true;
}

/*
 * The next member of an object whose '{' was read: its key in *key, *klen,
 * the cursor on its value.  False at the '}' that ends it, or with *bad set
 * when something else is there.
 */
static bool
member(cursor *c, bool *first, const char **key, size_t *klen, bool *bad)
{
	bool		esc;

	if (punct(c, '}'))
		return false;
	if (!*first && !punct(c, ','))
	{
		*bad = true;
		return false;
	}
	*first = false;
	if (!string(c, key, klen, &esc) || esc || !punct(c, ':'))
	{
		*bad = true;
		return false;
	}
	return true;
}

/* Index of key in keys (at most 32), -1 when it is not one of them. */
static int
key_of(const char *key, size_t klen, const char *const *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		if (strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0)
			return i;
	return -1;
}

/* Each key once, and known: its index, or -1. */
static int
new_key(const char *key, size_t klen, const char *const *keys, int nkeys, uint32_t *seen)
{
	int			k = key_of(key, klen, keys, nkeys);

	if (k < 0 || (*seen & (1u << k)))
		return -1;
	*seen |= 1u << k;
	return k;
}

/* A text delta's object, {"<type_key>": "<type>", "<text_key>": "..."} or
 * only the text key when type_key is NULL; the text's body in *s, *n. */
static bool
text_delta(cursor *c, const char *type_key, const char *type, const char *text_key,
		   const char **s, size_t *n, bool *esc)
{
	const char *const keys[2] = {text_key, type_key};
	const char *key;
	size_t		klen;
	bool		first = true,
				bad = false;
	uint32_t	seen = 0;

	if (!punct(c, '{'))
		return false;
	while (member(c, &first, &key, &klen, &bad))
	{
		int			k = new_key(key, klen, keys, type_key ? 2 : 1, &seen);

		if (k < 0 || (k == 0 && !string(c, s, n, esc)) || (k == 1 && !string_is(c, type)))
			return false;
	}
	return !bad && seen == (type_key ? 3u : 1u);
}

/* The text in scratch, unescaped and NUL-terminated as a delta's text is. */
static bool
text_out(const char *s, size_t n, bool esc, mn_buf *scratch, const char **text, size_t *len)
{
	mn_buf_reset(scratch);
	if (!esc && !mn_buf_put(scratch, s, n))
		return false;
	for (size_t i = 0; esc && i < n; i++)
	{
		char		ch = s[i];

		if (ch == '\\')
		{
			switch (s[++i])
			{
				case 'b':
					ch = '\b';
					break;
				case 'f':
					ch = '\f';
					break;
				case 'n':
					ch = '\n';
					break;
				case 'r':
					ch = '\r';
					break;
				case 't':
					ch = '\t';
					break;
				default:		/* " \ / */
					ch = s[i];
					break;
			}
		}
		if (!mn_buf_put(scratch, &ch, 1))
			return false;
	}
	*text = scratch->data ? scratch->data : "";
	*len = scratch->len;
	return true;
}

/* The end of the data: only whitespace after the value. */
static bool
at_end(cursor *c)
{
	skip_ws(c);
	return c->p == c->end;
}

enum
{
	OA_ID, OA_OBJECT, OA_CREATED, OA_MODEL, OA_FINGERPRINT, OA_TIER, OA_OBFUSCATION,
	OA_USAGE, OA_CHOICES, OA_NKEYS
};

static const char *const openai_keys[OA_NKEYS] = {
	"id", "object", "created", "model", "system_fingerprint", "service_tier", "obfuscation",
	"usage", "choices"
};

enum
{
	CH_INDEX, CH_DELTA, CH_LOGPROBS, CH_FINISH, CH_NKEYS
};

static const char *const choice_keys[CH_NKEYS] = {
	"index", "delta", "logprobs", "finish_reason"
};

/* "choices": [ {"index": 0, "delta": {"content": "..."}, "logprobs": null,
 * "finish_reason": null} ], the index and the two nulls optional. */
static bool
openai_choices(cursor *c, const char **s, size_t *n, bool *esc)
{
	const char *key;
	size_t		klen;
	bool		first = true,
				bad = false;
	uint32_t	seen = 0;
	int64_t		index;

	if (!punct(c, '[') || !punct(c, '{'))
		return false;
	while (member(c, &first, &key, &klen, &bad))
	{
		switch (new_key(key, klen, choice_keys, CH_NKEYS, &seen))
		{
			case CH_INDEX:
				if (!integer(c, &index) || index != 0)
					return false;
				break;
			case CH_DELTA:
				if (!text_delta(c, NULL, NULL, "content", s, n, esc))
					return false;
				break;
			case CH_LOGPROBS:
			case CH_FINISH:
				if (!null(c))
					return false;
				break;
			default:
				return false;
		}
	}
	return !bad && (seen & (1u << CH_DELTA)) && punct(c, ']');
}

bool
mn_text_chunk_openai(const char *data, size_t len, mn_buf *scratch, const char **text,
					 size_t *tlen)
{
	cursor		c = {data, data + len};
	const char *key,
			   *s = NULL;
	size_t		klen,
				n = 0;
	bool		first = true,
				bad = false,
				esc = false;
	uint32_t	seen = 0;
	int64_t		created;

	if (!punct(&c, '{'))
		return false;
	while (member(&c, &first, &key, &klen, &bad))
	{
		bool		ok;

		switch (new_key(key, klen, openai_keys, OA_NKEYS, &seen))
		{
			case OA_ID:
			case OA_MODEL:
			case OA_OBFUSCATION:
				ok = any_string(&c);
				break;
			case OA_OBJECT:
				ok = string_is(&c, "chat.completion.chunk");
				break;
			case OA_CREATED:
				ok = integer(&c, &created);
				break;
			case OA_FINGERPRINT:
			case OA_TIER:
				ok = null(&c) || any_string(&c);
				break;
			case OA_USAGE:
				ok = null(&c);
				break;
			case OA_CHOICES:
				ok = openai_choices(&c, &s, &n, &esc);
				break;
			default:
				ok = false;
				break;
		}
		if (!ok)
			return false;
	}
	if (bad || !(seen & (1u << OA_CHOICES)) || !at_end(&c))
		return false;
	return text_out(s, n, esc, scratch, text, tlen);
}

enum
{
	AN_TYPE, AN_INDEX, AN_DELTA, AN_NKEYS
};

static const char *const anthropic_keys[AN_NKEYS] = {"type", "index", "delta"};

bool
mn_text_chunk_anthropic(const char *data, size_t len, mn_buf *scratch, int *block,
						const char **text, size_t *tlen)
{
	cursor		c = {data, data + len};
	const char *key,
			   *s = NULL;
	size_t		klen,
				n = 0;
	bool		first = true,
				bad = false,
				esc = false;
	uint32_t	seen = 0;
	int64_t		index = -1;

	if (!punct(&c, '{'))
		return false;
	while (member(&c, &first, &key, &klen, &bad))
	{
		bool		ok;

		switch (new_key(key, klen, anthropic_keys, AN_NKEYS, &seen))
		{
			case AN_TYPE:
				ok = string_is(&c, "content_block_delta");
				break;
			case AN_INDEX:
				/* the decoder's block_index reads out-of-range as 0 */
				ok = integer(&c, &index) && index >= 0 && index <= 1000000000;
				break;
			case AN_DELTA:
				ok = text_delta(&c, "type", "text_delta", "text", &s, &n, &esc);
				break;
			default:
				ok = false;
				break;
		}
		if (!ok)
			return false;
	}
	if (bad || seen != (1u << AN_NKEYS) - 1 || !at_end(&c))
		return false;
	*block = (int) index;
	return text_out(s, n, esc, scratch, text, tlen);
}
