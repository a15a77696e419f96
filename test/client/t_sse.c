/*
 * t_sse.c
 *		The server-sent events parser (client/src/stream/sse.c) against the WHATWG
 *		event-stream rules, in every chunking.
 *
 * No database: the parser is pure.  Each case is a byte stream and the
 * events it must dispatch, written as text (one line per event: its type,
 * the last event ID and the data, escaped); every case is decoded whole,
 * one byte at a time, split in two at every byte, and in random chunkings
 * from a fixed seed, and must give the same events each time.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../fuzz/streams.h"

typedef struct events
{
	rec			r;
	int			n;
	int			stop_at;		/* return 7 from that event (1-based) */
} events;

static int
on_event(void *arg, const mn_sse_event *ev)
{
	events	   *e = arg;

	e->n++;
	rec_printf(&e->r, "%s", "");
	rec_esc(&e->r, ev->type, ev->type_len);
	rec_put(&e->r, " id=", 4);
	rec_esc(&e->r, ev->id, strlen(ev->id));
	rec_put(&e->r, " ", 1);
	rec_esc(&e->r, ev->data, ev->len);
	rec_put(&e->r, "\n", 1);
	if (ev->data[ev->len] != '\0' || ev->type[ev->type_len] != '\0')
		rec_printf(&e->r, "BUG: not NUL-terminated\n");
	return e->stop_at > 0 && e->n == e->stop_at ? 7 : 0;
}

/* Parse bytes in the chunks ending at cuts[]; the events as text, then
 * "rc=<last feed's result> pending=<0|1>". */
static char *
parse_cuts(const char *bytes, size_t len, const size_t *cuts, size_t ncuts,
		   size_t max_event, int stop_at)
{
	events		e = {0};
	mn_sse	   *p = mn_sse_new(max_event, on_event, &e);
	size_t		at = 0;
	int			rc = 0;

	if (p == NULL)
		bail_out("mn_sse_new failed");
	e.stop_at = stop_at;
	rec_put(&e.r, "", 0);
	for (size_t i = 0; i <= ncuts; i++)
	{
		size_t		end = i < ncuts ? cuts[i] : len;

		rc = mn_sse_feed(p, bytes + at, end - at);
		at = end;
	}
	rec_printf(&e.r, "rc=%d pending=%d\n", rc, mn_sse_pending(p) ? 1 : 0);
	mn_sse_free(p);
	return e.r.p;
}

static char *
parse(const char *bytes, size_t len)
{
	return parse_cuts(bytes, len, NULL, 0, 0, 0);
}

/* Every chunking gives want: NULL, or what did not. */
static const char *
all_chunkings(const char *bytes, size_t len, const char *want, size_t *tried)
{
	static char why[128];
	size_t	   *cuts = malloc((len + 1) * sizeof(size_t));
	size_t		n;
	uint32_t	seed = 20250101;
	char	   *got;
	const char *bad = NULL;

	if (cuts == NULL)
		bail_out("out of memory");
	*tried = 0;
	for (n = 0; n + 1 < len; n++)
		cuts[n] = n + 1;
	got = parse_cuts(bytes, len, cuts, n, 0, 0);
	(*tried)++;
	if (strcmp(got, want) != 0)
		bad = "one byte at a time";
	free(got);
	for (size_t k = 0; k <= len && bad == NULL; k++)
	{
		cuts[0] = k;
		got = parse_cuts(bytes, len, cuts, 1, 0, 0);
		(*tried)++;
		if (strcmp(got, want) != 0)
		{
			snprintf(why, sizeof(why), "split in two at byte %zu", k);
			bad = why;
		}
		free(got);
	}
	for (int i = 0; i < 200 && bad == NULL; i++)
	{
		size_t		at = 0;
		uint32_t	maxlen = 1 + lcg_next(&seed) % 16;

		n = 0;
		while (at < len)
		{
			at += 1 + lcg_next(&seed) % maxlen;
			if (at < len)
				cuts[n++] = at;
		}
		got = parse_cuts(bytes, len, cuts, n, 0, 0);
		(*tried)++;
		if (strcmp(got, want) != 0)
		{
			snprintf(why, sizeof(why), "random chunking %d", i);
			bad = why;
		}
		free(got);
	}
	free(cuts);
	return bad;
}

typedef struct scase
{
	const char *what;
	const char *bytes;
	size_t		len;			/* 0: strlen(bytes) */
	const char *want;
} scase;

#define M "\"message\" id=\"\" "

static const scase cases[] = {
	{"one data line, then a blank line, dispatches a message event",
	 "data: hello\n\n", 0, M "\"hello\"\nrc=0 pending=0\n"},
	{"several data lines are joined with LF, without a final LF",
	 "data: a\ndata: b\ndata: c\n\n", 0, M "\"a\\nb\\nc\"\nrc=0 pending=0\n"},
	{"one optional space after the colon is removed, only one",
	 "data:a\n\ndata:  b\n\n", 0, M "\"a\"\n" M "\" b\"\nrc=0 pending=0\n"},
	{"a line with no colon is a field with an empty value: bare data lines",
	 "data\n\ndata\ndata\n\n", 0, M "\"\"\n" M "\"\\n\"\nrc=0 pending=0\n"},
	{"a field name is the whole text before the colon: \"data \" is unknown",
	 "data : x\n\nDATA: y\n\n", 0, "rc=0 pending=0\n"},
	{"colons after the first belong to the value",
	 "data: {\"a\":\"b:c\"}\n\n", 0, M "\"{\\\"a\\\":\\\"b:c\\\"}\"\nrc=0 pending=0\n"},
	{"comments (keep-alives) are ignored, also between data lines",
	 ": ping\n\n:\n\ndata: a\n: keep-alive\ndata: b\n\n", 0,
	 M "\"a\\nb\"\nrc=0 pending=0\n"},
	{"event sets the type, which resets after the dispatch",
	 "event: message_start\ndata: 1\n\ndata: 2\n\n", 0,
	 "\"message_start\" id=\"\" \"1\"\n" M "\"2\"\nrc=0 pending=0\n"},
	{"an empty event field means the default type",
	 "event:\ndata: x\n\n", 0, M "\"x\"\nrc=0 pending=0\n"},
	{"an event without data is not dispatched, and its type is forgotten",
	 "event: ping\n\ndata: x\n\n", 0, M "\"x\"\nrc=0 pending=0\n"},
	{"id sets the last event ID, which stays for the next events",
	 "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", 0,
	 "\"message\" id=\"7\" \"a\"\n\"message\" id=\"7\" \"b\"\n" M "\"c\"\nrc=0 pending=0\n"},
	{"an id containing NUL is ignored",
	 "id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n", 32,
	 "\"message\" id=\"1\" \"a\"\n\"message\" id=\"1\" \"b\"\nrc=0 pending=0\n"},
	{"an id in an event that is never dispatched still counts",
	 "id: 9\n\ndata: a\n\n", 0, "\"message\" id=\"9\" \"a\"\nrc=0 pending=0\n"},
	{"unknown fields and retry lines are not data",
	 "foo: bar\nretry: 3000\ndata: x\n\n", 0, M "\"x\"\nrc=0 pending=0\n"},
	{"CRLF line ends", "event: e\r\ndata: a\r\ndata: b\r\n\r\n", 0,
	 "\"e\" id=\"\" \"a\\nb\"\nrc=0 pending=0\n"},
	{"lone CR line ends", "event: e\rdata: a\rdata: b\r\r", 0,
	 "\"e\" id=\"\" \"a\\nb\"\nrc=0 pending=0\n"},
	{"mixed line ends: LF, CRLF and CR in one stream",
	 "data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r", 0,
	 M "\"a\\nb\\nc\"\n" M "\"d\"\nrc=0 pending=0\n"},
	{"a CR, then a LF: one line end, not a blank line (no early dispatch)",
	 "data: a\r\ndata: b\r\n\r\n", 0, M "\"a\\nb\"\nrc=0 pending=0\n"},
	{"a UTF-8 BOM at the start of the stream is ignored",
	 "\xEF\xBB\xBF" "data: x\n\n", 0, M "\"x\"\nrc=0 pending=0\n"},
	{"a BOM later is not: it makes the field name unknown",
	 "data: x\n\n\xEF\xBB\xBF" "data: y\n\n", 0, M "\"x\"\nrc=0 pending=0\n"},
	{"the start of a BOM that is not one is kept (as U+FFFD)",
	 "\xEF\xBB" "data: x\n\ndata: y\n\n", 0, M "\"y\"\nrc=0 pending=0\n"},
	{"multi-byte UTF-8 passes through whole",
	 "data: caf\xC3\xA9 \xE2\x98\x95 \xF0\x9F\x98\x80\n\n", 0,
	 M "\"caf\\xc3\\xa9 \\xe2\\x98\\x95 \\xf0\\x9f\\x98\\x80\"\nrc=0 pending=0\n"},
	{"invalid UTF-8 becomes U+FFFD, one per maximal subpart (WHATWG decoder)",
	 "data: a\xFF" "b\xE2\x82" "c\xE0\x80" "d\xED\xA0\x80" "e\xF4\x90\n\n", 0,
	 M "\"a\\xef\\xbf\\xbdb\\xef\\xbf\\xbdc\\xef\\xbf\\xbd\\xef\\xbf\\xbdd"
	 "\\xef\\xbf\\xbd\\xef\\xbf\\xbd\\xef\\xbf\\xbde\\xef\\xbf\\xbd\\xef\\xbf\\xbd\"\n"
	 "rc=0 pending=0\n"},
	{"a UTF-8 sequence cut by the line end is replaced, the line end kept",
	 "data: \xF0\x9F\x98\ndata: ok\n\n", 0,
	 M "\"\\xef\\xbf\\xbd\\nok\"\nrc=0 pending=0\n"},
	{"an event type may hold a NUL: it is kept, with its length (found by fuzz_sse)",
	 "event: a\0b\ndata: x\n\n", 20, "\"a\\x00b\" id=\"\" \"x\"\nrc=0 pending=0\n"},
	{"NUL bytes in data are data", "data: a\0b\n\n", 11,
	 M "\"a\\x00b\"\nrc=0 pending=0\n"},
	{"an event the stream ends inside is not dispatched, and is pending",
	 "data: a\n\ndata: b\n", 0, M "\"a\"\nrc=0 pending=1\n"},
	{"a line the stream ends inside is pending", "data: a\n\ndata: b", 0,
	 M "\"a\"\nrc=0 pending=1\n"},
	{"nothing at all", "", 0, "rc=0 pending=0\n"},
	{"blank lines alone dispatch nothing", "\n\n\r\n\r\r", 0, "rc=0 pending=0\n"},

	/*
	 * The conformance stream WebKit's EventSource tests use
	 * (LayoutTests/http/tests/eventsource/resources/event-stream.php),
	 * assembled as its PHP prints it.
	 */
	{"the WebKit EventSource conformance stream",
	 ": a comment (ignored)\n"
	 "this line will be ignored since there is no field and the line itself is not a field\n"
	 "field: an unknown field that will be ignored\n"
	 ":another commment\n"
	 "\n"
	 "data : this line will be ignored since there is a space after data\n"
	 "\n"
	 "data\n"
	 "data:\n"
	 "data\n"
	 ": dispatch event with two newlines\n"
	 "\n"
	 "data: simple\n"
	 "\n"
	 "data: spanning\n"
	 "data:multiple\n"
	 "data\n"
	 "data: lines\n"
	 "data\n"
	 "\n"
	 "id: 1\n"
	 "data: id is 1\n"
	 "\n"
	 "data: id is still 1\n"
	 "\n"
	 "id\n"
	 "data: no id\n"
	 "\n"
	 "event: open\n"
	 "data: a message event with the name \"open\"\n"
	 "\n"
	 "da"
	 "ta: a message event with the name \"message\"\n"
	 "\n"
	 "data: a line ending with crlf\r\n"
	 "data: a line with a : (colon)\n"
	 "data: a line ending with cr\r"
	 "\n"
	 "retry: 10000\n"
	 ": reconnection time set to 10 seconds\n"
	 "\n"
	 "retry: one thousand\n"
	 ": ignored invalid reconnection time value\n"
	 "\n"
	 "retry\n"
	 ": reset to ua default\n"
	 "\n", 0,
	 M "\"\\n\\n\"\n"
	 M "\"simple\"\n"
	 M "\"spanning\\nmultiple\\n\\nlines\\n\"\n"
	 "\"message\" id=\"1\" \"id is 1\"\n"
	 "\"message\" id=\"1\" \"id is still 1\"\n"
	 M "\"no id\"\n"
	 "\"open\" id=\"\" \"a message event with the name \\\"open\\\"\"\n"
	 M "\"a message event with the name \\\"message\\\"\"\n"
	 M "\"a line ending with crlf\\na line with a : (colon)\\na line ending with cr\"\n"
	 "rc=0 pending=0\n"},
};

static void
test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const scase *c = &cases[i];
		size_t		len = c->len ? c->len : strlen(c->bytes);
		char	   *got = parse(c->bytes, len);
		size_t		tried = 0;
		const char *bad;

		is_str(got, c->want, "%s", c->what);
		free(got);
		bad = all_chunkings(c->bytes, len, c->want, &tried);
		ok(bad == NULL, "... the same in every chunking (%zu tried)%s%s", tried,
		   bad ? ": not " : "", bad ? bad : "");
	}
}

static void
test_retry(void)
{
	static const struct
	{
		const char *bytes;
		int64_t		want;
		const char *what;
	}			r[] = {
		{"data: x\n\n", -1, "no retry field: -1"},
		{"retry: 1500\n\n", 1500, "retry: 1500 sets 1500 ms"},
		{"retry: 1500\nretry: 20\n", 20, "the last retry counts (no blank line needed)"},
		{"retry: 1500\nretry: 1.5\n", 1500, "retry: 1.5 (not all digits) is ignored"},
		{"retry: 1500\nretry: -1\nretry:\nretry\nretry: 12a\n", 1500,
		 "negative, empty, bare and mixed values are ignored"},
		{"retry: 99999999999999999999999\n", INT64_MAX, "a value beyond int64 saturates"},
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
	{
		mn_sse	   *p = mn_sse_new(0, NULL, NULL);

		mn_sse_feed(p, r[i].bytes, strlen(r[i].bytes));
		is_int(mn_sse_retry(p), r[i].want, "%s", r[i].what);
		mn_sse_free(p);
	}
}

static void
test_last_id(void)
{
	mn_sse	   *p = mn_sse_new(0, NULL, NULL);

	is_str(mn_sse_last_id(p), "", "no id yet: the last event ID is \"\"");
	mn_sse_feed(p, "id: a\ndata: 1\n\nid: b\n", strlen("id: a\ndata: 1\n\nid: b\n"));
	is_str(mn_sse_last_id(p), "a", "the last event ID is the one of the last dispatch, not a pending id");
	mn_sse_feed(p, "\n", 1);
	is_str(mn_sse_last_id(p), "b", "a blank line makes the pending id the last event ID");
	mn_sse_free(p);
}

/* A hostile server cannot make the parser hold more than max_event. */
static void
test_limits(void)
{
	char	   *big;
	char	   *got;
	size_t		n = 5000;

	big = malloc(n + 32);
	if (big == NULL)
		bail_out("out of memory");

	/* a data line of 5000 bytes against a limit of 1000 */
	memcpy(big, "data: ", 6);
	memset(big + 6, 'x', n);
	memcpy(big + 6 + n, "\n\n", 2);
	got = parse_cuts(big, n + 8, NULL, 0, 1000, 0);
	ok(strncmp(got, "rc=-1 ", 6) == 0,
	   "a line longer than max_event fails with MN_SSE_TOO_LARGE");
	free(got);
	{
		size_t		cuts[3] = {100, 700, 1500};
		events		e = {0};
		mn_sse	   *p = mn_sse_new(1000, on_event, &e);
		int			rc[4];

		for (int i = 0; i < 4; i++)
			rc[i] = mn_sse_feed(p, big + (i ? cuts[i - 1] : 0),
								(i < 3 ? cuts[i] : n + 8) - (i ? cuts[i - 1] : 0));
		ok(rc[0] == 0 && rc[1] == 0 && rc[2] == MN_SSE_TOO_LARGE && e.n == 0,
		   "... also in pieces: it fails as the unfinished line passes the limit, before its end arrives");
		is_int(rc[3], MN_SSE_TOO_LARGE, "... and stays failed");
		mn_sse_free(p);
		free(e.r.p);
	}

	/* many short data lines adding up */
	{
		size_t		len = 0;
		char	   *many = malloc(200 * 12 + 4);

		if (many == NULL)
			bail_out("out of memory");
		for (int i = 0; i < 200; i++)
		{
			memcpy(many + len, "data: 12345\n", 12);
			len += 12;
		}
		many[len++] = '\n';
		got = parse_cuts(many, len, NULL, 0, 1000, 0);
		ok(strncmp(got, "rc=-1 ", 6) == 0, "data lines adding up past max_event fail too");
		free(got);
		got = parse_cuts(many, len, NULL, 0, 4096, 0);
		ok(strncmp(got, M, strlen(M)) == 0 && strstr(got, "rc=0 pending=0\n") != NULL,
		   "the same event under a larger limit is dispatched");
		free(got);
		free(many);
	}

	/* a comment line of any length costs nothing */
	big[0] = ':';
	memset(big + 1, 'c', n + 5);
	memcpy(big + n + 6, "\ndata: ok\n\n", 11);
	{
		size_t		cuts[3] = {10, 2000, 4500};

		got = parse_cuts(big, n + 17, cuts, 3, 1000, 0);
		is_str(got, M "\"ok\"\nrc=0 pending=0\n",
			   "a keep-alive comment longer than max_event is skipped, not buffered");
		free(got);
	}

	/* the error is sticky */
	{
		mn_sse	   *p = mn_sse_new(16, NULL, NULL);

		is_int(mn_sse_feed(p, "data: 0123456789abcdef\n", 23), MN_SSE_TOO_LARGE,
			   "max_event 16: a 17-byte value fails");
		is_int(mn_sse_feed(p, "data: x\n\n", 9), MN_SSE_TOO_LARGE,
			   "a failed parser stays failed");
		mn_sse_free(p);
	}
	free(big);
}

static void
test_stop(void)
{
	const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
	char	   *got = parse_cuts(s, strlen(s), NULL, 0, 0, 2);

	is_str(got, M "\"1\"\n" M "\"2\"\nrc=7 pending=0\n",
		   "a callback's non-zero return stops the parser: feed returns it, later events are not dispatched");
	free(got);
	{
		size_t		cuts[1] = {9};

		got = parse_cuts(s, strlen(s), cuts, 1, 0, 1);
		is_str(got, M "\"1\"\nrc=7 pending=0\n", "... and later feeds return it again");
		free(got);
	}
}

int
main(void)
{
	test_cases();
	test_retry();
	test_last_id();
	test_limits();
	test_stop();
	return tap_done();
}
