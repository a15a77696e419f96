/*
 * fuzz_common.h
 *		What the libFuzzer targets share: a differential check (one input
 *		decoded whole, one byte at a time and in chunks chosen from its own
 *		hash must give the same result) and the invariants every delta
 *		stream keeps whatever the bytes.  A broken rule calls abort(), which
 *		libFuzzer reports as a crash with the input that caused it.
 *
 * Limits are small, so that the fuzzer reaches the too-large paths with
 * inputs of a few kilobytes.
 */
#ifndef MNEMO_FUZZ_COMMON_H
#define MNEMO_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streams.h"

#define FUZZ_MAX_EVENT		2048
#define FUZZ_MAX_TOOL_INPUT 4096
#define FUZZ_MAX_TOOL_CALLS 8

static MAYBE_UNUSED void
fuzz_fail(const char *why)
{
	fprintf(stderr, "fuzz invariant broken: %s\n", why);
	abort();
}

/* Whether s[0..n) is well-formed UTF-8 (what the stream promises). */
static MAYBE_UNUSED bool
fuzz_utf8(const unsigned char *s, size_t n)
{
	size_t		i = 0;

	while (i < n)
	{
		unsigned char c = s[i];
		size_t		need;
		unsigned char lo = 0x80,
					hi = 0xBF;

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
			lo = c == 0xE0 ? 0xA0 : 0x80;
			hi = c == 0xED ? 0x9F : 0xBF;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			need = 3;
			lo = c == 0xF0 ? 0x90 : 0x80;
			hi = c == 0xF4 ? 0x8F : 0xBF;
		}
		else
			return false;
		if (n - i <= need || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (size_t k = 2; k <= need; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return false;
		i += need + 1;
	}
	return true;
}

/* ---- the delta stream's invariants ---- */

typedef struct checker
{
	rec			r;				/* the transcript, for the comparison */
	bool		started;
	bool		over;			/* ERROR or DONE seen */
	bool		finished;
	int			ndeltas;
	unsigned char tool_state[FUZZ_MAX_TOOL_CALLS + 1];	/* 0 none, 1 open, 2 ended */
} checker;

static MAYBE_UNUSED void
check_text(const char *t, size_t len)
{
	if (t == NULL)
		fuzz_fail("delta text is NULL");
	if (t[len] != '\0')
		fuzz_fail("delta text is not NUL-terminated at its length");
	if (!fuzz_utf8((const unsigned char *) t, len))
		fuzz_fail("delta text is not valid UTF-8");
}

static MAYBE_UNUSED int
check_delta(void *arg, const mn_delta *d)
{
	checker    *c = arg;

	if (c->over)
		fuzz_fail("a delta after ERROR or DONE");
	if (d->kind == MN_DELTA_START && (c->started || c->ndeltas > 0))
		fuzz_fail("START twice, or not first");
	c->ndeltas++;
	switch (d->kind)
	{
		case MN_DELTA_START:
			c->started = true;
			if ((d->id && !fuzz_utf8((const unsigned char *) d->id, strlen(d->id))) ||
				(d->model && !fuzz_utf8((const unsigned char *) d->model, strlen(d->model))))
				fuzz_fail("START id or model is not UTF-8");
			break;
		case MN_DELTA_TEXT:
		case MN_DELTA_REASONING:
		case MN_DELTA_REASONING_SIGNATURE:
		case MN_DELTA_REFUSAL:
			if (d->len == 0)
				fuzz_fail("an empty text delta");
			check_text(d->text, d->len);
			break;
		case MN_DELTA_TOOL_START:
		case MN_DELTA_TOOL_INPUT:
		case MN_DELTA_TOOL_END:
			if (d->tool < 0 || d->tool >= FUZZ_MAX_TOOL_CALLS)
				fuzz_fail("tool number out of range (the limit was not kept)");
			if (d->id == NULL || d->id[0] == '\0' || d->name == NULL)
				fuzz_fail("a tool delta without id or name");
			if (d->kind == MN_DELTA_TOOL_START)
			{
				if (c->tool_state[d->tool] != 0)
					fuzz_fail("TOOL_START twice for one call");
				if (d->tool > 0 && c->tool_state[d->tool - 1] == 0)
					fuzz_fail("tool calls not numbered in order");
				c->tool_state[d->tool] = 1;
			}
			else
			{
				if (c->tool_state[d->tool] != 1)
					fuzz_fail("TOOL_INPUT or TOOL_END for a call not open");
				check_text(d->text, d->len);
				if (d->kind == MN_DELTA_TOOL_INPUT && d->len == 0)
					fuzz_fail("an empty TOOL_INPUT");
				if (d->kind == MN_DELTA_TOOL_INPUT && d->len > FUZZ_MAX_TOOL_INPUT)
					fuzz_fail("a tool input over its limit");
				if (d->kind == MN_DELTA_TOOL_END)
				{
					c->tool_state[d->tool] = 2;
					if (d->input_valid != (d->input != NULL))
						fuzz_fail("input_valid and input disagree");
					if (d->input && !json_object_is_type(d->input, json_type_object))
						fuzz_fail("a valid input that is not an object");
				}
			}
			break;
		case MN_DELTA_USAGE:
			if (d->usage == NULL || d->usage->input < 0 || d->usage->output < 0 ||
				d->usage->cache_read < 0 || d->usage->cache_write < 0 || d->usage->reasoning < 0)
				fuzz_fail("usage missing or negative");
			break;
		case MN_DELTA_FINISH:
			if (c->finished)
				fuzz_fail("FINISH twice");
			if (d->finish == MN_FINISH_NONE || d->raw_finish == NULL)
				fuzz_fail("FINISH without a reason");
			c->finished = true;
			break;
		case MN_DELTA_ERROR:
			if (d->error == NULL || d->error->message == NULL || d->error->kind == MN_STREAM_ERR_NONE)
				fuzz_fail("ERROR without its error");
			c->over = true;
			break;
		case MN_DELTA_DONE:
			if (!c->finished)
				fuzz_fail("DONE without a FINISH");
			for (int i = 0; i < FUZZ_MAX_TOOL_CALLS; i++)
				if (c->tool_state[i] == 1)
					fuzz_fail("DONE with a tool call still open");
			c->over = true;
			break;
		default:
			fuzz_fail("unknown delta kind");
	}
	return rec_delta(&c->r, d);
}

static MAYBE_UNUSED uint32_t
fuzz_hash(const uint8_t *data, size_t size)
{
	uint32_t	h = 2166136261u;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	return h;
}

/* Decode data fed in chunks: mode 0 whole, 1 byte by byte, 2 chunks of
 * sizes drawn from seed, 3 whole with every event through json-c (no
 * text-chunk path).  The transcript (malloc'd). */
static MAYBE_UNUSED char *
fuzz_decode(mn_provider provider, const uint8_t *data, size_t size, int mode, uint32_t seed)
{
	mn_stream_limits lim = {FUZZ_MAX_EVENT, FUZZ_MAX_TOOL_INPUT, FUZZ_MAX_TOOL_CALLS, mode == 3};
	checker		c;
	mn_stream  *s;
	size_t		at = 0;
	mn_stream_state st,
				last = MN_STREAM_OPEN;

	memset(&c, 0, sizeof(c));
	s = mn_stream_new(provider, &lim, check_delta, &c);
	if (s == NULL)
		fuzz_fail("mn_stream_new failed");
	rec_put(&c.r, "", 0);
	while (at < size)
	{
		size_t		n = mode == 0 || mode == 3 ? size : mode == 1 ? 1 : 1 + lcg_next(&seed) % 97;

		if (n > size - at)
			n = size - at;
		st = mn_stream_feed(s, (const char *) data + at, n);
		if (last != MN_STREAM_OPEN && st != last)
			fuzz_fail("the state changed after the stream was over");
		last = st;
		at += n;
	}
	st = mn_stream_end(s);
	if (st == MN_STREAM_OPEN)
		fuzz_fail("open after mn_stream_end");
	if ((st == MN_STREAM_FAILED) != (mn_stream_error_of(s) != NULL))
		fuzz_fail("failed state and error disagree");
	if ((st == MN_STREAM_COMPLETE) != c.over && st != MN_STREAM_FAILED)
		fuzz_fail("complete state and DONE disagree");
	if (st == MN_STREAM_STOPPED)
		fuzz_fail("stopped, though the callback never stops");
	rec_printf(&c.r, "state: %s\n", mn_stream_state_name(st));
	mn_stream_free(s);
	return c.r.p;
}

/* The whole check for one input. */
static MAYBE_UNUSED int
fuzz_stream(mn_provider provider, const uint8_t *data, size_t size)
{
	uint32_t	seed = fuzz_hash(data, size);
	char	   *whole = fuzz_decode(provider, data, size, 0, seed);
	char	   *other;

	other = fuzz_decode(provider, data, size, 2, seed);
	if (strcmp(whole, other) != 0)
		fuzz_fail("decoded in chunks, the deltas differ from the whole input's");
	free(other);
	/* the text-chunk path reads what json-c reads */
	other = fuzz_decode(provider, data, size, 3, seed);
	if (strcmp(whole, other) != 0)
		fuzz_fail("decoded with json-c alone, the deltas differ from the text-chunk path's");
	free(other);
	if (size <= 4096)
	{
		other = fuzz_decode(provider, data, size, 1, seed);
		if (strcmp(whole, other) != 0)
			fuzz_fail("decoded byte by byte, the deltas differ from the whole input's");
		free(other);
	}
	free(whole);
	return 0;
}

#endif							/* MNEMO_FUZZ_COMMON_H */
