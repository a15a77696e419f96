/*
 * settings.c
 *		A turn's settings: the provider, its endpoint and key, the model and
 *		the context budget, from the turn's options, then the session, then
 *		the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, *_BASE_URL),
 *		then the seed's defaults.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chat/chat.h"

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/*
 * The options a turn would otherwise refuse only after it wrote the user
 * turn and the assistant row (the request body is made after that commit):
 * checked first, so that a refusal writes nothing.
 */
static int
check_options(mnemo_store *st, const mnemo_turn_options *o, const char *model)
{
	char	   *why = NULL;
	int			rc;

	if ((rc = mn_request_check_options(model, o->tools, &why)) != MNEMO_OK)
	{
		rc = rc == MNEMO_ERR_NOMEM ? mn_fail(st, rc, "out of memory")
			: mn_fail(st, rc, "%s", why ? why : "bad options");
		free(why);
		return rc;
	}
	/* 0 takes the default; a negative value is a mistake, not a default */
	const struct
	{
		const char *name;
		int			value;
	}			counts[] = {
		{"context_limit", o->context_limit},
		{"max_output_tokens", o->max_output_tokens},
		{"compaction_output_budget", o->compaction_output_budget},
		{"connect_timeout_ms", o->connect_timeout_ms},
		{"idle_timeout_ms", o->idle_timeout_ms},
		{"doom_loop_threshold", o->doom_loop_threshold},
	};

	for (size_t i = 0; i < mn_lengthof(counts); i++)
		if (counts[i].value < 0)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "%s is %d: it must not be negative (0: its default)",
						   counts[i].name, counts[i].value);
	if (!(o->soft_threshold >= 0 && o->soft_threshold <= 1))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "soft_threshold is a fraction of the budget, 0 to 1 (0: 0.6)");
	if (o->n_prices > 0 && o->prices == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "n_prices is %zu but prices is NULL",
					   o->n_prices);
	for (size_t i = 0; i < o->n_prices; i++)
	{
		const mnemo_price *p = &o->prices[i];

		if (!(p->input >= 0 && p->output >= 0 && p->cache_read >= 0 && p->cache_write >= 0 &&
			  isfinite(p->input + p->output + p->cache_read + p->cache_write)))
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
						   "price %zu: each price must be a finite number >= 0", i);
	}
	return MNEMO_OK;
}

/*
 * The endpoint and key, before either reaches libcurl: a key is one header
 * line, so a CR or LF in it would add headers of its own (and no key holds
 * a control character); a URL of another protocol (file://) would have
 * libcurl read a file whose text then comes back as the provider's error.
 * Neither is echoed: both may hold secrets.
 */
static int
check_endpoint(mnemo_store *st, const char *base, const char *key)
{
	for (const unsigned char *p = (const unsigned char *) key; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
						   "the API key holds a control character (a line break?)");
	if (strncasecmp(base, "http://", 7) != 0 && strncasecmp(base, "https://", 8) != 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "the base URL must be an http:// or https:// URL");
	return MNEMO_OK;
}

int
mn_turn_settings(mnemo_store *st, const mnemo_turn_options *o, const mnemo_session *s, turn_cfg *c)
{
	const char *name = o->provider;
	const char *base;
	const char *model;
	size_t		n;
	int			sys;
	int			rc;

	if (name == NULL && (strcmp(s->provider_id, "openai") == 0 ||
						 strcmp(s->provider_id, "anthropic") == 0))
		name = s->provider_id;
	if (name == NULL)
		name = env("OPENAI_API_KEY") ? "openai" : env("ANTHROPIC_API_KEY") ? "anthropic" : NULL;
	if (name == NULL)
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER,
					   "no provider: set one in the options or the session, or OPENAI_API_KEY or ANTHROPIC_API_KEY");
	if (strcmp(name, "openai") == 0)
	{
		c->provider = MN_PROVIDER_OPENAI;
		c->provider_name = "openai";
		c->api_key = o->api_key ? o->api_key : env("OPENAI_API_KEY");
		base = o->base_url ? o->base_url : env("OPENAI_BASE_URL");
		if (base == NULL)
			base = "https://api.openai.com/v1";
	}
	else if (strcmp(name, "anthropic") == 0)
	{
		c->provider = MN_PROVIDER_ANTHROPIC;
		c->provider_name = "anthropic";
		c->api_key = o->api_key ? o->api_key : env("ANTHROPIC_API_KEY");
		base = o->base_url ? o->base_url : env("ANTHROPIC_BASE_URL");
		if (base == NULL)
			base = "https://api.anthropic.com";
	}
	else
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER, "unknown provider \"%s\" (openai or anthropic)", name);
	/* the public APIs need a key; a base URL of one's own (a local server)
	 * may do without, and then no key header is sent */
	if ((c->api_key == NULL || *c->api_key == '\0') &&
		(strcmp(base, "https://api.openai.com/v1") == 0 || strcmp(base, "https://api.anthropic.com") == 0))
		return mn_fail(st, MNEMO_ERR_NO_PROVIDER, "no API key for %s: set %s or the options' api_key",
					   c->provider_name,
					   c->provider == MN_PROVIDER_OPENAI ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
	if (c->api_key == NULL)
		c->api_key = "";
	if ((rc = check_endpoint(st, base, c->api_key)) != MNEMO_OK)
		return rc;
	model = o->model ? o->model : s->model_id;
	if (model == NULL || *model == '\0')
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "no model: set the options' model or the session's model_id");
	if ((rc = check_options(st, o, model)) != MNEMO_OK)
		return rc;

	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	if ((c->url = malloc(n + 32)) == NULL || (c->model = strdup(model)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	memcpy(c->url, base, n);
	strcpy(c->url + n, c->provider == MN_PROVIDER_OPENAI ? "/chat/completions" : "/v1/messages");

	c->context_limit = o->context_limit > 0 ? o->context_limit : 128000;
	c->max_output = o->max_output_tokens > 0 ? o->max_output_tokens : 4096;
	c->compaction_budget = o->compaction_output_budget > 0 ? o->compaction_output_budget : 4000;
	c->soft = o->soft_threshold > 0 ? o->soft_threshold : 0.6;
	c->connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	c->idle_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : 60000;
	c->retries = o->max_retries > 0 ? o->max_retries : o->max_retries < 0 ? 0 : 3;
	c->doom = o->doom_loop_threshold > 0 ? o->doom_loop_threshold : 3;
	sys = mnemo_estimate_tokens(s->system_prompt) + mnemo_estimate_tokens(o->tools);
	/* the recall tools, when always offered (chat/recall.c) */
	if (o->recall > 0)
		sys += mnemo_estimate_tokens(mn_recall_tools);
	/* the seed's budget: usable = limit - output - compaction; minus what
	 * every request carries besides the context: the system prompt, the
	 * tools */
	c->available = c->context_limit - c->max_output - c->compaction_budget - sys;
	if (c->available <= 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "no room for context: context_limit %d - max_output_tokens %d - compaction_output_budget %d - system prompt and tools %d tokens",
					   c->context_limit, c->max_output, c->compaction_budget, sys);
	return MNEMO_OK;
}
