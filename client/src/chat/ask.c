/*
 * ask.c
 *		One prompt to the model, outside any session: the compaction levels'
 *		summaries and LLMMap's items.
 *
 * The request is a system prompt (or none) and the prompt as the one user
 * message, sent through the turn's transport and decoders with the turn's
 * settings (mn_turn_settings); the reply's text is collected.  A deadline,
 * when given, bounds the whole request: it is the transport's idle timeout
 * too, and a reply still streaming when it passes is stopped.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "chat/chat.h"
#include "stream/http.h"

#define DEADLINE_PASSED 7001	/* the text callback's stop value */

typedef struct collected
{
	mn_buf	   *text;
	int64_t		deadline;		/* 0: none */
} collected;

static int
collect_text(void *arg, const mn_delta *d)
{
	collected  *c = arg;

	if (d->kind == MN_DELTA_TEXT)
		mn_buf_put(c->text, d->text, d->len);
	return c->deadline > 0 && mn_now_ms() > c->deadline ? DEADLINE_PASSED : 0;
}

int
mn_ask(mnemo_store *st, const turn_cfg *cfg, const mn_ask_request *a, mn_buf *reply)
{
	mn_req_message msg;
	mn_request	req;
	mn_http_post post;
	mn_stream  *stream;
	collected	c;
	char	   *body = NULL;
	size_t		body_len = 0;
	bool		accepted = false;
	int			rc;

	memset(&msg, 0, sizeof(msg));
	msg.role = MN_REQ_USER;
	msg.text = a->prompt;
	memset(&req, 0, sizeof(req));
	req.model = cfg->model;
	req.system = a->system;
	req.messages = &msg;
	req.n_messages = 1;
	req.max_output_tokens = a->max_output > 0 ? a->max_output : cfg->max_output;
	req.has_temperature = a->has_temperature;
	req.temperature = a->temperature;
	if ((rc = mn_request_body(cfg->provider, &req, &body, &body_len, NULL)) != MNEMO_OK)
		return mn_fail(st, rc, "the request could not be made");
	c.text = reply;
	c.deadline = a->timeout_ms > 0 ? mn_now_ms() + a->timeout_ms : 0;
	if ((stream = mn_stream_new(cfg->provider, NULL, collect_text, &c)) == NULL)
	{
		free(body);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	memset(&post, 0, sizeof(post));
	post.provider = cfg->provider;
	post.url = cfg->url;
	post.api_key = cfg->api_key;
	post.body = body;
	post.body_len = body_len;
	post.connect_timeout_ms = a->timeout_ms > 0 && a->timeout_ms < cfg->connect_ms
		? a->timeout_ms : cfg->connect_ms;
	post.idle_timeout_ms = a->timeout_ms > 0 ? a->timeout_ms : cfg->idle_ms;
	post.max_retries = cfg->retries;
	post.stream = stream;
	rc = mn_http_send(st, &post, &accepted);
	if (rc != MNEMO_OK && mn_stream_stop_value(stream) == DEADLINE_PASSED)
		rc = mn_fail(st, MNEMO_ERR_TIMEOUT, "no complete reply within %d ms", a->timeout_ms);
	else if (rc == MNEMO_OK && mn_stream_end(stream) != MN_STREAM_COMPLETE)
		rc = mn_fail(st, MNEMO_ERR_STREAM, "the reply was cut short");
	else if (rc == MNEMO_OK && reply->oom)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	mn_stream_free(stream);
	free(body);
	return rc;
}
