/*
 * recorder.h
 *		The deltas a provider stream decodes to, as lines of text, for the
 *		streaming tests and the fuzz targets: a recorder, a decoder fed
 *		chosen chunkings, the check that every chunking decodes alike, and
 *		(tap.h included first) the TAP assertions over them.  Included at
 *		the end of streams.h, not on its own: its TAP part looks streams up
 *		in streams.h's fixtures[].
 */
#ifndef MNEMO_TEST_RECORDER_H
#define MNEMO_TEST_RECORDER_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../../client/src/stream/stream.h"

#ifndef MAYBE_UNUSED
#define MAYBE_UNUSED __attribute__((unused))
#endif

/* ========================================================================
 * The recorder: deltas as lines of text
 *
 * One line per delta, text escaped (\n, \", \\, other control and
 * non-ASCII bytes as \xNN), then "state: <state>" at the end.  Two runs
 * that decode the same deltas print the same text, whatever the chunking.
 * ======================================================================== */

typedef struct rec
{
	char	   *p;
	size_t		len;
	size_t		cap;
	int			ndeltas;
	int			stop_at;		/* > 0: return 42 from that delta (1-based) */
} rec;

static MAYBE_UNUSED void
rec_put(rec *r, const char *s, size_t n)
{
	if (r->len + n + 1 > r->cap)
	{
		size_t		cap = r->cap ? r->cap : 1024;

		while (cap < r->len + n + 1)
			cap *= 2;
		r->p = realloc(r->p, cap);
		if (r->p == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(3);
		}
		r->cap = cap;
	}
	memcpy(r->p + r->len, s, n);
	r->len += n;
	r->p[r->len] = '\0';
}

__attribute__((format(printf, 2, 3)))
static MAYBE_UNUSED void
rec_printf(rec *r, const char *fmt,...)
{
	char		tmp[512];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	rec_put(r, tmp, n < (int) sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

static MAYBE_UNUSED void
rec_esc(rec *r, const char *s, size_t n)
{
	rec_put(r, "\"", 1);
	if (s == NULL)
		rec_put(r, "(null)", 6);
	for (size_t i = 0; s != NULL && i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '\n')
			rec_put(r, "\\n", 2);
		else if (c == '"' || c == '\\')
		{
			rec_put(r, "\\", 1);
			rec_put(r, (const char *) &c, 1);
		}
		else if (c < 0x20 || c >= 0x7F)
			rec_printf(r, "\\x%02x", c);
		else
			rec_put(r, (const char *) &c, 1);
	}
	rec_put(r, "\"", 1);
}

static MAYBE_UNUSED int
rec_delta(void *arg, const mn_delta *d)
{
	rec		   *r = arg;

	r->ndeltas++;
	switch (d->kind)
	{
		case MN_DELTA_START:
			rec_printf(r, "START id=%s model=%s\n", d->id ? d->id : "(null)",
					   d->model ? d->model : "(null)");
			break;
		case MN_DELTA_TEXT:
		case MN_DELTA_REASONING:
		case MN_DELTA_REASONING_SIGNATURE:
		case MN_DELTA_REFUSAL:
			rec_printf(r, "%s[%d] ",
					   d->kind == MN_DELTA_TEXT ? "TEXT" :
					   d->kind == MN_DELTA_REASONING ? "REASONING" :
					   d->kind == MN_DELTA_REFUSAL ? "REFUSAL" : "SIGNATURE", d->block);
			rec_esc(r, d->text, d->len);
			rec_put(r, "\n", 1);
			if (d->text == NULL || d->text[d->len] != '\0')
				rec_printf(r, "BUG: text not NUL-terminated\n");
			break;
		case MN_DELTA_TOOL_START:
			rec_printf(r, "TOOL_START #%d index=%lld id=%s name=%s\n", d->tool,
					   (long long) d->provider_index, d->id, d->name);
			break;
		case MN_DELTA_TOOL_INPUT:
			rec_printf(r, "TOOL_INPUT #%d ", d->tool);
			rec_esc(r, d->text, d->len);
			rec_put(r, "\n", 1);
			break;
		case MN_DELTA_TOOL_END:
			rec_printf(r, "TOOL_END #%d id=%s name=%s ", d->tool, d->id, d->name);
			rec_esc(r, d->text, d->len);
			if (d->input_valid)
				rec_printf(r, " valid %s\n",
						   json_object_to_json_string_ext(d->input, JSON_C_TO_STRING_PLAIN));
			else
				rec_printf(r, " invalid%s\n", d->input ? " BUG: input set" : "");
			break;
		case MN_DELTA_USAGE:
			rec_printf(r, "USAGE in=%lld out=%lld cache_read=%lld cache_write=%lld reasoning=%lld\n",
					   (long long) d->usage->input, (long long) d->usage->output,
					   (long long) d->usage->cache_read, (long long) d->usage->cache_write,
					   (long long) d->usage->reasoning);
			break;
		case MN_DELTA_FINISH:
			rec_printf(r, "FINISH %s raw=%s\n", mn_finish_name(d->finish), d->raw_finish);
			break;
		case MN_DELTA_ERROR:
			rec_printf(r, "ERROR kind=%d class=%s type=%s code=%s ",
					   (int) d->error->kind, mn_errclass_name(d->error->errclass),
					   d->error->type ? d->error->type : "(null)",
					   d->error->code ? d->error->code : "(null)");
			rec_esc(r, d->error->message, strlen(d->error->message));
			rec_put(r, "\n", 1);
			break;
		case MN_DELTA_DONE:
			rec_printf(r, "DONE\n");
			break;
	}
	return r->stop_at > 0 && r->ndeltas == r->stop_at ? 42 : 0;
}

/*
 * Decode bytes[0..len) fed in the chunks that end at cuts[0..ncuts) (in
 * increasing order; the last chunk runs to len), then end the stream.
 * Returns the transcript (malloc'd); *state gets the final state.
 */
static MAYBE_UNUSED char *
decode_cuts(mn_provider provider, const mn_stream_limits *limits, const char *bytes,
			size_t len, const size_t *cuts, size_t ncuts, int stop_at,
			mn_stream_state *state)
{
	rec			r = {0};
	mn_stream  *s = mn_stream_new(provider, limits, rec_delta, &r);
	size_t		at = 0;
	mn_stream_state st;

	if (s == NULL)
	{
		fprintf(stderr, "mn_stream_new failed\n");
		exit(3);
	}
	r.stop_at = stop_at;
	rec_put(&r, "", 0);
	for (size_t i = 0; i <= ncuts; i++)
	{
		size_t		end = i < ncuts ? cuts[i] : len;

		mn_stream_feed(s, bytes + at, end - at);
		at = end;
	}
	st = mn_stream_end(s);
	rec_printf(&r, "state: %s\n", mn_stream_state_name(st));
	if (state != NULL)
		*state = st;
	mn_stream_free(s);
	return r.p;
}

static MAYBE_UNUSED char *
decode_whole(mn_provider provider, const char *bytes, size_t len)
{
	return decode_cuts(provider, NULL, bytes, len, NULL, 0, 0, NULL);
}

static MAYBE_UNUSED char *
rec_dup(const char *s)
{
	char	   *d = malloc(strlen(s) + 1);

	if (d == NULL)
		exit(3);
	return strcpy(d, s);
}

/* A small deterministic generator, so that "random" chunkings repeat. */
static MAYBE_UNUSED uint32_t
lcg_next(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed >> 8;
}

/*
 * Check that chunkings of bytes decode to want: byte by byte, every split
 * in two, and nrandom random chunkings from seed.  Returns NULL when all
 * match, else a description of the first that did not (malloc'd); *tried
 * gets the number of chunkings decoded.
 */
static MAYBE_UNUSED char *
check_chunkings(mn_provider provider, const char *bytes, size_t len, const char *want,
				int nrandom, uint32_t seed, size_t *tried)
{
	size_t	   *cuts = malloc((len + 1) * sizeof(size_t));
	char	   *got;
	char		why[160];
	size_t		n = 0;

	if (cuts == NULL)
		exit(3);
#define TRY(desc_fmt, ...) \
	do { \
		got = decode_cuts(provider, NULL, bytes, len, cuts, n, 0, NULL); \
		(*tried)++; \
		if (strcmp(got, want) != 0) \
		{ \
			snprintf(why, sizeof(why), desc_fmt, __VA_ARGS__); \
			free(got); \
			free(cuts); \
			return rec_dup(why); \
		} \
		free(got); \
	} while (0)

	*tried = 0;
	/* one byte at a time */
	for (n = 0; n + 1 < len; n++)
		cuts[n] = n + 1;
	TRY("one byte at a time (%zu chunks)", n + 1);
	/* every split in two */
	for (size_t k = 0; k <= len; k++)
	{
		cuts[0] = k;
		n = 1;
		TRY("split in two at byte %zu", k);
	}
	/* random chunkings, from 1-byte to 64-byte pieces */
	for (int i = 0; i < nrandom; i++)
	{
		size_t		at = 0;
		uint32_t	maxlen = 1 + lcg_next(&seed) % 64;

		n = 0;
		while (at < len)
		{
			at += 1 + lcg_next(&seed) % maxlen;
			if (at < len)
				cuts[n++] = at;
		}
		TRY("random chunking %d (%zu chunks, seed-derived)", i, n + 1);
	}
#undef TRY
	free(cuts);
	return NULL;
}

/* The stream with each LF replaced by CRLF (crlf) or by a lone CR. */
static MAYBE_UNUSED char *
with_line_ends(const char *bytes, size_t len, bool crlf, size_t *outlen)
{
	char	   *out = malloc(len * 2 + 1);
	size_t		o = 0;

	if (out == NULL)
		exit(3);
	for (size_t i = 0; i < len; i++)
	{
		if (bytes[i] == '\n')
		{
			out[o++] = '\r';
			if (crlf)
				out[o++] = '\n';
		}
		else
			out[o++] = bytes[i];
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* ========================================================================
 * For the TAP tests (tap.h included first): a decoded transcript checked
 * whole, in every chunking, and with CRLF and lone-CR line ends
 * ======================================================================== */

#ifdef MNEMO_TAP_H

typedef struct golden
{
	const char *fixture;		/* a name in fixtures[] */
	const char *why;			/* what it shows */
	const char *want;			/* the transcript */
} golden;

static MAYBE_UNUSED void
check_golden(const golden *g, uint32_t seed)
{
	const fixture *f = fixture_named(g->fixture);
	char	   *got;
	char	   *bad;
	size_t		tried = 0;

	if (f == NULL)
		bail_out("no fixture named %s", g->fixture);
	got = decode_whole(f->provider, f->bytes, f->len);
	is_str(got, g->want, "%s: %s", f->name, g->why);
	free(got);
	{
		mn_stream_limits json_only = {.json_only = true};

		got = decode_cuts(f->provider, &json_only, f->bytes, f->len, NULL, 0, 0, NULL);
		is_str(got, g->want, "%s: the same with every event read by json-c", f->name);
		free(got);
	}

	bad = check_chunkings(f->provider, f->bytes, f->len, g->want, 50, seed, &tried);
	ok(bad == NULL, "%s: the same deltas byte by byte, split in two at each of %zu bytes, "
	   "and in 50 random chunkings (%zu decodes)%s%s", f->name, f->len, tried,
	   bad ? "; differs: " : "", bad ? bad : "");
	free(bad);

	for (int crlf = 1; crlf >= 0; crlf--)
	{
		size_t		len;
		char	   *v = with_line_ends(f->bytes, f->len, crlf, &len);

		got = decode_whole(f->provider, v, len);
		bad = strcmp(got, g->want) == 0 ? NULL : rec_dup("decoded whole");
		if (bad == NULL)
			bad = check_chunkings(f->provider, v, len, g->want, 20, seed + 1, &tried);
		ok(bad == NULL, "%s: the same with %s line ends, in every chunking%s%s", f->name,
		   crlf ? "CRLF" : "lone CR", bad ? "; differs: " : "", bad ? bad : "");
		free(bad);
		free(got);
		free(v);
	}
}

/* The plain text chunks of a text reply ("Hel", "lo") take the path
 * without json-c (text_chunk.c), and none does when the stream is
 * json_only; check_golden checks that both paths give the same deltas, the
 * fuzzers the same on any input. */
static MAYBE_UNUSED void
check_text_chunks(const char *fixture_name, size_t want)
{
	const fixture *f = fixture_named(fixture_name);

	if (f == NULL)
		bail_out("no fixture named %s", fixture_name);
	for (int json_only = 0; json_only <= 1; json_only++)
	{
		mn_stream_limits lim = {.json_only = json_only};
		rec			r = {0};
		mn_stream  *s = mn_stream_new(f->provider, &lim, rec_delta, &r);

		if (s == NULL)
			bail_out("mn_stream_new failed");
		mn_stream_feed(s, f->bytes, f->len);
		mn_stream_end(s);
		is_int((int) mn_stream_chunk_count(s), json_only ? 0 : (int) want,
			   "%s%s: %zu text chunks read without json-c", f->name,
			   json_only ? ", json_only" : "", json_only ? (size_t) 0 : want);
		mn_stream_free(s);
		free(r.p);
	}
}

#endif							/* MNEMO_TAP_H */

#endif							/* MNEMO_TEST_RECORDER_H */
