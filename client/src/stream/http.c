/*
 * http.c
 *		The libcurl transport of chat turns: POST a request body to a
 *		provider and feed the response body to a stream as it arrives.
 *
 * One transfer runs on the store's easy handle (kept between turns so that
 * the connection to the provider is reused) inside the store's multi
 * handle: the loop below waits with curl_multi_poll() in steps of at most
 * 100 ms, which lets it enforce the idle timeout to the step and lets
 * mnemo_turn_cancel() wake it at once with curl_multi_wakeup() (the two
 * calls libcurl allows from another thread).
 *
 * Status >= 400: the body is collected (bounded) and read with
 * mn_http_error_parse(); nothing reaches the stream.  A 2xx response is
 * "accepted" when its headers end: from then on a failure is the turn's
 * (its stream began), before it the request's.
 *
 * The API key goes into one request header and nowhere else; the
 * provider's error message is searched for it and the key replaced, since
 * some servers echo what they were given.
 */
#define _POSIX_C_SOURCE 200809L

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/json.h"
#include "stream/http.h"

#define MAX_ERROR_BODY (64 * 1024)
#define MAX_RETRY_WAIT_MS 60000
#define BASE_BACKOFF_MS 500
#define POLL_STEP_MS 100

/* "libmnemo/MAJOR.MINOR.PATCH", from the one place the version is written */
#define STR_(x) #x
#define STR(x) STR_(x)
#define USER_AGENT "libmnemo/" STR(MNEMO_VERSION_MAJOR) "." STR(MNEMO_VERSION_MINOR) "." \
	STR(MNEMO_VERSION_PATCH)

typedef struct mn_http
{
	CURL	   *easy;
	CURLM	   *multi;
	atomic_bool cancel;
	const atomic_bool *stop;	/* the store's stop flag (st->stop), a cancel
								 * that no turn's start clears */
	atomic_int	status;			/* of the last response */
} mn_http;

/* Whether the transfer is to stop: mnemo_turn_cancel, or the store's stop
 * flag (a background compaction whose owner closes its handle). */
static bool
cancelled(const mn_http *h)
{
	return atomic_load(&h->cancel) || (h->stop != NULL && atomic_load(h->stop));
}

static void
http_free(mn_http *h)
{
	if (h == NULL)
		return;
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	if (h->easy != NULL)
		curl_easy_cleanup(h->easy);
	free(h);
}

static void
http_release(mnemo_store *st)
{
	http_free(st->http);
	st->http = NULL;
}

static const mn_attachment http_attachment = {http_release, NULL};

static mn_http *
http_get(const mnemo_store *st)
{
	return st == NULL ? NULL : st->http;
}

int
mn_http_begin(mnemo_store *st)
{
	mn_http    *h = http_get(st);

	if (st->conn == NULL)
		return mn_fail(st, MNEMO_ERR_CONNECTION, "not connected");
	if (h == NULL)
	{
		if ((h = calloc(1, sizeof(*h))) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		atomic_init(&h->cancel, false);
		atomic_init(&h->status, 0);
		h->easy = curl_easy_init();
		h->multi = curl_multi_init();
		if (h->easy == NULL || h->multi == NULL)
		{
			http_free(h);
			return mn_fail(st, MNEMO_ERR_NOMEM, "could not create a libcurl handle");
		}
		st->http = h;
		mn_attach(st, &http_attachment);
	}
	atomic_store(&h->cancel, false);
	h->stop = st->stop;
	return MNEMO_OK;
}

MNEMO_API void
mnemo_turn_cancel(mnemo_store *st)
{
	mn_http    *h = http_get(st);

	if (h == NULL)
		return;
	atomic_store(&h->cancel, true);
	curl_multi_wakeup(h->multi);
}

MNEMO_API void
mnemo_store_cancel(mnemo_store *st)
{
	mnemo_turn_cancel(st);
}

MNEMO_API int
mnemo_http_status(const mnemo_store *st)
{
	mn_http    *h = http_get(st);

	return h == NULL ? 0 : atomic_load(&h->status);
}

MNEMO_API int
mnemo_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? MNEMO_OK : MNEMO_ERR_NOMEM;
}

MNEMO_API void
mnemo_global_cleanup(void)
{
	curl_global_cleanup();
}

/* ---- one transfer -------------------------------------------------------- */

typedef enum abort_reason
{
	ABORT_NONE = 0,
	ABORT_CANCEL,
	ABORT_IDLE,
	ABORT_CALLER				/* the stream's callback */
} abort_reason;

typedef struct transfer
{
	mn_http    *h;
	const mn_http_post *post;
	int64_t		last_byte_ms;
	int			status;
	bool		accepted;
	bool		json;			/* the response is application/json: an
								 * error object, not a stream, even on 200 */
	bool		body_seen;
	abort_reason abort;
	/* status >= 400 */
	mn_buf		errbody;		/* an error response's body, bounded */
	/* headers of the current response */
	int64_t		retry_after_ms; /* -1: none */
	int			should_retry;	/* -1 none, 0 false, 1 true */
} transfer;

/* A wait of ms asked for by a response, capped: a double beyond int64_t
 * (a huge or infinite header value) is undefined to convert. */
static int64_t
capped_wait(double ms)
{
	return ms < MAX_RETRY_WAIT_MS ? (int64_t) ms : MAX_RETRY_WAIT_MS;
}

/* A header's value if the line is "name: value", trimmed into buf. */
static bool
header_value(const char *line, size_t len, const char *name, char *buf, size_t bufsize)
{
	size_t		nlen = strlen(name);
	size_t		i,
				n;

	if (len <= nlen || strncasecmp(line, name, nlen) != 0 || line[nlen] != ':')
		return false;
	i = nlen + 1;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	while (len > i && (line[len - 1] == '\r' || line[len - 1] == '\n' ||
					   line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	n = len - i;
	if (n >= bufsize)
		n = bufsize - 1;
	memcpy(buf, line + i, n);
	buf[n] = '\0';
	return true;
}

static size_t
on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	transfer   *t = arg;
	size_t		len = size * nmemb;
	char		v[64];
	long		code = 0;

	t->last_byte_ms = mn_now_ms();
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
	{
		/* a new response (after a 100 Continue, say): forget the last's */
		t->retry_after_ms = -1;
		t->should_retry = -1;
		t->json = false;
		return len;
	}
	if (header_value(p, len, "content-type", v, sizeof(v)))
		t->json = strncasecmp(v, "application/json", 16) == 0;
	if (header_value(p, len, "retry-after-ms", v, sizeof(v)))
	{
		char	   *end;
		double		ms = strtod(v, &end);

		if (end != v && ms >= 0)
			t->retry_after_ms = capped_wait(ms);
	}
	else if (header_value(p, len, "retry-after", v, sizeof(v)) && t->retry_after_ms < 0)
	{
		/* seconds, or an HTTP-date (RFC 9110 10.2.3); retry-after-ms is
		 * the finer of the two and wins when both came */
		char	   *end;
		double		s = strtod(v, &end);
		time_t		when;

		if (end != v && *end == '\0' && s >= 0)
			t->retry_after_ms = capped_wait(s * 1000);
		else if ((when = curl_getdate(v, NULL)) != (time_t) -1)
		{
			double		ahead = difftime(when, time(NULL));

			t->retry_after_ms = ahead > 0 ? capped_wait(ahead * 1000) : 0;
		}
	}
	else if (header_value(p, len, "x-should-retry", v, sizeof(v)))
		t->should_retry = strcasecmp(v, "true") == 0 ? 1 : strcasecmp(v, "false") == 0 ? 0 : -1;
	else if (len <= 2 && (p[0] == '\r' || p[0] == '\n'))
	{
		/* the end of a response's headers */
		curl_easy_getinfo(t->h->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200)
		{
			t->status = (int) code;
			atomic_store(&t->h->status, (int) code);
		}
		/* a JSON body is the answer to a request that asked for a stream
		 * only when it is an error (a proxy's, sent with 200): read as one */
		if (code >= 200 && code < 300 && !t->json)
			t->accepted = true;
	}
	return len;
}

static size_t
on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	transfer   *t = arg;
	size_t		len = size * nmemb;

	t->last_byte_ms = mn_now_ms();
	if (cancelled(t->h))
	{
		t->abort = ABORT_CANCEL;
		return 0;
	}
	if (t->status >= 300 || !t->accepted)
	{
		/* an error body: kept (up to a bound) for its message */
		size_t		room = MAX_ERROR_BODY - t->errbody.len;

		mn_buf_put(&t->errbody, p, len < room ? len : room);
		return len;
	}
	t->body_seen = true;
	if (mn_stream_feed(t->post->stream, p, len) == MN_STREAM_STOPPED)
	{
		t->abort = ABORT_CALLER;
		return 0;
	}
	return len;
}

/* Also called by libcurl while nothing arrives: the write callbacks alone
 * would not see a cancel during a stall between two poll steps. */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			curl_off_t ulnow)
{
	transfer   *t = arg;

	(void) dltotal;
	(void) dlnow;
	(void) ultotal;
	(void) ulnow;
	if (cancelled(t->h))
	{
		t->abort = ABORT_CANCEL;
		return 1;
	}
	return 0;
}

static int
setup(mnemo_store *st, transfer *t, struct curl_slist **headers)
{
	const mn_http_post *post = t->post;
	CURL	   *e = t->h->easy;
	struct curl_slist *hl = NULL;
	char	   *auth;
	size_t		alen;
	bool		ok = true;

	/* the header holding the key is built, used and wiped here */
	alen = strlen(post->api_key) + 32;
	if ((auth = malloc(alen)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (post->provider == MN_PROVIDER_ANTHROPIC)
		snprintf(auth, alen, "x-api-key: %s", post->api_key);
	else
		snprintf(auth, alen, "Authorization: Bearer %s", post->api_key);
	/* a local server (a base URL of its own) may take no key: no header */
	if (*post->api_key != '\0')
		ok = ok && (hl = curl_slist_append(hl, auth)) != NULL;
	memset(auth, 0, alen);
	free(auth);
	/* the first header makes the list when there was no key's */
	ok = ok && (hl = curl_slist_append(hl, "Content-Type: application/json")) != NULL;
	if (post->provider == MN_PROVIDER_ANTHROPIC)
		ok = ok && curl_slist_append(hl, "anthropic-version: 2023-06-01") != NULL;
	ok = ok && curl_slist_append(hl, "Accept: text/event-stream") != NULL;
	/* no 100-continue round trip before the body */
	ok = ok && curl_slist_append(hl, "Expect:") != NULL;
	if (!ok)
	{
		curl_slist_free_all(hl);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	*headers = hl;

	curl_easy_reset(e);
	curl_easy_setopt(e, CURLOPT_URL, post->url);
	/* a provider speaks HTTP: never a file:// or any other protocol, nor a
	 * redirect to one (the settings refuse such a base URL first) */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, post->body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) post->body_len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long) post->connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, t);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	return MNEMO_OK;
}

/* Run one transfer to its end; the curl result, or -1 when the loop itself
 * gave up (idle timeout, cancel). */
static CURLcode
run(transfer *t)
{
	mn_http    *h = t->h;
	CURLcode	result = CURLE_OK;
	int			running = 1;
	CURLMsg    *msg;
	int			queued;

	t->last_byte_ms = mn_now_ms();
	if (curl_multi_add_handle(h->multi, h->easy) != CURLM_OK)
		return CURLE_OUT_OF_MEMORY;
	for (;;)
	{
		int64_t		idle;

		if (curl_multi_perform(h->multi, &running) != CURLM_OK)
		{
			result = CURLE_OUT_OF_MEMORY;
			break;
		}
		if (!running || t->abort != ABORT_NONE)
			break;
		if (cancelled(h))
		{
			t->abort = ABORT_CANCEL;
			break;
		}
		idle = mn_now_ms() - t->last_byte_ms;
		if (idle >= t->post->idle_timeout_ms)
		{
			t->abort = ABORT_IDLE;
			break;
		}
		idle = t->post->idle_timeout_ms - idle;
		curl_multi_poll(h->multi, NULL, 0, (int) (idle < POLL_STEP_MS ? idle : POLL_STEP_MS), NULL);
	}
	while ((msg = curl_multi_info_read(h->multi, &queued)) != NULL)
		if (msg->msg == CURLMSG_DONE)
			result = msg->data.result;
	/* removing a transfer that has not finished closes its connection */
	curl_multi_remove_handle(h->multi, h->easy);
	return result;
}

/* The message with every occurrence of the key replaced, in place or anew. */
static char *
redact(const char *msg, const char *key)
{
	size_t		klen = strlen(key);
	const char *p;
	char	   *out;
	size_t		n = 0;

	if (klen < 4 || strstr(msg, key) == NULL)
		return strdup(msg);
	if ((out = malloc(strlen(msg) + 1)) == NULL)
		return NULL;
	for (p = msg; *p;)
	{
		if (strncmp(p, key, klen) == 0)
		{
			memcpy(out + n, "[key]", 5);
			n += 5;
			p += klen;
		}
		else
			out[n++] = *p++;
	}
	out[n] = '\0';
	return out;
}

static int64_t
backoff_ms(const transfer *t, int attempt)
{
	int64_t		ms;

	if (t->retry_after_ms >= 0)
		ms = t->retry_after_ms;
	else
	{
		ms = (int64_t) BASE_BACKOFF_MS << (attempt < 10 ? attempt : 10);
		/* up to a quarter more, so that clients refused together spread out */
		ms += mn_now_ms() % (ms / 4 + 1);
	}
	return ms > MAX_RETRY_WAIT_MS ? MAX_RETRY_WAIT_MS : ms;
}

/* Sleep, waking early for a cancel; false when cancelled. */
static bool
wait_ms(mn_http *h, int64_t ms)
{
	int64_t		until = mn_now_ms() + ms;
	int64_t		left;

	while ((left = until - mn_now_ms()) > 0)
	{
		if (cancelled(h))
			return false;
		curl_multi_poll(h->multi, NULL, 0, (int) (left < POLL_STEP_MS ? left : POLL_STEP_MS), NULL);
	}
	return !cancelled(h);
}

static int
http_error(mnemo_store *st, const transfer *t)
{
	mn_http_error e;
	char	   *msg;
	int			code;

	if (t->errbody.oom || mn_http_error_parse(t->status, t->errbody.data, t->errbody.len, &e) != MNEMO_OK)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory reading an HTTP %d response", t->status);
	if (e.errclass == MN_ERRCLASS_AUTH || e.errclass == MN_ERRCLASS_PERMISSION ||
		t->status == 401 || t->status == 403)
		code = MNEMO_ERR_AUTH;
	else if (t->status == 429 || t->status == 529)
		code = MNEMO_ERR_RATE_LIMITED;
	else
		code = MNEMO_ERR_HTTP;
	msg = redact(e.message, t->post->api_key);
	mn_fail(st, code, "HTTP %d: %s", t->status, msg ? msg : "(out of memory)");
	free(msg);
	mn_http_error_clear(&e);
	return code;
}

static bool
retryable(const transfer *t)
{
	mn_http_error e;
	bool		r;

	if (t->should_retry == 0)
		return false;
	if (t->errbody.oom || mn_http_error_parse(t->status, t->errbody.data, t->errbody.len, &e) != MNEMO_OK)
		return false;
	r = e.errclass != MN_ERRCLASS_QUOTA &&
		(t->status == 429 || t->status == 529 || t->status >= 500 || t->should_retry == 1);
	mn_http_error_clear(&e);
	return r;
}

/*
 * A failure before any response that a new attempt may get past: nothing
 * listening, a name that did not resolve, a connection closed or reset
 * before the status line (a restarting server or proxy), as the providers'
 * own SDKs retry them.  A TLS or protocol failure is not transient.
 */
static bool
retryable_network(CURLcode res)
{
	return res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ||
		res == CURLE_GOT_NOTHING || res == CURLE_SEND_ERROR || res == CURLE_RECV_ERROR;
}

int
mn_http_send(mnemo_store *st, const mn_http_post *post, bool *accepted)
{
	mn_http    *h = http_get(st);
	int			attempt;

	*accepted = false;
	if (h == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "mn_http_begin was not called");
	for (attempt = 0;; attempt++)
	{
		transfer	t;
		struct curl_slist *headers = NULL;
		CURLcode	res;
		int			rc;

		memset(&t, 0, sizeof(t));
		t.h = h;
		t.post = post;
		t.retry_after_ms = -1;
		t.should_retry = -1;
		if ((rc = setup(st, &t, &headers)) != MNEMO_OK)
			return rc;
		res = run(&t);
		curl_slist_free_all(headers);
		*accepted = t.accepted;

		/* before the reply began, a failure that may pass is tried again */
		if (t.abort == ABORT_NONE && !t.accepted && attempt < post->max_retries &&
			(res != CURLE_OK ? retryable_network(res) : retryable(&t)))
		{
			mn_buf_free(&t.errbody);
			if (!wait_ms(h, backoff_ms(&t, attempt)))
				return mn_fail(st, MNEMO_ERR_CANCELLED, "the turn was cancelled");
			continue;
		}
		if (t.abort == ABORT_CALLER)
			rc = mn_stream_stop_value(post->stream);
		else if (t.abort == ABORT_CANCEL)
			rc = mn_fail(st, MNEMO_ERR_CANCELLED, "the turn was cancelled");
		else if (t.abort == ABORT_IDLE)
			rc = mn_fail(st, MNEMO_ERR_TIMEOUT, "no data from the provider for %d ms",
						 post->idle_timeout_ms);
		else if (res == CURLE_OPERATION_TIMEDOUT)
			rc = mn_fail(st, MNEMO_ERR_TIMEOUT, "could not connect to the provider within %d ms",
						 post->connect_timeout_ms);
		else if (res == CURLE_OUT_OF_MEMORY)
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory in libcurl");
		else if (res != CURLE_OK && t.accepted)
			rc = mn_fail(st, MNEMO_ERR_STREAM, "the connection to the provider broke mid-stream: %s",
						 curl_easy_strerror(res));
		else if (res != CURLE_OK)
			rc = mn_fail(st, MNEMO_ERR_NETWORK, "could not reach the provider: %s",
						 curl_easy_strerror(res));
		else if (t.status >= 300 || !t.accepted)
			rc = http_error(st, &t);
		else
			rc = MNEMO_OK;
		mn_buf_free(&t.errbody);
		return rc;
	}
}
