/*
 * sse.c
 *		Server-sent events: an incremental parser of text/event-stream.
 *
 * The parser follows the WHATWG "event stream interpretation" to the byte.
 * It copies as little as it can: a line that arrives whole in one chunk is
 * read where it lies, and only a line split across chunks is carried over
 * in a buffer.  Decoding is done per line, which gives what decoding the
 * whole stream first would: the line terminators are ASCII, so an invalid
 * or truncated UTF-8 sequence never spans one, and each is replaced by
 * U+FFFD with the same "maximal subpart" rule as the WHATWG UTF-8 decoder.
 * Comment lines (keep-alives) are skipped as they stream, never buffered,
 * so the only memory a server controls is the event being assembled, and
 * max_event bounds it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "stream/stream.h"

/* ========================================================================
 * The SSE parser
 * ======================================================================== */

struct mn_sse
{
	size_t		max_event;
	mn_sse_event_fn cb;
	void	   *arg;
	int			status;			/* 0, or the sticky error / stop value */

	unsigned	bom_seen;		/* bytes of a leading BOM matched so far */
	bool		bom_done;		/* past the point where a BOM may be */
	bool		after_cr;		/* the last line ended in CR: a LF right
								 * after it is the second half of a CRLF */
	bool		in_line;		/* bytes of an unfinished line were seen */
	bool		in_comment;		/* ... and it is a comment, being skipped */

	mn_buf		line;			/* the unfinished line, if not a comment */
	mn_buf		data;			/* the data buffer, each line + LF */
	mn_buf		type;			/* the event type buffer */
	mn_buf		id;				/* the last event ID buffer */
	bool		id_changed;		/* id was set since the last dispatch */
	mn_buf		last_id;		/* the last event ID string */
	mn_buf		scratch;		/* a line with invalid UTF-8, repaired */
	int64_t		retry;
};

static const unsigned char utf8_bom[3] = {0xEF, 0xBB, 0xBF};

mn_sse *
mn_sse_new(size_t max_event, mn_sse_event_fn cb, void *arg)
{
	mn_sse	   *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->max_event = max_event ? max_event : MN_SSE_DEFAULT_MAX_EVENT;
	p->cb = cb;
	p->arg = arg;
	p->retry = -1;
	return p;
}

void
mn_sse_free(mn_sse *p)
{
	if (p == NULL)
		return;
	mn_buf_free(&p->line);
	mn_buf_free(&p->data);
	mn_buf_free(&p->type);
	mn_buf_free(&p->id);
	mn_buf_free(&p->last_id);
	mn_buf_free(&p->scratch);
	free(p);
}

bool
mn_sse_pending(const mn_sse *p)
{
	return p->in_line || p->data.len > 0 || p->type.len > 0 ||
		(!p->bom_done && p->bom_seen > 0);
}

int64_t
mn_sse_retry(const mn_sse *p)
{
	return p->retry;
}

const char *
mn_sse_last_id(const mn_sse *p)
{
	return p->last_id.len > 0 ? p->last_id.data : "";
}

bool
mn_sse_type_is(const mn_sse_event *ev, const char *name)
{
	size_t		n = strlen(name);

	return ev->type_len == n && memcmp(ev->type, name, n) == 0;
}

/*
 * The length of the well-formed UTF-8 prefix of s[0..n): n when all of it
 * is.  ASCII, by far the most of what providers send, takes the quick path.
 */
static size_t
utf8_valid_prefix(const unsigned char *s, size_t n)
{
	size_t		i = 0;

	while (i < n)
	{
		unsigned char c = s[i];
		unsigned char lo = 0x80,
					hi = 0xBF;
		size_t		need;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			need = 1;
		else if (c >= 0xE0 && c <= 0xEF)
		{
			need = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			need = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		}
		else
			return i;
		if (n - i <= need)
			return i;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t k = 2; k <= need; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return i;
		i += need + 1;
	}
	return n;
}

/*
 * s[0..n) with each maximal invalid subpart replaced by U+FFFD, into
 * p->scratch: the WHATWG UTF-8 decoder, which keeps the bytes of good
 * sequences and drops a bad one at the first byte that cannot continue it.
 */
static bool
utf8_repair(mn_sse *p, const unsigned char *s, size_t n)
{
	static const char fffd[3] = {(char) 0xEF, (char) 0xBF, (char) 0xBD};
	size_t		i = 0;

	mn_buf_reset(&p->scratch);
	while (i < n)
	{
		size_t		good = utf8_valid_prefix(s + i, n - i);
		unsigned char c;
		unsigned char lo = 0x80,
					hi = 0xBF;
		size_t		need,
					k;

		if (!mn_buf_put(&p->scratch, (const char *) s + i, good))
			return false;
		i += good;
		if (i == n)
			break;
		/* s[i] starts a bad sequence: skip as far as it could be valid */
		c = s[i];
		need = 0;
		if (c >= 0xC2 && c <= 0xDF)
			need = 1;
		else if (c >= 0xE0 && c <= 0xEF)
		{
			need = 2;
			lo = c == 0xE0 ? 0xA0 : 0x80;
			hi = c == 0xED ? 0x9F : 0xBF;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			need = 3;
			lo = c == 0xF0 ? 0x90 : 0x80;
			hi = c == 0xF4 ? 0x8F : 0xBF;
		}
		i++;
		for (k = 0; k < need && i < n; k++)
		{
			if (s[i] < lo || s[i] > hi)
				break;
			lo = 0x80;
			hi = 0xBF;
			i++;
		}
		if (!mn_buf_put(&p->scratch, fffd, sizeof(fffd)))
			return false;
	}
	return true;
}

static int
sse_dispatch(mn_sse *p)
{
	mn_sse_event ev;
	int			rc;

	if (p->id_changed)
	{
		mn_buf_reset(&p->last_id);
		if (!mn_buf_put(&p->last_id, p->id.data ? p->id.data : "", p->id.len))
			return MN_SSE_NOMEM;
		p->id_changed = false;
	}
	if (p->data.len == 0)
	{
		mn_buf_reset(&p->type);
		return 0;
	}
	/* the LF after the last data line is not part of the data */
	p->data.data[--p->data.len] = '\0';
	ev.type = p->type.len > 0 ? p->type.data : "message";
	ev.type_len = p->type.len > 0 ? p->type.len : strlen("message");
	ev.data = p->data.data;
	ev.len = p->data.len;
	ev.id = mn_sse_last_id(p);
	rc = p->cb != NULL ? p->cb(p->arg, &ev) : 0;
	mn_buf_reset(&p->data);
	mn_buf_reset(&p->type);
	return rc;
}

/* One complete line, without its terminator. */
static int
sse_line(mn_sse *p, const char *s, size_t n)
{
	const char *colon,
			   *value;
	size_t		flen,
				vlen;

	if (n == 0)
		return sse_dispatch(p);
	if (s[0] == ':')
		return 0;
	if (utf8_valid_prefix((const unsigned char *) s, n) != n)
	{
		if (!utf8_repair(p, (const unsigned char *) s, n))
			return MN_SSE_NOMEM;
		s = p->scratch.data;
		n = p->scratch.len;
	}
	if (n > p->max_event || p->data.len + p->type.len > p->max_event - n)
		return MN_SSE_TOO_LARGE;

	colon = memchr(s, ':', n);
	if (colon != NULL)
	{
		flen = (size_t) (colon - s);
		value = colon + 1;
		vlen = n - flen - 1;
		if (vlen > 0 && value[0] == ' ')
		{
			value++;
			vlen--;
		}
	}
	else
	{
		flen = n;
		value = "";
		vlen = 0;
	}

	if (flen == 4 && memcmp(s, "data", 4) == 0)
	{
		if (!mn_buf_put(&p->data, value, vlen) || !mn_buf_put(&p->data, "\n", 1))
			return MN_SSE_NOMEM;
	}
	else if (flen == 5 && memcmp(s, "event", 5) == 0)
	{
		mn_buf_reset(&p->type);
		if (!mn_buf_put(&p->type, value, vlen))
			return MN_SSE_NOMEM;
	}
	else if (flen == 2 && memcmp(s, "id", 2) == 0)
	{
		if (memchr(value, '\0', vlen) == NULL)
		{
			mn_buf_reset(&p->id);
			if (!mn_buf_put(&p->id, value, vlen))
				return MN_SSE_NOMEM;
			p->id_changed = true;
		}
	}
	else if (flen == 5 && memcmp(s, "retry", 5) == 0)
	{
		if (mn_all_digits(value, vlen))
		{
			int64_t		ms = 0;

			for (size_t i = 0; i < vlen; i++)
			{
				int			d = value[i] - '0';

				if (ms > (INT64_MAX - d) / 10)
				{
					ms = INT64_MAX;
					break;
				}
				ms = ms * 10 + d;
			}
			p->retry = ms;
		}
	}
	/* any other field is ignored */
	return 0;
}

/* Bytes of a line whose end has not arrived. */
static int
sse_partial(mn_sse *p, const char *s, size_t n)
{
	if (n == 0)
		return 0;
	if (!p->in_line)
	{
		p->in_line = true;
		p->in_comment = s[0] == ':';
	}
	if (p->in_comment)
		return 0;
	if (n > p->max_event ||
		p->line.len + p->data.len + p->type.len > p->max_event - n)
		return MN_SSE_TOO_LARGE;
	if (!mn_buf_put(&p->line, s, n))
		return MN_SSE_NOMEM;
	return 0;
}

/* The end of a line whose last bytes are s[0..n). */
static int
sse_line_end(mn_sse *p, const char *s, size_t n)
{
	int			rc;

	if (!p->in_line)
		return sse_line(p, s, n);
	if (p->in_comment)
	{
		p->in_line = p->in_comment = false;
		return 0;
	}
	rc = sse_partial(p, s, n);
	p->in_line = false;
	if (rc != 0)
		return rc;
	rc = sse_line(p, p->line.data ? p->line.data : "", p->line.len);
	mn_buf_reset(&p->line);
	return rc;
}

int
mn_sse_feed(mn_sse *p, const char *bytes, size_t len)
{
	size_t		i = 0;
	int			rc = 0;

	if (p->status != 0)
		return p->status;

	if (!p->bom_done)
	{
		while (i < len && p->bom_seen < 3 &&
			   (unsigned char) bytes[i] == utf8_bom[p->bom_seen])
		{
			p->bom_seen++;
			i++;
		}
		if (p->bom_seen == 3)
			p->bom_done = true;
		else if (i == len)
			return 0;			/* still a BOM, as far as it goes */
		else
		{
			/* not a BOM: what matched is the start of the first line */
			p->bom_done = true;
			if ((rc = sse_partial(p, (const char *) utf8_bom, p->bom_seen)) != 0)
				return p->status = rc;
		}
	}

	while (i < len)
	{
		const char *s = bytes + i;
		size_t		n = len - i;
		const char *lf,
				   *cr;
		size_t		span;

		if (p->after_cr)
		{
			p->after_cr = false;
			if (s[0] == '\n')
			{
				i++;
				continue;
			}
		}
		lf = memchr(s, '\n', n);
		span = lf != NULL ? (size_t) (lf - s) : n;
		cr = memchr(s, '\r', span);
		if (cr != NULL)
			span = (size_t) (cr - s);
		if (span == n)
		{
			rc = sse_partial(p, s, n);
			break;
		}
		if ((rc = sse_line_end(p, s, span)) != 0)
			break;
		if (s[span] == '\r')
			p->after_cr = true;
		i += span + 1;
	}
	if (rc != 0)
		p->status = rc;
	return rc;
}
