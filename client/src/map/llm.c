/*
 * llm.c
 *		One LLMMap item: the rendered prompt to the model, retried until the
 *		reply is usable or the attempts run out.
 *
 * Each attempt is one request (mn_ask, the turn's transport): a system
 * prompt if the map has one, the prompt as the one user message,
 * temperature 0, timeout_ms bounding the whole attempt.  A reply wrapped
 * in a markdown code fence is unwrapped.  With a schema, a reply that is not JSON is a
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

static const char default_guidance[] =
	"Your previous reply was not valid. Reply with only JSON that matches the schema.";

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

/* One request: the reply's text into text, or the kind of failure. */
static const char *
ask(mn_map_worker *w, const mn_map *m, const char *prompt, mn_buf *text, char *why, size_t whylen)
{
	mn_ask_request a;
	const char *kind = NULL;
	int			rc;

	memset(&a, 0, sizeof(a));
	a.system = m->system_prompt;
	a.prompt = prompt;
	a.has_temperature = true;
	a.temperature = 0.0;
	a.timeout_ms = m->timeout_ms;
	if ((rc = mn_ask(w->st, &w->cfg, &a, text)) != MNEMO_OK)
	{
		kind = rc == MNEMO_ERR_TIMEOUT ? "timeout" : "llm_error";
		snprintf(why, whylen, "%s", mnemo_errmsg(w->st));
	}
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
		mn_buf		text = {0};
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
		kind = full.oom ? "llm_error" : ask(w, m, full.data, &text, why, sizeof(why));
		mn_buf_free(&full);
		retry_guidance = false;
		if (kind == NULL)
		{
			char	   *body = unfenced(text.data ? text.data : "");
			struct json_object *value;
			const char *bad;

			mn_buf_free(&text);
			if (body == NULL)
			{
				mn_map_item_fail(it, "llm_error", "out of memory");
				break;
			}
			if (schema == NULL)
			{
				mn_buf		js = {0};

				mn_buf_put_jstr(&js, body, strlen(body));
				free(body);
				free(it->error);
				it->error = NULL;
				it->error_kind = NULL;
				it->success = !js.oom;
				it->output = js.data;
				break;
			}
			if ((bad = mn_map_parse_json(body, &value)) != NULL)
			{
				snprintf(why, sizeof(why), "the reply is not JSON (%s)", bad);
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
			free(body);
			if (it->success)
				break;
		}
		else
		{
			mn_buf_free(&text);
			mn_map_item_fail(it, kind, "%s", why);
		}
	}
done:
	free(prompt);
	json_object_put(item);
	json_object_put(schema);
}
