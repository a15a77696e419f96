/*
 * http.c: the connections.  One detached thread per connection reads
 * HTTP/1.1 requests (Content-Length or chunked bodies, Expect: 100-continue,
 * keep-alive, pipelining), logs each one, picks the next reply of the script
 * and writes it.
 *
 * Replies are handed out in the order requests finish arriving, under one
 * mutex, which also serializes the log.  Requests the real API would refuse
 * before any model runs (no key, wrong key, no anthropic-version, a body
 * that is not JSON, a missing required field) are answered here with the
 * API's own error and do not use up a reply, unless --lenient.
 *
 * Reading a request is http_read.c's.
 *
 * Writing a response honours the reply's wire options: a wait before the
 * headers, the body cut into writes of the asked sizes, each write one HTTP
 * chunk flushed at once (TCP_NODELAY) with a delay between them, a stall
 * (nothing, or only keep-alives, for S seconds), and a drop (the connection
 * closed, or reset, without the chunked terminator).  A client that goes
 * away during a stall is noticed at once, so the thread ends.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>


static const server_config *cfg;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct timespec started;
static size_t cur_reply;		/* next reply to serve */
static long cur_used;			/* times cur_reply was served */
static long nrequests;
static long nconns;
static long nreplies_used;
static long next_tool_id = 1;

/* open connections, so that a stop can end them (see server_shutdown) */
static int *active;
static size_t nactive;
static size_t cap_active;
static pthread_cond_t all_closed = PTHREAD_COND_INITIALIZER;
static atomic_bool stopping;

void
server_init(const server_config *c)
{
	cfg = c;
	clock_gettime(CLOCK_MONOTONIC, &started);
}

void
server_stats(long *requests, long *replies_used)
{
	pthread_mutex_lock(&mu);
	*requests = nrequests;
	*replies_used = nreplies_used;
	pthread_mutex_unlock(&mu);
}

static long
elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long) ((now.tv_sec - started.tv_sec) * 1000 + (now.tv_nsec - started.tv_nsec) / 1000000);
}

/* sleeps in short slices so that a stop is not held up by a long wait */
static void
sleep_ms(long ms)
{
	while (ms > 0 && !atomic_load(&stopping))
	{
		long		slice = ms < 20 ? ms : 20;
		struct timespec ts = {0, slice * 1000000L};

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		ms -= slice;
	}
}

/* ---- the log ----------------------------------------------------------- */

static bool
is_secret_header(const char *name)
{
	return strcmp(name, "authorization") == 0 || strcmp(name, "x-api-key") == 0 ||
		strcmp(name, "api-key") == 0 || strcmp(name, "proxy-authorization") == 0 ||
		strcmp(name, "cookie") == 0;
}

typedef struct verdict
{
	dialect		dialect;
	const char *auth;			/* bearer, x-api-key, other, none */
	const char *key;			/* match, mismatch, unchecked, missing */
	int			status;
	long		reply;			/* 1-based, 0 = answered by the server */
	const char *label;
	const char *note;			/* why the server answered by itself */
} verdict;

static void
log_request(const conn *c, const request *rq, const request_info *ri, const verdict *v)
{
	buf			b = {0};
	bool		first = true;

	if (cfg->log_fd < 0)
		return;
	buf_printf(&b, "{\"n\":%ld,\"t_ms\":%ld,\"conn\":%ld,\"method\":", ri->number, elapsed_ms(), c->id);
	buf_json_cstr(&b, rq->method);
	buf_puts(&b, ",\"path\":");
	buf_json_cstr(&b, rq->path);
	buf_printf(&b, ",\"dialect\":%s", v->dialect == DIALECT_OPENAI ? "\"openai\""
			   : v->dialect == DIALECT_ANTHROPIC ? "\"anthropic\"" : "null");
	buf_printf(&b, ",\"auth\":\"%s\",\"key\":\"%s\",\"headers\":{", v->auth, v->key);
	for (size_t i = 0; i < rq->nh; i++)
	{
		bool		dup = false;

		for (size_t j = 0; j < i; j++)
			dup |= strcmp(rq->h[j].name, rq->h[i].name) == 0;
		if (dup)
			continue;
		if (!first)
			buf_puts(&b, ",");
		first = false;
		buf_json_cstr(&b, rq->h[i].name);
		buf_puts(&b, ":");
		if (is_secret_header(rq->h[i].name))
		{
			/* presence and scheme only: the value is what must not leak */
			buf_puts(&b, strncasecmp(rq->h[i].value, "Bearer ", 7) == 0
					 ? "\"Bearer [redacted]\"" : "\"[redacted]\"");
			continue;
		}
		{
			buf			val = {0};

			/* repeated headers are one comma-joined value, as HTTP says */
			for (size_t j = i; j < rq->nh; j++)
				if (strcmp(rq->h[j].name, rq->h[i].name) == 0)
				{
					if (val.len)
						buf_puts(&val, ", ");
					buf_puts(&val, rq->h[j].value);
				}
			buf_json_str(&b, val.p, val.len);
			buf_free(&val);
		}
	}
	buf_puts(&b, "},\"model\":");
	if (ri->model)
		buf_json_cstr(&b, ri->model);
	else
		buf_puts(&b, "null");
	buf_printf(&b, ",\"stream\":%s,\"include_usage\":%s,\"status\":%d,\"reply\":",
			   ri->stream ? "true" : "false", ri->include_usage ? "true" : "false", v->status);
	if (v->reply)
		buf_printf(&b, "%ld", v->reply);
	else
		buf_puts(&b, "null");
	if (v->label)
	{
		buf_puts(&b, ",\"label\":");
		buf_json_cstr(&b, v->label);
	}
	if (v->note)
	{
		buf_puts(&b, ",\"note\":");
		buf_json_cstr(&b, v->note);
	}
	buf_printf(&b, ",\"body_bytes\":%zu,", rq->body.len);
	if (rq->body.len && json_valid(rq->body.p, rq->body.len))
	{
		buf_puts(&b, "\"body\":");
		json_minify(&b, rq->body.p, rq->body.len);
	}
	else
	{
		buf_puts(&b, "\"body\":null,\"body_text\":");
		buf_json_str(&b, rq->body.p, rq->body.len);
	}
	buf_puts(&b, "}\n");

	/* one write per line under the lock: lines never interleave */
	pthread_mutex_lock(&mu);
	for (size_t off = 0; off < b.len;)
	{
		ssize_t		w = write(cfg->log_fd, b.p + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
		{
			fprintf(stderr, "provider-server: writing the log: %s\n", strerror(errno));
			break;
		}
		off += (size_t) w;
	}
	pthread_mutex_unlock(&mu);
	buf_free(&b);
}

/* ---- deciding the answer ----------------------------------------------- */

static dialect
dialect_of(const char *path)
{
	size_t		n = strlen(path);

	/* by suffix, so a base URL with a prefix (/openai/v1) still works */
	if (n >= 17 && strcmp(path + n - 17, "/chat/completions") == 0)
		return DIALECT_OPENAI;
	if (n >= 12 && strcmp(path + n - 12, "/v1/messages") == 0)
		return DIALECT_ANTHROPIC;
	return DIALECT_NONE;
}

/* the API's own refusal of a request no model would see, or 0 */
static int
precheck(const request *rq, const request_info *ri, verdict *v,
		 const char **type, const char **message, const char **code)
{
	const char *body = rq->body.p;
	size_t		n = rq->body.len;
	bool		json = n && json_valid(body, n) && *body == '{';
	static const char *const k_messages[] = {"messages", NULL};
	static const char *const k_max_tokens[] = {"max_tokens", NULL};

	*type = *message = *code = NULL;
	if (strcmp(v->key, "missing") == 0 && !cfg->keyless)
	{
		v->note = "no API key";
		if (ri->dialect == DIALECT_ANTHROPIC)
			*message = "x-api-key header is required";
		else
		{
			*message = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY). You can obtain an API key from https://platform.openai.com/account/api-keys.";
			*code = "null";
		}
		return 401;
	}
	if (strcmp(v->key, "mismatch") == 0)
	{
		v->note = "wrong API key";
		return 401;
	}
	if (ri->dialect == DIALECT_ANTHROPIC && header_get(rq, "anthropic-version") == NULL)
	{
		v->note = "no anthropic-version header";
		*message = "anthropic-version: header is required";
		return 400;
	}
	if (!json)
	{
		v->note = "body is not a JSON object";
		*message = ri->dialect == DIALECT_ANTHROPIC
			? "There was an error parsing the body of your request: it is not a JSON object."
			: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";
		*code = "null";
		return 400;
	}
	if (ri->model == NULL)
	{
		v->note = "no model";
		*message = ri->dialect == DIALECT_ANTHROPIC ? "model: Field required"
			: "you must provide a model parameter";
		*code = "null";
		return 400;
	}
	if (json_array_length(body, n, k_messages) < 0)
	{
		v->note = "no messages array";
		*message = ri->dialect == DIALECT_ANTHROPIC ? "messages: Field required"
			: "Missing required parameter: 'messages'.";
		*code = "\"missing_required_parameter\"";
		return 400;
	}
	if (ri->dialect == DIALECT_ANTHROPIC)
	{
		const char *vs;
		size_t		vn;

		if (!json_lookup(body, n, k_max_tokens, &vs, &vn))
		{
			v->note = "no max_tokens";
			*message = "max_tokens: Field required";
			return 400;
		}
	}
	return 0;
}

static void
check_auth(const request *rq, dialect d, verdict *v)
{
	const char *key = NULL;

	if (d == DIALECT_ANTHROPIC)
	{
		key = header_get(rq, "x-api-key");
		v->auth = key ? "x-api-key" : "none";
	}
	else
	{
		const char *a = header_get(rq, "authorization");

		if (a == NULL)
			v->auth = "none";
		else if (strncasecmp(a, "Bearer ", 7) == 0)
		{
			v->auth = "bearer";
			key = a + 7;
			while (*key == ' ')
				key++;
		}
		else
			v->auth = "other";
	}
	if (key == NULL || *key == '\0')
		v->key = "missing";
	else if (cfg->key == NULL)
		v->key = "unchecked";
	else
		v->key = strcmp(key, cfg->key) == 0 ? "match" : "mismatch";
}

/* the next reply of the script, or NULL when it has run out */
static const reply *
take_reply(long *number, long *first_tool_id)
{
	const script *s = cfg->script;
	const reply *r = NULL;

	pthread_mutex_lock(&mu);
	if (cur_reply < s->nreplies)
	{
		r = &s->replies[cur_reply];
		*number = (long) cur_reply + 1;
		if (r->repeat > 0 && ++cur_used >= r->repeat)
		{
			cur_reply++;
			cur_used = 0;
		}
		nreplies_used++;
		*first_tool_id = next_tool_id;
		next_tool_id += (long) reply_tool_count(r);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

/* ---- writing ----------------------------------------------------------- */

typedef struct writer
{
	int			fd;
	bool		chunked;
	uint64_t	rng;
	size_t		next_size_i;
} writer;

static bool
write_piece(writer *w, const char *p, size_t n)
{
	buf			b = {0};
	bool		ok;

	if (!w->chunked)
		return send_all(w->fd, p, n);
	/* one HTTP chunk per write, in one send, so a client read sees it whole */
	buf_printf(&b, "%zx\r\n", n);
	buf_put(&b, p, n);
	buf_put(&b, "\r\n", 2);
	ok = send_all(w->fd, b.p, b.len);
	buf_free(&b);
	return ok;
}

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t	x = *s ? *s : 0x9E3779B97F4A7C15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static size_t
next_size(const reply *r, writer *w, const rendered *rd, size_t pos)
{
	switch (r->chunk_mode)
	{
		case CHUNK_ALL:
			return rd->body.len - pos;
		case CHUNK_SIZES:
			return (size_t) r->chunk_sizes[w->next_size_i++ % r->nchunk_sizes];
		case CHUNK_RANDOM:
			return 1 + (size_t) (xorshift(&w->rng) % (uint64_t) r->chunk_max);
		default:
			for (size_t i = 0; i <= rd->nevents; i++)
				if (rd->event_offsets[i] > pos)
					return rd->event_offsets[i] - pos;
			return rd->body.len - pos;
	}
}

/* true if the peer has closed (or reset) its side */
static bool
peer_gone(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char		c;
	ssize_t		n;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & (POLLERR | POLLHUP))
		return true;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* nothing for `seconds` (keep-alives if asked); false if the client left */
static bool
stall(writer *w, const reply *r, const request_info *ri)
{
	long		total = (long) (r->stall_seconds * 1000.0);
	long		start = elapsed_ms();
	long		next_ka = r->stall_keepalive_ms ? start + r->stall_keepalive_ms : -1;

	for (;;)
	{
		long		now = elapsed_ms();
		long		slice = 20;

		if (now - start >= total)
			return true;
		if (atomic_load(&stopping) || peer_gone(w->fd))
			return false;
		if (next_ka >= 0 && now >= next_ka)
		{
			buf			ka = {0};
			bool		ok;

			render_keepalive(ri, &ka);
			ok = write_piece(w, ka.p, ka.len);
			buf_free(&ka);
			if (!ok)
				return false;
			next_ka += r->stall_keepalive_ms;
		}
		if (total - (now - start) < slice)
			slice = total - (now - start);
		sleep_ms(slice);
	}
}

static size_t
cut_offset(const cutpoint *c, const rendered *rd)
{
	if (c->byte >= 0)
		return (size_t) c->byte < rd->body.len ? (size_t) c->byte : rd->body.len;
	return (size_t) c->at < rd->nevents ? rd->event_offsets[c->at] : rd->body.len;
}

static void
reset_connection(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/*
 * Send one response.  Returns true when the connection can carry another
 * request; false when it must be closed (drop, framing close, client gone).
 */
static bool
send_response(conn *c, const reply *r, const request_info *ri, int status,
			  const rendered *rd, bool keep_alive)
{
	buf			h = {0};
	time_t		now = time(NULL);
	struct tm	tm;
	char		date[64];
	bool		stream = status == 200 && strncmp(rd->content_type, "text/event-stream", 17) == 0;
	writer		w = {.fd = c->fd, .chunked = stream && !(r && r->framing_close)};
	size_t		pos = 0,
				stall_at = (size_t) -1,
				drop_at = (size_t) -1;
	bool		stalled = false;

	if (r && r->framing_close && stream)
		keep_alive = false;
	if (r && r->wait_ms)
		sleep_ms(r->wait_ms);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	buf_printf(&h, "HTTP/1.1 %d %s\r\ndate: %s\r\ncontent-type: %s\r\n",
			   status, status_reason(status), date, rd->content_type);
	if (w.chunked)
		buf_puts(&h, "transfer-encoding: chunked\r\n");
	else if (!(r && r->framing_close && stream))
		buf_printf(&h, "content-length: %zu\r\n", rd->body.len);
	buf_printf(&h, "connection: %s\r\n", keep_alive ? "keep-alive" : "close");
	if (stream)
		buf_puts(&h, "cache-control: no-cache\r\n");
	buf_printf(&h, "%s: req_%ld\r\n", ri->dialect == DIALECT_ANTHROPIC ? "request-id" : "x-request-id", ri->number);
	if (r)
		for (size_t i = 0; i < r->nheaders; i++)
			buf_printf(&h, "%s\r\n", r->headers[i].line);
	buf_puts(&h, "\r\n");
	if (!send_all(c->fd, h.p, h.len))
	{
		buf_free(&h);
		return false;
	}
	buf_free(&h);

	if (r)
	{
		w.rng = r->chunk_seed;
		if (r->stall.set)
			stall_at = cut_offset(&r->stall, rd);
		if (r->drop.set)
			drop_at = cut_offset(&r->drop, rd);
	}
	for (;;)
	{
		size_t		n,
					limit;

		if (!stalled && pos == stall_at)
		{
			stalled = true;
			if (!stall(&w, r, ri))
				return false;
			if (r->stall_close)
				return false;
		}
		if (pos == drop_at)
		{
			if (r->drop_rst)
				reset_connection(c->fd);
			return false;
		}
		if (pos >= rd->body.len)
			break;
		n = r ? next_size(r, &w, rd, pos) : rd->body.len - pos;
		limit = rd->body.len;
		if (!stalled && stall_at > pos && stall_at < limit)
			limit = stall_at;
		if (drop_at > pos && drop_at < limit)
			limit = drop_at;
		if (n == 0)
			n = 1;
		if (n > limit - pos)
			n = limit - pos;
		if (!write_piece(&w, rd->body.p + pos, n))
			return false;
		pos += n;
		if (r && r->delay_ms && pos < rd->body.len)
			sleep_ms(r->delay_ms);
	}
	if (w.chunked && !send_all(c->fd, "0\r\n\r\n", 5))
		return false;
	return keep_alive && !(r && r->framing_close && stream);
}

/* answer one request; true if the connection stays open */
static bool
handle(conn *c, const request *rq)
{
	request_info ri = {0};
	verdict		v = {.auth = "none", .key = "missing"};
	rendered	rd;
	const reply *r = NULL;
	const char *type = NULL,
			   *message = NULL,
			   *code = NULL;
	const char *connection = header_get(rq, "connection");
	bool		keep_alive = rq->http10
		? (connection && strcasecmp(connection, "keep-alive") == 0)
		: !(connection && strcasecmp(connection, "close") == 0);
	static const char *const k_stream[] = {"stream", NULL};
	static const char *const k_usage[] = {"stream_options", "include_usage", NULL};
	static const char *const k_model[] = {"model", NULL};
	char	   *model = NULL;
	buf			invalid = {0};
	bool		keep;

	pthread_mutex_lock(&mu);
	ri.number = ++nrequests;
	pthread_mutex_unlock(&mu);

	v.dialect = ri.dialect = dialect_of(rq->path);
	if (rq->body.len)
	{
		ri.stream = json_get_bool(rq->body.p, rq->body.len, k_stream) == 1;
		ri.include_usage = json_get_bool(rq->body.p, rq->body.len, k_usage) == 1;
		ri.model = model = json_get_string(rq->body.p, rq->body.len, k_model);
	}
	ri.body_len = rq->body.len;
	check_auth(rq, ri.dialect, &v);

	if (ri.dialect == DIALECT_NONE || strcmp(rq->method, "POST") != 0)
	{
		/* what OpenAI answers for a route it does not have */
		v.status = ri.dialect == DIALECT_NONE ? 404 : 405;
		v.note = "no such route";
		buf_printf(&invalid, "Invalid URL (%s %s)", rq->method, rq->path);
		render_error(NULL, &ri, v.status, "invalid_request_error", invalid.p, "null", &rd);
	}
	else if (!cfg->lenient && (v.status = precheck(rq, &ri, &v, &type, &message, &code)) != 0)
		render_error(NULL, &ri, v.status, type, message, code, &rd);
	else if ((r = take_reply(&v.reply, &ri.first_tool_id)) == NULL)
	{
		v.status = 500;
		v.note = "script exhausted";
		buf_printf(&invalid, "provider-server: the script has no reply left for request %ld (it has %zu replies)",
				   ri.number, cfg->script->nreplies);
		fprintf(stderr, "%s\n", invalid.p);
		render_error(NULL, &ri, 500, NULL, invalid.p, NULL, &rd);
	}
	else
	{
		v.label = r->label;
		v.status = r->status ? r->status : 200;
		if (r->status)
			render_error(r, &ri, r->status, NULL, NULL, NULL, &rd);
		else
			render_reply(r, &ri, &rd);
	}
	log_request(c, rq, &ri, &v);
	if (!cfg->quiet)
		fprintf(stderr, "provider-server: #%ld %s %s -> %d%s%s\n", ri.number, rq->method, rq->path,
				v.status, v.note ? " " : "", v.note ? v.note : "");
	keep = send_response(c, r, &ri, v.status, &rd, keep_alive);
	rendered_free(&rd);
	buf_free(&invalid);
	free(model);
	return keep;
}

static void *
conn_main(void *arg)
{
	conn		c = {.fd = *(int *) arg};
	int			one = 1;

	free(arg);
	pthread_mutex_lock(&mu);
	c.id = ++nconns;
	if (nactive == cap_active)
	{
		cap_active = cap_active ? cap_active * 2 : 16;
		active = xrealloc(active, cap_active * sizeof(int));
	}
	active[nactive++] = c.fd;
	pthread_mutex_unlock(&mu);
	/* each write must leave at once: chunk boundaries are the test */
	setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;)
	{
		request		rq;
		int			rc = read_request(&c, &rq);

		if (rc == 0)
		{
			request_free(&rq);
			break;
		}
		if (rc != 1)
		{
			char		resp[256];
			int			n = snprintf(resp, sizeof(resp),
									 "HTTP/1.1 %d %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
									 rc, rc == 431 ? "Request Header Fields Too Large" : status_reason(rc));

			send_all(c.fd, resp, (size_t) n);
			request_free(&rq);
			break;
		}
		if (!handle(&c, &rq))
		{
			request_free(&rq);
			break;
		}
		request_free(&rq);
	}

	/* unregistered before close, so server_shutdown never sees a reused fd */
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nactive; i++)
		if (active[i] == c.fd)
		{
			active[i] = active[--nactive];
			break;
		}
	if (nactive == 0)
		pthread_cond_broadcast(&all_closed);
	pthread_mutex_unlock(&mu);
	close(c.fd);
	buf_free(&c.in);
	return NULL;
}

bool
server_shutdown(long timeout_ms)
{
	struct timespec deadline;
	bool		done;

	atomic_store(&stopping, true);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L)
	{
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&mu);
	/* wakes threads blocked in recv or send, and stalls (they poll) */
	for (size_t i = 0; i < nactive; i++)
		shutdown(active[i], SHUT_RDWR);
	while (nactive > 0)
		if (pthread_cond_timedwait(&all_closed, &mu, &deadline) != 0)
			break;
	done = nactive == 0;
	pthread_mutex_unlock(&mu);
	if (done)
	{
		free(active);
		active = NULL;
		cap_active = 0;
	}
	return done;
}

void
serve_connection(int fd)
{
	pthread_t	t;
	pthread_attr_t attr;
	int		   *arg = xmalloc(sizeof(int));

	*arg = fd;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, arg) != 0)
	{
		fprintf(stderr, "provider-server: pthread_create failed\n");
		close(fd);
		free(arg);
	}
	pthread_attr_destroy(&attr);
}
