/*
 * llm.c
 *		One LLMMap item: the rendered prompt to the model, retried until the
 *		reply is usable or the attempts run out.
 *
 * Each attempt is one request through the turn's transport (stream/): a
 * system prompt if the map has one, the prompt as the one user message,
 * temperature 0.  timeout_ms bounds the whole attempt: it is the
 * transport's idle timeout, and the text callback stops a reply that is
 * still streaming at the deadline.  A reply wrapped in a markdown code
 * fence is unwrapped.  With a schema, a reply that is not JSON is a
 * "validation" failure and one that does not match a "schema_error"; the
 * next attempt appends the retry guidance and the reason, so the model
 * hears what was wrong.  Attempts wait backoff_ms before the first retry,
 * doubling each time.
 */
#define _POSIX_C_SOURCE 200809L
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map/map.h"
#include "stream/http.h"

#define DEADLINE_PASSED 7001	/* the text callback's stop value */

static const char default_guidance[] =
	"Your previous reply was not valid. Reply with only JSON that matches the schema.";

typedef struct reply
{
	mn_buf		text;
	int64_t		deadline;
} reply;

static int
collect(void *arg, const mn_delta *d)
{
	reply	   *r = arg;

	if (d->kind == MN_DELTA_TEXT)
		mn_buf_put(&r->text, d->text, d->len);
	return mn_now_ms() > r->deadline ? DEADLINE_PASSED : 0;
}

void
mn_map_item_fail(mn_map_item *it, const char *kind, const char *fmt,...)
{
	va_list		ap;
	char		msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	it->success = false;
	it->error_kind = kind;
	free(it->error);
	it->error = strdup(msg);
	free(it->output);
	it->output = NULL;
}

/* One request: the reply's text into r, or the kind of failure. */
static const char *
ask(mn_map_worker *w, const mn_map *m, const char *prompt, reply *r, char *why, size_t whylen)
{
	mn_req_message msg;
	mn_request	req;
	mn_http_post post;
	mn_stream  *stream;
	char	   *body = NULL;
	size_t		body_len = 0;
	bool		accepted = false;
	const char *kind = NULL;
	int			rc;

	memset(&msg, 0, sizeof(msg));
	msg.role = MN_REQ_USER;
	msg.text = prompt;
	memset(&req, 0, sizeof(req));
	req.model = w->cfg.model;
	req.system = m->system_prompt;
	req.messages = &msg;
	req.n_messages = 1;
	req.max_output_tokens = w->cfg.max_output;
	req.has_temperature = true;
	req.temperature = 0.0;
	if (mn_request_body(w->cfg.provider, &req, &body, &body_len, NULL) != MNEMO_OK ||
		(stream = mn_stream_new(w->cfg.provider, NULL, collect, r)) == NULL)
	{
		free(body);
		snprintf(why, whylen, "out of memory");
		return "llm_error";
	}
	memset(&post, 0, sizeof(post));
	post.provider = w->cfg.provider;
	post.url = w->cfg.url;
	post.api_key = w->cfg.api_key;
	post.body = body;
	post.body_len = body_len;
	post.connect_timeout_ms = w->cfg.connect_ms < m->timeout_ms ? w->cfg.connect_ms : m->timeout_ms;
	post.idle_timeout_ms = m->timeout_ms;
	post.max_retries = w->cfg.retries;
	post.stream = stream;
	r->deadline = mn_now_ms() + m->timeout_ms;
	rc = mn_http_send(w->st, &post, &accepted);
	if (rc == MNEMO_ERR_TIMEOUT ||
		(rc != MNEMO_OK && mn_stream_stop_value(stream) == DEADLINE_PASSED))
	{
		kind = "timeout";
		snprintf(why, whylen, "no complete reply within %d ms", m->timeout_ms);
	}
	else if (rc != MNEMO_OK)
	{
		kind = "llm_error";
		snprintf(why, whylen, "%s", mnemo_errmsg(w->st));
	}
	else if (mn_stream_end(stream) != MN_STREAM_COMPLETE)
	{
		kind = "llm_error";
		snprintf(why, whylen, "the reply was cut short");
	}
	else if (r->text.oom)
	{
		kind = "llm_error";
		snprintf(why, whylen, "out of memory");
	}
	mn_stream_free(stream);
	free(body);
	mn_clear_error(w->st);
	return kind;
}

/* The reply without a surrounding markdown code fence, trimmed, malloc'd. */
static char *
unfenced(const char *text)
{
	const char *start = text;
	const char *end;
	const char *fence = strstr(text, "```");

	if (fence != NULL)
	{
		const char *nl = strchr(fence + 3, '\n');
		const char *close = nl ? strstr(nl + 1, "```") : NULL;

		if (nl != NULL)
		{
			start = nl + 1;
			end = close ? close : start + strlen(start);
			return mn_strndup(start, (size_t) (end - start));
		}
	}
	while (*start == ' ' || *start == '\n' || *start == '\r' || *start == '\t')
		start++;
	end = start + strlen(start);
	while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t'))
		end--;
	return mn_strndup(start, (size_t) (end - start));
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

void
mn_map_llm_item(mn_map_worker *w, const mn_map *m, const mnemo_map_options *o, mn_map_item *it)
{
	struct json_object *item = json_tokener_parse(it->item);
	struct json_object *schema = m->schema ? json_tokener_parse(m->schema) : NULL;
	char	   *prompt = NULL;
	char		why[1024] = "";
	bool		retry_guidance = false;
	int			backoff = m->backoff_ms;

	(void) o;
	it->attempts = 0;
	if (!w->cfg_ok)
	{
		mn_map_item_fail(it, "llm_error", "%s", w->cfg_message ? w->cfg_message : "no provider");
		goto done;
	}
	if (mn_map_render(w->st, m->template_text, item, &prompt) != MNEMO_OK)
	{
		/* an item the template cannot use fails alone, without a model call */
		mn_map_item_fail(it, "validation", "%s", mnemo_errmsg(w->st));
		goto done;
	}
	for (int attempt = 0; attempt <= m->max_retries; attempt++)
	{
		reply		r = {{0}, 0};
		const char *kind;
		mn_buf		full = {0};

		if (attempt > 0)
		{
			sleep_ms(backoff);
			backoff *= 2;
		}
		mn_buf_puts(&full, prompt);
		if (retry_guidance)
		{
			mn_buf_puts(&full, "\n\n");
			mn_buf_puts(&full, m->retry_guidance ? m->retry_guidance : default_guidance);
			mn_buf_puts(&full, "\nThe problem: ");
			mn_buf_puts(&full, why);
		}
		it->attempts++;
		kind = full.oom ? "llm_error" : ask(w, m, full.data, &r, why, sizeof(why));
		mn_buf_free(&full);
		retry_guidance = false;
		if (kind == NULL)
		{
			char	   *text = unfenced(r.text.data ? r.text.data : "");
			struct json_object *value;
			enum json_tokener_error jerr = json_tokener_success;

			mn_buf_free(&r.text);
			if (text == NULL)
			{
				mn_map_item_fail(it, "llm_error", "out of memory");
				break;
			}
			if (schema == NULL)
			{
				mn_buf		js = {0};

				mn_buf_put_jstr(&js, text, strlen(text));
				free(text);
				free(it->error);
				it->error = NULL;
				it->error_kind = NULL;
				it->success = !js.oom;
				it->output = js.data;
				break;
			}
			value = json_tokener_parse_verbose(text, &jerr);
			if (jerr != json_tokener_success)
			{
				snprintf(why, sizeof(why), "the reply is not JSON (%s)", json_tokener_error_desc(jerr));
				mn_map_item_fail(it, "validation", "%s", why);
				retry_guidance = true;
			}
			else if (mn_schema_validate(w->st, schema, value) != MNEMO_OK)
			{
				snprintf(why, sizeof(why), "%s", mnemo_errmsg(w->st));
				mn_clear_error(w->st);
				mn_map_item_fail(it, "schema_error", "%s", why);
				retry_guidance = true;
			}
			else
			{
				free(it->error);
				it->error = NULL;
				it->error_kind = NULL;
				it->output = strdup(json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN));
				it->success = it->output != NULL;
			}
			json_object_put(value);
			free(text);
			if (it->success)
				break;
		}
		else
		{
			mn_buf_free(&r.text);
			mn_map_item_fail(it, kind, "%s", why);
		}
	}
done:
	free(prompt);
	json_object_put(item);
	json_object_put(schema);
}
