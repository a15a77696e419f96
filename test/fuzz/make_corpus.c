/*
 * make_corpus.c
 *		Write the seed corpus of the fuzz targets from the streams of
 *		streams.h: each provider's streams (and their CRLF and lone-CR
 *		versions) for fuzz_openai / fuzz_anthropic, all of them and a few
 *		framing cases for fuzz_sse.  The corpus is committed; run this after
 *		changing streams.h:
 *
 *		cc -std=c11 -Iclient/include -o /tmp/make_corpus test/fuzz/make_corpus.c \
 *			client/libmnemo.a -L$(pg_config --libdir) -lpq $(pkg-config --libs json-c)
 *		/tmp/make_corpus test/fuzz/corpus
 *
 * Inputs a fuzz run found crashing are kept beside them as crash-<what>,
 * and the near misses of the text-chunk path (text_chunk.c) as
 * text-chunk-shapes, written by hand; this program leaves them alone.
 */
#include <stdio.h>

#include "streams.h"

static int
put(const char *dir, const char *target, const char *name, const char *suffix,
	const char *bytes, size_t len)
{
	char		path[512];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/%s%s", dir, target, name, suffix);
	if ((f = fopen(path, "wb")) == NULL || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
	{
		perror(path);
		return 1;
	}
	return 0;
}

static const struct
{
	const char *name;
	const char *bytes;
}			sse_only[] = {
	{"sse_fields", "event: e\r\nid: 1\r\nretry: 3000\r\ndata: a\rdata:b\n\n: c\n\ndata\n\n"},
	{"sse_bom", "\xEF\xBB\xBF" "data: x\n\n\xEF\xBB\xBF" "data: y\n\n"},
	{"sse_utf8", "data: caf\xC3\xA9 \xFF \xE2\x82 \xF0\x9F\x98\x80\n\n"},
	{"sse_unfinished", "data: a\n\ndata: b"},
};

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "test/fuzz/corpus";
	int			bad = 0;

	for (size_t i = 0; i < N_FIXTURES; i++)
	{
		const fixture *f = &fixtures[i];
		const char *target = f->provider == MN_PROVIDER_OPENAI ? "fuzz_openai" : "fuzz_anthropic";
		size_t		len;
		char	   *v;

		bad |= put(dir, target, f->name, "", f->bytes, f->len);
		bad |= put(dir, "fuzz_sse", f->name, "", f->bytes, f->len);
		v = with_line_ends(f->bytes, f->len, true, &len);
		bad |= put(dir, target, f->name, ".crlf", v, len);
		free(v);
		v = with_line_ends(f->bytes, f->len, false, &len);
		bad |= put(dir, target, f->name, ".cr", v, len);
		free(v);
	}
	for (size_t i = 0; i < sizeof(sse_only) / sizeof(sse_only[0]); i++)
		bad |= put(dir, "fuzz_sse", sse_only[i].name, "", sse_only[i].bytes,
				   strlen(sse_only[i].bytes));
	return bad;
}
