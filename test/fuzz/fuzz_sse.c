/*
 * fuzz_sse.c
 *		libFuzzer target: the server-sent events parser alone.  An input is
 *		a byte stream; parsed whole, byte by byte and in chunks chosen from
 *		its hash it must dispatch the same events, each field NUL-terminated
 *		at its length and valid UTF-8, the data within max_event, the id
 *		free of NUL; and the parser must never crash, leak or hold more than
 *		max_event.
 *
 *	bash test/fuzz/run.sh     builds and runs it on corpus/fuzz_sse/
 */
#include "fuzz_common.h"

#define SSE_MAX_EVENT 1024

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
on_event(void *arg, const mn_sse_event *ev)
{
	rec		   *r = arg;

	if (ev->type == NULL || ev->data == NULL || ev->id == NULL)
		fuzz_fail("an event field is NULL");
	if (ev->type_len == 0 || ev->type[ev->type_len] != '\0')
		fuzz_fail("the event type is empty or not NUL-terminated at its length");
	if (ev->data[ev->len] != '\0')
		fuzz_fail("the data is not NUL-terminated at its length");
	if (ev->len > SSE_MAX_EVENT)
		fuzz_fail("an event larger than max_event was dispatched");
	if (!fuzz_utf8((const unsigned char *) ev->data, ev->len) ||
		!fuzz_utf8((const unsigned char *) ev->type, ev->type_len) ||
		!fuzz_utf8((const unsigned char *) ev->id, strlen(ev->id)))
		fuzz_fail("an event field is not valid UTF-8");
	rec_esc(r, ev->type, ev->type_len);
	rec_esc(r, ev->id, strlen(ev->id));
	rec_esc(r, ev->data, ev->len);
	rec_put(r, "\n", 1);
	return 0;
}

static char *
parse(const uint8_t *data, size_t size, int mode, uint32_t seed)
{
	rec			r = {0};
	mn_sse	   *p = mn_sse_new(SSE_MAX_EVENT, on_event, &r);
	size_t		at = 0;
	int			rc = 0,
				first_error = 0;

	if (p == NULL)
		fuzz_fail("mn_sse_new failed");
	rec_put(&r, "", 0);
	while (at < size)
	{
		size_t		n = mode == 0 ? size : mode == 1 ? 1 : 1 + lcg_next(&seed) % 61;

		if (n > size - at)
			n = size - at;
		rc = mn_sse_feed(p, (const char *) data + at, n);
		if (rc != 0 && rc != MN_SSE_TOO_LARGE)
			fuzz_fail("mn_sse_feed failed otherwise than too large");
		if (first_error != 0 && rc != first_error)
			fuzz_fail("an error did not stick");
		if (rc != 0)
			first_error = rc;
		at += n;
	}
	rec_printf(&r, "rc=%d retry=%lld id=", rc, (long long) mn_sse_retry(p));
	rec_esc(&r, mn_sse_last_id(p), strlen(mn_sse_last_id(p)));
	mn_sse_free(p);
	return r.p;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t	seed = fuzz_hash(data, size);
	char	   *whole = parse(data, size, 0, seed);
	char	   *other = parse(data, size, 2, seed);

	if (strcmp(whole, other) != 0)
		fuzz_fail("parsed in chunks, the events differ from the whole input's");
	free(other);
	if (size <= 4096)
	{
		other = parse(data, size, 1, seed);
		if (strcmp(whole, other) != 0)
			fuzz_fail("parsed byte by byte, the events differ from the whole input's");
		free(other);
	}
	free(whole);
	return 0;
}
