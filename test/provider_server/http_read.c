/*
 * http_read.c: reading HTTP/1.1 requests off a connection for http.c: the
 * request line and headers (names lower-cased), then a body sent with
 * Content-Length or chunked (trailers skipped), answering Expect:
 * 100-continue; input left over belongs to the next request (pipelining).
 * Limits: a head of MAX_HEAD bytes (431 beyond), a body of MAX_BODY (413).
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define MAX_HEAD (64 * 1024)
#define MAX_BODY (32L * 1024 * 1024)	/* Anthropic's Messages limit */

void
request_free(request *rq)
{
	free(rq->method);
	free(rq->path);
	for (size_t i = 0; i < rq->nh; i++)
	{
		free(rq->h[i].name);
		free(rq->h[i].value);
	}
	free(rq->h);
	buf_free(&rq->body);
	memset(rq, 0, sizeof(*rq));
}

const char *
header_get(const request *rq, const char *name)
{
	for (size_t i = 0; i < rq->nh; i++)
		if (strcmp(rq->h[i].name, name) == 0)
			return rq->h[i].value;
	return NULL;
}

/* more input; false on EOF or error */
static bool
fill(conn *c)
{
	char		tmp[16384];
	ssize_t		n;

	do
		n = recv(c->fd, tmp, sizeof(tmp), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	buf_put(&c->in, tmp, (size_t) n);
	return true;
}

bool
send_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0)
	{
		ssize_t		w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		s += w;
		n -= (size_t) w;
	}
	return true;
}

static char *
trim(char *s, char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	return xmemdup(s, (size_t) (e - s));
}

/* the offset of the line end (at '\n') from `from`, reading more as needed */
static bool
find_line(conn *c, size_t from, size_t *eol)
{
	for (;;)
	{
		char	   *nl = memchr(c->in.p + from, '\n', c->in.len - from);

		if (nl)
		{
			*eol = (size_t) (nl - c->in.p);
			return true;
		}
		if (c->in.len - c->off > MAX_HEAD || !fill(c))
			return false;
	}
}

static bool
read_exact(conn *c, size_t n, buf *out)
{
	while (c->in.len - c->off < n)
		if (!fill(c))
			return false;
	buf_put(out, c->in.p + c->off, n);
	c->off += n;
	return true;
}

/* the "\r\n\r\n" that ends a request head, or NULL (memmem is not POSIX) */
static char *
find_blank_line(char *s, size_t n)
{
	for (size_t i = 0; s && i + 4 <= n; i++)
		if (s[i] == '\r' && memcmp(s + i, "\r\n\r\n", 4) == 0)
			return s + i;
	return NULL;
}

/*
 * Read one request.  Returns 1 with *rq filled, 0 on a clean EOF between
 * requests, or an HTTP status to answer before closing (400, 413, 431).
 */
int
read_request(conn *c, request *rq)
{
	size_t		head_end;
	char	   *p,
			   *e,
			   *line_end;
	const char *te,
			   *cl,
			   *expect;

	memset(rq, 0, sizeof(*rq));
	/* drop what earlier requests used; offsets are only kept within one */
	if (c->off > 0)
	{
		memmove(c->in.p, c->in.p + c->off, c->in.len - c->off);
		c->in.len -= c->off;
		c->off = 0;
	}
	/* the head ends at the first empty line */
	for (;;)
	{
		char	   *s = c->in.p ? c->in.p + c->off : NULL;
		size_t		avail = c->in.len - c->off;
		char	   *end = find_blank_line(s, avail);

		if (end)
		{
			head_end = (size_t) (end - c->in.p) + 4;
			break;
		}
		if (avail > MAX_HEAD)
			return 431;
		if (!fill(c))
			return avail == 0 ? 0 : 400;
	}

	p = c->in.p + c->off;
	e = c->in.p + head_end - 2;
	line_end = memchr(p, '\n', (size_t) (e - p));
	{
		char	   *sp1 = memchr(p, ' ', (size_t) (line_end - p));
		char	   *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t) (line_end - sp1 - 1)) : NULL;
		char	   *q;

		if (sp1 == NULL || sp2 == NULL || line_end - sp2 < 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
			return 400;
		rq->method = xmemdup(p, (size_t) (sp1 - p));
		q = memchr(sp1 + 1, '?', (size_t) (sp2 - sp1 - 1));
		rq->path = xmemdup(sp1 + 1, (size_t) ((q ? q : sp2) - sp1 - 1));
		rq->http10 = sp2[8] == '0';
	}
	for (p = line_end + 1; p < e;)
	{
		char	   *nl = memchr(p, '\n', (size_t) (e - p));
		char	   *colon;

		if (nl == NULL)
			nl = e;
		colon = memchr(p, ':', (size_t) (nl - p));
		if (colon == NULL || colon == p)
			return 400;
		rq->h = xrealloc(rq->h, (rq->nh + 1) * sizeof(hdr));
		rq->h[rq->nh].name = trim(p, colon);
		for (char *k = rq->h[rq->nh].name; *k; k++)
			if (*k >= 'A' && *k <= 'Z')
				*k = (char) (*k - 'A' + 'a');
		rq->h[rq->nh].value = trim(colon + 1, nl);
		rq->nh++;
		p = nl + 1;
	}
	c->off = head_end;

	te = header_get(rq, "transfer-encoding");
	cl = header_get(rq, "content-length");
	expect = header_get(rq, "expect");
	if (expect && strcasecmp(expect, "100-continue") == 0 &&
		!send_all(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25))
		return 0;
	buf_put(&rq->body, "", 0);
	if (te && strcasecmp(te, "chunked") == 0)
	{
		for (;;)
		{
			size_t		eol;
			char	   *x;
			unsigned long size;

			if (!find_line(c, c->off, &eol))
				return 400;
			size = strtoul(c->in.p + c->off, &x, 16);
			if (x == c->in.p + c->off)
				return 400;
			c->off = eol + 1;
			if (size == 0)
			{
				/* trailers, up to the empty line */
				for (;;)
				{
					if (!find_line(c, c->off, &eol))
						return 400;
					bool		empty = eol == c->off || (eol == c->off + 1 && c->in.p[c->off] == '\r');

					c->off = eol + 1;
					if (empty)
						break;
				}
				break;
			}
			if (rq->body.len + size > (unsigned long) MAX_BODY)
				return 413;
			if (!read_exact(c, size, &rq->body))
				return 400;
			if (!find_line(c, c->off, &eol))
				return 400;
			c->off = eol + 1;
		}
	}
	else if (cl)
	{
		char	   *x;
		long		n = strtol(cl, &x, 10);

		if (x == cl || *x != '\0' || n < 0)
			return 400;
		if (n > MAX_BODY)
			return 413;
		if (!read_exact(c, (size_t) n, &rq->body))
			return 400;
	}
	return 1;
}
