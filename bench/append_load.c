/*
 * append_load.c
 *		bench/append's workload: a user text of about 200 bytes and an
 *		assistant text of about 800 per turn, from a seeded generator, so
 *		that both sides store the same content; in the tools mix every third
 *		turn also has a tool call and a result of about 4 KB.  Encoded for
 *		both sides before any timing: mnemo's append_messages arrays, the
 *		plain side's row contents and COPY text.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append_load.h"
#include "common.h"

typedef struct Turn
{
	char	   *user;
	char	   *assistant;
	char	   *tool_input;		/* JSON object, or NULL: no tool this turn */
	char	   *tool_result;
	char		call_id[32];
} Turn;

static const char *const words[] = {
	"the", "parser", "keeps", "token", "of", "line", "when", "a", "comment",
	"ends", "buffer", "so", "next", "statement", "starts", "late", "fix",
	"is", "to", "reset", "lookahead", "before", "returning", "and", "add",
	"test", "with", "trailing", "input", "checked", "other", "callers",
	"none", "depend", "on", "stale", "state", "apply", "patch", "run",
	"suite", "file", "function", "returns", "error", "value", "index",
	"session", "message", "context", "summary", "tool", "output", "query",
	"table", "row", "commit", "lock", "page", "cache", "plan", "result",
	"build", "deploy"
};

static uint64_t
next_rand(uint64_t *s)
{
	uint64_t	x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Words until about len bytes; newline every ~12 words when lines is set. */
static char *
gen_text(uint64_t *rng, size_t len, bool lines)
{
	char	   *buf = malloc(len + 32);
	size_t		n = 0;
	int			w = 0;

	if (!buf)
		die("out of memory");
	while (n < len)
	{
		const char *word = words[next_rand(rng) % (sizeof(words) / sizeof(words[0]))];
		size_t		wl = strlen(word);

		memcpy(buf + n, word, wl);
		n += wl;
		buf[n++] = (lines && ++w % 12 == 0) ? '\n' : ' ';
	}
	buf[n - 1] = '.';
	buf[n] = '\0';
	return buf;
}

/* Turn number i of a session seeded with seed. */
static void
gen_turn(Turn *t, uint64_t seed, int i, bool tools)
{
	uint64_t	rng = seed * 0x9E3779B97F4A7C15ULL + (uint64_t) i * 0xBF58476D1CE4E5B9ULL + 1;

	t->user = gen_text(&rng, 200, false);
	t->assistant = gen_text(&rng, 800, false);
	t->tool_input = NULL;
	t->tool_result = NULL;
	if (tools && i % 3 == 2)
	{
		char	   *pattern = gen_text(&rng, 16, false);

		t->tool_input = malloc(128);
		if (!t->tool_input)
			die("out of memory");
		snprintf(t->tool_input, 128, "{\"path\": \"src/file_%d.c\", \"pattern\": \"%s\"}", i, pattern);
		free(pattern);
		t->tool_result = gen_text(&rng, 4000, true);
		snprintf(t->call_id, sizeof(t->call_id), "call_%d", i);
	}
}

static void
free_turn(Turn *t)
{
	free(t->user);
	free(t->assistant);
	free(t->tool_input);
	free(t->tool_result);
}

/* Growable string for the JSON and COPY bodies. */
typedef struct Str
{
	char	   *p;
	size_t		len;
	size_t		cap;
} Str;

static void
str_add(Str *s, const char *src, size_t n)
{
	if (s->len + n + 1 > s->cap)
	{
		s->cap = (s->len + n + 1) * 2;
		s->p = realloc(s->p, s->cap);
		if (!s->p)
			die("out of memory");
	}
	memcpy(s->p + s->len, src, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void
str_cat(Str *s, const char *src)
{
	str_add(s, src, strlen(src));
}

/* Generated text holds only words, spaces, '.' and '\n'. */
static void
str_json_text(Str *s, const char *text)
{
	const char *p;

	str_cat(s, "\"");
	for (p = text; *p; p++)
		str_add(s, *p == '\n' ? "\\n" : p, *p == '\n' ? 2 : 1);
	str_cat(s, "\"");
}

/* mnemo: the turn as append_messages' jsonb array. */
static void
mnemo_batch_add(Str *s, const Turn *t)
{
	str_cat(s, s->len == 0 ? "[" : ",");
	str_cat(s, "{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": ");
	str_json_text(s, t->user);
	str_cat(s, "}]}, {\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"text\": ");
	str_json_text(s, t->assistant);
	str_cat(s, "}");
	if (t->tool_input)
	{
		str_cat(s, ", {\"type\": \"tool\", \"tool_name\": \"grep\", \"tool_call_id\": \"");
		str_cat(s, t->call_id);
		str_cat(s, "\", \"tool_state\": \"completed\", \"input\": ");
		str_cat(s, t->tool_input);
		str_cat(s, ", \"output\": ");
		str_json_text(s, t->tool_result);
		str_cat(s, "}");
	}
	str_cat(s, "]}");
}

/* plain: the assistant row's content, the tool call appended as its JSON. */
static char *
plain_assistant(const Turn *t)
{
	Str			s = {0};

	str_cat(&s, t->assistant);
	if (t->tool_input)
	{
		str_cat(&s, "\n{\"name\": \"grep\", \"id\": \"");
		str_cat(&s, t->call_id);
		str_cat(&s, "\", \"input\": ");
		str_cat(&s, t->tool_input);
		str_cat(&s, "}");
	}
	return s.p;
}

Load *
make_load(int n, uint64_t seed, bool tools)
{
	Load	   *l = calloc(1, sizeof(Load));
	int			i;

	if (!l || !(l->json = calloc(n, sizeof(char *))) || !(l->user = calloc(n, sizeof(char *))) ||
		!(l->assistant = calloc(n, sizeof(char *))) || !(l->tool = calloc(n, sizeof(char *))))
		die("out of memory");
	l->n = n;
	for (i = 0; i < n; i++)
	{
		Turn		t;
		Str			s = {0};

		gen_turn(&t, seed, i, tools);
		mnemo_batch_add(&s, &t);
		str_cat(&s, "]");
		l->json[i] = s.p;
		l->user[i] = strdup(t.user);
		l->assistant[i] = plain_assistant(&t);
		l->tool[i] = t.tool_result ? strdup(t.tool_result) : NULL;
		free_turn(&t);
	}
	return l;
}

void
free_load(Load *l)
{
	int			i;

	for (i = 0; i < l->n; i++)
	{
		free(l->json[i]);
		free(l->user[i]);
		free(l->assistant[i]);
		free(l->tool[i]);
	}
	free(l->json);
	free(l->user);
	free(l->assistant);
	free(l->tool);
	free(l);
}


static void
copy_row(Str *s, int seq, const char *role, const char *content)
{
	char		head[32];
	const char *p;

	snprintf(head, sizeof(head), "\t%d\t%s\t", seq, role);
	str_cat(s, "SESSION");		/* replaced by the run's session id */
	str_cat(s, head);
	for (p = content; *p; p++)
		str_add(s, *p == '\n' ? "\\n" : p, *p == '\n' ? 2 : 1);
	str_cat(s, "\n");
}

Batches *
make_batches(int nbatches, uint64_t seed)
{
	Batches    *b = calloc(1, sizeof(Batches));
	int			i,
				k,
				seq = 0;

	if (!b || !(b->json = calloc(nbatches, sizeof(char *))) ||
		!(b->copy = calloc(nbatches, sizeof(char *))))
		die("out of memory");
	b->n = nbatches;
	for (i = 0; i < nbatches; i++)
	{
		Str			json = {0},
					copy = {0};

		for (k = 0; k < BATCH_TURNS; k++)
		{
			Turn		t;

			gen_turn(&t, seed, i * BATCH_TURNS + k, false);
			mnemo_batch_add(&json, &t);
			copy_row(&copy, ++seq, "user", t.user);
			copy_row(&copy, ++seq, "assistant", t.assistant);
			free_turn(&t);
		}
		str_cat(&json, "]");
		b->json[i] = json.p;
		b->copy[i] = copy.p;
	}
	return b;
}

void
free_batches(Batches *b)
{
	int			i;

	for (i = 0; i < b->n; i++)
	{
		free(b->json[i]);
		free(b->copy[i]);
	}
	free(b->json);
	free(b->copy);
	free(b);
}

/* The COPY data of one batch with this run's session id in each row. */
char *
copy_for_session(const char *data, const char *session)
{
	Str			s = {0};
	const char *p = data,
			   *q;

	while ((q = strstr(p, "SESSION")) != NULL)
	{
		str_add(&s, p, q - p);
		str_cat(&s, session);
		p = q + 7;
	}
	str_cat(&s, p);
	return s.p;
}
